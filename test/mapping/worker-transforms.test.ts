/** @module The worker-pool transform runner on real worker threads: results, failures, limits, replacement, reload, metrics. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HostLogger } from "../../src/host/contract.js";
import { createTransformRunner } from "../../src/mapping/create-transform-runner.js";
import type { TransformRunner, TransformRunnerSettings } from "../../src/mapping/transform-runner.js";
import type { TransformContext, TransformRef } from "../../src/mapping/transform-types.js";
import { createWorkerTransformRunner } from "../../src/mapping/worker-transform-runner.js";
import { type HookMetrics, NO_METRICS, type TransformOutcome } from "../../src/metrics/metrics.js";
import type { LogLine } from "../helpers/test-host.js";

/** Small limits so a stopped transform costs the suite little; what matters is that it is stopped at all. */
const TIMEOUT_MS = 300;
/**
 * The limit of the tests that are not about it: a module's first load (jiti compiling a new file) counts against
 * the limit, and on a busy machine it can pass 300 ms.
 */
const GENEROUS_TIMEOUT_MS = 10_000;
const MEMORY_MB = 32;

const MODULES = {
  "ok.ts": `import { isMainThread } from "node:worker_threads";
export default (context: { payload: { text: string }; rawBody: Buffer }) => ({
  message: \`\${context.payload.text} / \${context.rawBody.toString("utf8")} / buffer \${Buffer.isBuffer(context.rawBody)} / main thread \${isMainThread}\`,
});
`,
  "async.ts": `export default async (context: { payload: { text: string } }) => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { kind: "wake" as const, text: \`later: \${context.payload.text}\` };
};
`,
  "throws.ts": `export default () => { throw new Error("transform exploded"); };
`,
  "busy-loop.ts": `export default () => { for (;;) {} };
`,
  "never-settles.ts": `export default () => new Promise(() => {});
`,
  // What "a 2 GB allocation" looks like to a worker: a heap that grows until it meets the limit.
  "allocate.ts": `export default () => {
  const hog: number[][] = [];
  for (;;) hog.push(new Array(100_000).fill(1));
};
`,
  "unclonable.ts": `export default () => ({ message: "fine", callback: () => 1 });
`,
  "late-throw.ts": `export default () => {
  setTimeout(() => { throw new Error("thrown after answering"); }, 0);
  return { message: "answered" };
};
`,
  "late-reject.ts": `export default () => {
  Promise.reject(new Error("rejected after answering"));
  return { message: "answered" };
};
`,
  "exits.ts": `export default () => { process.exit(3); };
`,
  "syntax-error.ts": `export default () => ({ message: "unclosed" ;
`,
  "no-export.ts": `export const notAFunction = 1;
`,
};

interface Recorded {
  transforms: Array<[string, TransformOutcome]>;
  restarts: string[];
}

/** The metrics a runner reports: outcomes and restarts, and each call's duration in seconds. */
function recordingMetrics(): { metrics: HookMetrics; recorded: Recorded; seconds: number[] } {
  const recorded: Recorded = { transforms: [], restarts: [] };
  const seconds: number[] = [];
  return {
    recorded,
    seconds,
    metrics: {
      ...NO_METRICS,
      transform: (mappingId, outcome, duration) => {
        recorded.transforms.push([mappingId, outcome]);
        seconds.push(duration);
      },
      workerRestart: (reason) => recorded.restarts.push(reason),
    },
  };
}

/** A logger that keeps its lines, with their levels. */
function recordingLogger() {
  const lines: LogLine[] = [];
  const log =
    (level: LogLine["level"]) =>
    (message: string): void => {
      lines.push({ level, message });
    };
  const logger: HostLogger = {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
  };
  return { logger, lines };
}

let dir: string;
let runner: TransformRunner | undefined;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "hooks-worker-transforms-"));
  for (const [name, source] of Object.entries(MODULES)) writeFileSync(path.join(dir, name), source);
});
afterEach(async () => {
  await runner?.close();
  runner = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function settings(overrides: Partial<TransformRunnerSettings> = {}): TransformRunnerSettings {
  return {
    transformsDir: dir,
    timeoutMs: GENEROUS_TIMEOUT_MS,
    reloadCheckMs: 0,
    maxMemoryMb: MEMORY_MB,
    maxWorkers: 2,
    metrics: NO_METRICS,
    ...overrides,
  };
}

function ref(module: string, isolate: TransformRef["isolate"] = "worker"): TransformRef {
  return { file: path.join(dir, module), module, isolate };
}

function context(text: string, mappingId = "mapping-a"): TransformContext {
  return {
    payload: { text },
    headers: { "content-type": "application/json" },
    query: {},
    path: "t",
    url: "/hooks/t",
    // A view into a larger allocation, as a body read from a socket often is: only its bytes may cross.
    rawBody: Buffer.from(`padding|raw ${text}|padding`).subarray(8, 8 + 4 + text.length),
    mapping: { id: mappingId },
    now: new Date(0).toISOString(),
  };
}

describe("worker transform runner", () => {
  it("runs a transform in a worker thread and returns its result, rawBody a Buffer there", async () => {
    const { metrics, recorded } = recordingMetrics();
    runner = createWorkerTransformRunner(settings({ metrics }));
    expect(await runner.run(ref("ok.ts"), context("hello"))).toEqual({
      message: "hello / raw hello / buffer true / main thread false",
    });
    expect(recorded).toEqual({ transforms: [["mapping-a", "ok"]], restarts: [] });
  });

  it("waits for an async transform", async () => {
    runner = createWorkerTransformRunner(settings());
    expect(await runner.run(ref("async.ts"), context("x"))).toEqual({ kind: "wake", text: "later: x" });
  });

  it("rejects with the transform's own message when it throws, and keeps its worker", async () => {
    const { metrics, recorded } = recordingMetrics();
    runner = createWorkerTransformRunner(settings({ metrics }));
    await expect(runner.run(ref("throws.ts"), context("x"))).rejects.toThrow("transform exploded");
    expect(recorded).toEqual({ transforms: [["mapping-a", "error"]], restarts: [] });
  });

  it("stops a synchronous endless loop at its time limit and serves the next call", async () => {
    const { metrics, recorded, seconds } = recordingMetrics();
    runner = createWorkerTransformRunner(settings({ metrics, timeoutMs: TIMEOUT_MS }));
    // Compiled once before the clock matters: jiti keeps the result on disk for the replacement worker too.
    await runner.load(ref("busy-loop.ts"));
    await runner.load(ref("ok.ts"));
    const begun = performance.now();
    await expect(runner.run(ref("busy-loop.ts"), context("x"))).rejects.toThrow(
      `transform did not finish within ${TIMEOUT_MS} ms; its worker was stopped`,
    );
    const elapsed = performance.now() - begun;
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    // The limit plus a loaded machine's scheduling; a loop that were not stopped would never end.
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 2_000);
    // The metric's duration is that call's, in seconds: at least the limit, at most what the caller waited.
    expect(seconds[0]).toBeGreaterThanOrEqual((TIMEOUT_MS - 5) / 1000);
    expect(seconds[0]).toBeLessThanOrEqual(elapsed / 1000);
    expect(await runner.run(ref("ok.ts"), context("after", "mapping-b"))).toMatchObject({
      message: expect.stringContaining("after"),
    });
    expect(recorded).toEqual({
      transforms: [
        ["mapping-a", "timeout"],
        ["mapping-b", "ok"],
      ],
      restarts: ["timeout"],
    });
  });

  it("stops a transform whose promise never settles", async () => {
    const { metrics, recorded } = recordingMetrics();
    runner = createWorkerTransformRunner(settings({ metrics, timeoutMs: TIMEOUT_MS }));
    await runner.load(ref("never-settles.ts"));
    await expect(runner.run(ref("never-settles.ts"), context("x"))).rejects.toThrow(
      /did not finish within 300 ms; its worker was stopped/,
    );
    expect(recorded.transforms).toEqual([["mapping-a", "timeout"]]);
  });

  it("stops a transform that allocates past maxMemoryMb and serves the next call", async () => {
    const { metrics, recorded } = recordingMetrics();
    // The generous time limit: the heap limit, not the clock, must be what stops it.
    runner = createWorkerTransformRunner(settings({ metrics }));
    await expect(runner.run(ref("allocate.ts"), context("x"))).rejects.toThrow(
      `transform exceeded its memory limit of ${MEMORY_MB} MB; its worker was stopped`,
    );
    expect(await runner.run(ref("ok.ts"), context("after"))).toMatchObject({
      message: expect.stringContaining("after"),
    });
    expect(recorded).toEqual({
      transforms: [
        ["mapping-a", "memory"],
        ["mapping-a", "ok"],
      ],
      restarts: ["memory"],
    });
  });

  it("answers other calls while one transform loops", async () => {
    runner = createWorkerTransformRunner(settings());
    await Promise.all([runner.load(ref("busy-loop.ts")), runner.load(ref("ok.ts"))]);
    let looping = true;
    const stuck = runner.run(ref("busy-loop.ts"), context("x")).finally(() => {
      looping = false;
    });
    stuck.catch(() => undefined);
    for (let i = 0; i < 5; i++) {
      expect(await runner.run(ref("ok.ts"), context(`call ${i}`))).toMatchObject({
        message: expect.stringContaining(`call ${i}`),
      });
    }
    expect(looping).toBe(true);
    await runner.close();
    await expect(stuck).rejects.toThrow();
  });

  it("refuses a result that cannot leave the worker, as that request's error only", async () => {
    const { metrics, recorded } = recordingMetrics();
    runner = createWorkerTransformRunner(settings({ metrics }));
    await expect(runner.run(ref("unclonable.ts"), context("x"))).rejects.toThrow(/cannot leave its worker/);
    expect(recorded).toEqual({ transforms: [["mapping-a", "error"]], restarts: [] });
  });

  it("keeps a worker whose transform's leftover work throws or rejects: the next request, another mapping's, is served, and the log names the first", async () => {
    const { metrics, recorded } = recordingMetrics();
    const { logger, lines } = recordingLogger();
    runner = createWorkerTransformRunner(settings({ metrics, logger, maxWorkers: 1 }));
    expect(await runner.run(ref("late-throw.ts"), context("x", "late"))).toEqual({ message: "answered" });
    expect(await runner.run(ref("late-reject.ts"), context("y", "late"))).toEqual({ message: "answered" });
    // Sent at once, on the only worker, while the leftovers fail: none of these may pay for them.
    const innocent = await Promise.all(
      Array.from({ length: 20 }, (_, i) => runner!.run(ref("ok.ts"), context(`after ${i}`, "innocent"))),
    );
    expect(innocent).toHaveLength(20);
    expect(recorded.restarts).toEqual([]);
    expect(
      recorded.transforms
        .filter(([id]) => id === "innocent")
        .map(([, outcome]) => outcome)
        .slice(0, 20),
    ).toEqual(Array(20).fill("ok"));
    const leftoverLines = () =>
      lines.filter((line) => line.message.includes("leftover work failed after it answered"));
    // A failure is reported with the worker's next reply: the timer's throw may come after the 20th, so a few more
    // requests carry it (bounded), each also served.
    for (let i = 0; i < 50 && leftoverLines().length < 2; i++)
      expect(await runner.run(ref("ok.ts"), context(`later ${i}`, "innocent"))).toMatchObject({
        message: expect.any(String),
      });
    const leftovers = leftoverLines();
    // The timer's throw and the rejection surface in either order.
    expect(leftovers.map((line) => line.message.replace(/^.*: /, "")).sort()).toEqual([
      "rejected after answering",
      "thrown after answering",
    ]);
    expect(leftovers.every((line) => line.level === "warn")).toBe(true);
  });

  it("reports a transform that ends its own worker as a crash, and serves the next call", async () => {
    const { metrics, recorded } = recordingMetrics();
    runner = createWorkerTransformRunner(settings({ metrics }));
    await expect(runner.run(ref("exits.ts"), context("x"))).rejects.toThrow(
      /transform stopped its worker, which was replaced: .*exited with code: 3/,
    );
    expect(await runner.run(ref("ok.ts"), context("after"))).toMatchObject({
      message: expect.stringContaining("after"),
    });
    expect(recorded.restarts).toEqual(["crash"]);
    expect(recorded.transforms.map(([, outcome]) => outcome)).toEqual(["error", "ok"]);
  });

  it("picks up a changed module file (hot reload)", async () => {
    runner = createWorkerTransformRunner(settings({ maxWorkers: 1 }));
    const file = path.join(dir, "live.ts");
    writeFileSync(file, "export default () => ({ message: 'version one' });\n");
    expect(await runner.run(ref("live.ts"), context("x"))).toEqual({ message: "version one" });
    writeFileSync(
      file,
      "const text: string = 'version two, longer';\nexport default () => ({ message: text });\n",
    );
    expect(await runner.run(ref("live.ts"), context("x"))).toEqual({ message: "version two, longer" });
  });

  it.each([
    ["syntax-error.ts", /syntax-error|Unexpected|expected/i],
    ["no-export.ts", /no function export/],
    ["missing.ts", /cannot read transform module missing\.ts/],
  ])("load() reports why %s cannot be used", async (module, reason) => {
    runner = createWorkerTransformRunner(settings());
    await expect(runner.load(ref(module))).rejects.toThrow(reason);
  });
});

describe("the default runner", () => {
  it('runs isolate: "worker" in the pool and isolate: "inline" in the gateway thread', async () => {
    const { metrics, recorded } = recordingMetrics();
    runner = createTransformRunner(settings({ metrics }));
    expect(await runner.run(ref("ok.ts", "worker"), context("w"))).toMatchObject({
      message: expect.stringContaining("main thread false"),
    });
    expect(await runner.run(ref("ok.ts", "inline"), context("i", "mapping-i"))).toMatchObject({
      message: expect.stringContaining("main thread true"),
    });
    expect(recorded.transforms).toEqual([
      ["mapping-a", "ok"],
      ["mapping-i", "ok"],
    ]);
  });

  it("loads a worker transform in a worker and an inline one inline, each reporting its failure", async () => {
    runner = createTransformRunner(settings());
    await expect(runner.load(ref("syntax-error.ts", "worker"))).rejects.toThrow();
    await expect(runner.load(ref("no-export.ts", "inline"))).rejects.toThrow(/no function export/);
    await expect(runner.load(ref("ok.ts", "worker"))).resolves.toBeUndefined();
  });
});
