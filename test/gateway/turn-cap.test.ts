/**
 * @module `maxConcurrentTurns` through the reference gateway and the `command` runner: turns past a hook's cap are
 * accepted, wait in order and start as running ones end; each hook has its own queue; a stop or a crash leaves the
 * waiting ones to the next start, which runs each exactly once.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentTurn, AgentTurnFinished } from "../../src/events.js";
import { loadGatewayConfig } from "../../src/gateway/load-gateway-config.js";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { readJournal } from "../../src/journal/read-journal.js";
import { cleanupCli, makeTempDir, pollFor, startServeProcess } from "../helpers/cli.js";
import { AUTH, baseConfig, postJson, readRecord, serveArgs, writeConfig } from "./support.js";

afterEach(cleanupCli);

/**
 * A stand-in agent that holds its turn until the test lets it go: a file `go-<runId>` (or `go-all`) in the config
 * directory, the runner's cwd. It writes its start and end (or its stop) to `turns.log`, so the test can see what
 * overlapped.
 */
const AGENT_SCRIPT = `cat > /dev/null
echo "start $HOOKS_RUN_ID" >> turns.log
trap 'echo "end $HOOKS_RUN_ID" >> turns.log; exit 1' TERM
while [ ! -e "go-$HOOKS_RUN_ID" ] && [ ! -e go-all ]; do sleep 0.02; done
echo "end $HOOKS_RUN_ID" >> turns.log
printf 'finished %s' "$HOOKS_RUN_ID"
`;

const RUNNER = { kind: "command", command: "/bin/sh", args: ["agent.sh"] };

function gatewayConfig(dir: string, hooks: Record<string, unknown>) {
  writeFileSync(path.join(dir, "agent.sh"), AGENT_SCRIPT);
  return baseConfig({ runner: RUNNER, heartbeat: { everySeconds: 0 } }, hooks);
}

async function startIn(dir: string, hooks: Record<string, unknown>): Promise<GatewayHandle> {
  return await startGateway({
    config: gatewayConfig(dir, hooks),
    configDir: dir,
    port: 0,
    stateDir: path.join(dir, "state"),
    logger: silentGatewayLogger,
    // A turn still running at a stop is cut after this, not after the default 10 s.
    stopTimeoutMs: 300,
  });
}

/** The turns the gateway's session subsystem was handed, and those that finished, in order, with a wait for each. */
function watchTurns(gateway: GatewayHandle) {
  const started: string[] = [];
  const finished = new Map<string, AgentTurnFinished>();
  const waits = new Set<() => void>();
  const check = () => {
    for (const wait of waits) wait();
  };
  gateway.bus.on("session:agent-turn", (turn: AgentTurn) => {
    started.push(turn.runId);
    check();
  });
  gateway.bus.on("session:agent-turn-finished", (done: AgentTurnFinished) => {
    finished.set(done.runId, done);
    check();
  });
  const until = (holds: () => boolean) =>
    new Promise<void>((resolve) => {
      if (holds()) return resolve();
      const wait = () => {
        if (!holds()) return;
        waits.delete(wait);
        resolve();
      };
      waits.add(wait);
    });
  return {
    started,
    finished,
    startedCount: (count: number) => until(() => started.length >= count),
    ended: (...runIds: string[]) => until(() => runIds.every((runId) => finished.has(runId))),
  };
}

const release = (dir: string, runId: string) => writeFileSync(path.join(dir, `go-${runId}`), "");

/** The agent's log: `start <runId>` / `end <runId>`, in the order they happened. */
function turnLog(dir: string): Array<{ what: "start" | "end"; runId: string }> {
  let text = "";
  try {
    text = readFileSync(path.join(dir, "turns.log"), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [what, runId] = line.split(" ");
      return { what: what as "start" | "end", runId: runId! };
    });
}

/** The most turns the log shows running at one moment. */
function mostAtOnce(log: ReturnType<typeof turnLog>): number {
  let running = 0;
  let most = 0;
  for (const line of log) {
    running += line.what === "start" ? 1 : -1;
    most = Math.max(most, running);
  }
  return most;
}

const startsOf = (log: ReturnType<typeof turnLog>, runId: string) =>
  log.filter((line) => line.what === "start" && line.runId === runId).length;

describe("maxConcurrentTurns", () => {
  it("accepts 5 agent turns at a cap of 2 with 202, runs 2 at a time, and starts the rest in order as slots free", async () => {
    const dir = makeTempDir("turn-cap-");
    const gateway = await startIn(dir, { limits: { agent: { maxConcurrentTurns: 2 } } });
    try {
      const turns = watchTurns(gateway);
      const answers = [];
      for (let i = 0; i < 5; i++) {
        answers.push(await postJson(`${gateway.url}/hooks/agent`, { message: `turn ${i}`, deliver: false }));
      }
      expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202, 202, 202]);
      expect(answers.map((answer) => answer.body.queued ?? false)).toEqual([false, false, true, true, true]);
      const runIds = answers.map((answer) => answer.body.runId as string);
      // Every answer is in: a gateway without the cap would have handed all five over by now.
      await turns.startedCount(2);
      expect(turns.started).toEqual(runIds.slice(0, 2));

      release(dir, runIds[0]!);
      await turns.ended(runIds[0]!);
      await turns.startedCount(3);
      expect(turns.started).toEqual(runIds.slice(0, 3));

      release(dir, runIds[2]!);
      await turns.ended(runIds[2]!);
      await turns.startedCount(4);
      expect(turns.started).toEqual(runIds.slice(0, 4));

      writeFileSync(path.join(dir, "go-all"), "");
      await turns.ended(...runIds);
      expect(turns.started).toEqual(runIds);
      expect([...turns.finished.values()].map((done) => done.status)).toEqual(Array(5).fill("ok"));
      const log = turnLog(dir);
      expect(mostAtOnce(log)).toBe(2);
      const starts = log.filter((line) => line.what === "start").map((line) => line.runId);
      // The first two start together (the cap is 2): their processes write their lines in whichever order the
      // machine runs them. Each later one starts only when a slot frees, so in order.
      expect(new Set(starts.slice(0, 2))).toEqual(new Set(runIds.slice(0, 2)));
      expect(starts.slice(2)).toEqual(runIds.slice(2));
    } finally {
      writeFileSync(path.join(dir, "go-all"), "");
      await gateway.close();
    }
  });

  it("keeps each mapping's queue to itself: a full hook does not hold another hook's turn", async () => {
    const dir = makeTempDir("turn-cap-");
    const mapping = (id: string) => ({
      id,
      match: { path: id },
      messageTemplate: `${id} {{n}}`,
      deliver: false,
      maxConcurrentTurns: 1,
    });
    const gateway = await startIn(dir, { mappings: [mapping("builds"), mapping("deploys")] });
    try {
      const turns = watchTurns(gateway);
      const build1 = await postJson(`${gateway.url}/hooks/builds`, { n: 1 });
      const build2 = await postJson(`${gateway.url}/hooks/builds`, { n: 2 });
      const deploy = await postJson(`${gateway.url}/hooks/deploys`, { n: 1 });
      expect([build1.status, build2.status, deploy.status]).toEqual([202, 202, 202]);
      expect(build2.body.queued).toBe(true);
      expect(deploy.body.queued).toBeUndefined();
      await turns.startedCount(2);
      expect(turns.started).toEqual([build1.body.runId, deploy.body.runId]);

      release(dir, build1.body.runId);
      await turns.ended(build1.body.runId);
      await turns.startedCount(3);
      expect(turns.started[2]).toBe(build2.body.runId);
    } finally {
      writeFileSync(path.join(dir, "go-all"), "");
      await gateway.close();
    }
  });

  it("accepts at most maxQueuedTurns waiting turns: past them, 429 TURNS_QUEUED_FULL with Retry-After, listed in the journal", async () => {
    const dir = makeTempDir("turn-cap-");
    const queueCap = 3;
    const over = 2;
    const gateway = await startIn(dir, {
      mappings: [
        {
          id: "builds",
          match: { path: "builds" },
          messageTemplate: "build {{n}}",
          deliver: false,
          maxConcurrentTurns: 1,
          maxQueuedTurns: queueCap,
        },
      ],
    });
    let closed = false;
    try {
      const turns = watchTurns(gateway);
      // All at once: places in the queue are counted from the request's admission, not from its hand-off.
      const answers = await Promise.all(
        Array.from({ length: 1 + queueCap + over }, (_, n) => postJson(`${gateway.url}/hooks/builds`, { n })),
      );
      const accepted = answers.filter((answer) => answer.status === 202);
      const refused = answers.filter((answer) => answer.status === 429);
      expect(accepted).toHaveLength(1 + queueCap);
      expect(accepted.filter((answer) => answer.body.queued === true)).toHaveLength(queueCap);
      expect(refused).toHaveLength(over);
      for (const answer of refused) {
        expect(answer.body).toMatchObject({ ok: false, code: "TURNS_QUEUED_FULL" });
        expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }
      await turns.startedCount(1);

      // A turn that ends makes room: the next request waits again.
      release(dir, turns.started[0]!);
      await turns.ended(turns.started[0]!);
      const later = await postJson(`${gateway.url}/hooks/builds`, { n: "later" });
      expect(later.status).toBe(202);
      expect(later.body.queued).toBe(true);

      writeFileSync(path.join(dir, "go-all"), "");
      await gateway.close();
      closed = true;
      const listed = (await readJournal(path.join(dir, "state", "hooks-journal"))).filter(
        (entry) => entry.code === "TURNS_QUEUED_FULL",
      );
      expect(listed).toHaveLength(over);
      expect(listed.map((entry) => [entry.status, entry.mappingId])).toEqual(
        Array(over).fill([429, "builds"]),
      );
    } finally {
      writeFileSync(path.join(dir, "go-all"), "");
      if (!closed) await gateway.close();
    }
  });

  it("a reload keeps the waiting turns and applies its new cap at once; a caller waiting for a queued turn waits through the queue", async () => {
    const dir = makeTempDir("turn-cap-");
    const capped = (maxConcurrentTurns: number) =>
      gatewayConfig(dir, { limits: { agent: { maxConcurrentTurns } } });
    const file = writeConfig(dir, capped(1));
    const loaded = loadGatewayConfig({ config: file });
    const gateway = await startGateway({
      config: loaded.raw,
      configDir: loaded.configDir,
      port: 0,
      stateDir: path.join(dir, "state"),
      logger: silentGatewayLogger,
      stopTimeoutMs: 300,
      source: { file, load: loaded.readAgain, watch: false },
    });
    try {
      const turns = watchTurns(gateway);
      const first = await postJson(`${gateway.url}/hooks/agent`, { message: "first", deliver: false });
      const second = await postJson(`${gateway.url}/hooks/agent`, { message: "second", deliver: false });
      const waited = postJson(`${gateway.url}/hooks/agent`, {
        message: "third",
        deliver: false,
        waitForCompletion: true,
      });
      const queued = async () => {
        const text = await (await fetch(gateway.metricsUrl!, { headers: AUTH })).text();
        return Number(/^hooks_agent_turns_queued\{mapping=""\} (\d+)$/m.exec(text)?.[1]);
      };
      await turns.startedCount(1);
      await expect.poll(queued).toBe(2);
      expect(second.body.queued).toBe(true);

      writeConfig(dir, capped(3));
      expect(await gateway.reload("test")).toMatchObject({ applied: true, changed: ["hooks.limits"] });
      await turns.startedCount(3);
      expect(turns.started[0]).toBe(first.body.runId);
      expect(turns.started[1]).toBe(second.body.runId);
      expect(await queued()).toBe(0);

      writeFileSync(path.join(dir, "go-all"), "");
      const answer = await waited;
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ ok: true, queued: true, status: "ok", runId: turns.started[2] });
    } finally {
      writeFileSync(path.join(dir, "go-all"), "");
      await gateway.close();
    }
  });

  it("leaves the waiting turns to the next start after a clean stop: each runs once, the cut one is not run again", async () => {
    const dir = makeTempDir("turn-cap-");
    const hooks = { limits: { default: { maxConcurrentTurns: 1 } } };
    const first = await startIn(dir, hooks);
    const turns = watchTurns(first);
    const runIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await postJson(`${first.url}/hooks/agent`, { message: `turn ${i}`, deliver: false });
      expect(answer.status).toBe(202);
      runIds.push(answer.body.runId);
    }
    await pollFor(() => (startsOf(turnLog(dir), runIds[0]!) === 1 ? true : undefined), "the first turn");
    // The running turn is cut at the stop's deadline; the two waiting ones are not started meanwhile.
    await first.close();
    expect(turns.started).toEqual([runIds[0]]);
    expect(turns.finished.get(runIds[0]!)?.status).toBe("error");

    writeFileSync(path.join(dir, "go-all"), "");
    const second = await startIn(dir, hooks);
    try {
      const ended = (runId: string) =>
        turnLog(dir).some((line) => line.what === "end" && line.runId === runId);
      await pollFor(() => (ended(runIds[1]!) && ended(runIds[2]!) ? true : undefined), "the waiting turns");
      const log = turnLog(dir);
      expect(runIds.map((runId) => startsOf(log, runId))).toEqual([1, 1, 1]);
      expect(mostAtOnce(log)).toBe(1);
    } finally {
      await second.close();
    }
  });

  it.each([
    [
      "three /agent turns",
      {},
      async (url: string) => {
        const runIds: string[] = [];
        for (let i = 0; i < 3; i++) {
          const answer = await postJson(`${url}/hooks/agent`, { message: `turn ${i}`, deliver: false });
          expect(answer.status).toBe(202);
          runIds.push(answer.body.runId);
        }
        return runIds;
      },
    ],
    [
      "a fan-out of three turns in one request",
      {
        mappings: [
          {
            id: "batch",
            match: { path: "batch" },
            forEach: "items",
            messageTemplate: "item {{items[0].n}}",
            deliver: false,
          },
        ],
      },
      async (url: string) => {
        const answer = await postJson(`${url}/hooks/batch`, { items: [{ n: 1 }, { n: 2 }, { n: 3 }] });
        expect(answer.status).toBe(202);
        expect(answer.body.queued).toBe(true);
        return answer.body.runIds as string[];
      },
    ],
  ])(
    "after a crash runs the waiting turns exactly once and reports the running one interrupted: %s",
    async (_, hooks, send) => {
      const dir = makeTempDir("turn-cap-");
      const capped = { ...hooks, limits: { default: { maxConcurrentTurns: 1 } } };
      const config = writeConfig(dir, gatewayConfig(dir, capped));
      const { args, record } = serveArgs(dir, config);
      // A killed gateway cannot remove the temp dirs of its turns: they go with the test's dir.
      const serve = () => startServeProcess(args, { env: { TMPDIR: dir }, cwd: dir });
      const first = await serve();
      const runIds = await send(first.url);
      await pollFor(() => (startsOf(turnLog(dir), runIds[0]!) === 1 ? true : undefined), "the first turn");
      first.signal("SIGKILL");
      await first.exited;
      expect(turnLog(dir).filter((line) => line.what === "start")).toHaveLength(1);

      // Lets the orphaned first turn go too: whatever it does now, the gateway no longer waits for it.
      writeFileSync(path.join(dir, "go-all"), "");
      const second = await serve();
      try {
        const summaries = () =>
          new Map(
            readRecord(record)
              .filter(
                (line) => line.event === "session:system-event" && line.payload.eventId.endsWith(":summary"),
              )
              .map((line) => [line.payload.eventId.slice(0, -":summary".length), line.payload.raw as string]),
          );
        const all = await pollFor(
          () => (runIds.every((runId) => summaries().has(runId)) ? summaries() : undefined),
          "every turn's summary",
          15_000,
        );
        expect(all.get(runIds[0]!)).toContain("interrupted by a restart");
        expect(all.get(runIds[1]!)).toContain(`finished ${runIds[1]}`);
        expect(all.get(runIds[2]!)).toContain(`finished ${runIds[2]}`);
        const log = turnLog(dir);
        expect(runIds.map((runId) => startsOf(log, runId))).toEqual([1, 1, 1]);
      } finally {
        second.signal("SIGTERM");
        await second.exited;
      }
    },
  );
});
