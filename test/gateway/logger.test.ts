/** @module The gateway's pino logger: JSON line shape, fields that cannot forge a line, readable lines, buffered stdout. */
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createGatewayLogger, isLogLevel } from "../../src/gateway/logger.js";
import { REPO_ROOT } from "../helpers/repo.js";

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function sink() {
  const lines: string[] = [];
  return { lines, out: { write: (text: string) => lines.push(text) } as never };
}

describe("logger", () => {
  it("writes a request's line at debug (a 5xx at error) and drops what is under the logger's level", () => {
    const { lines, out } = sink();
    const logger = createGatewayLogger({ out, format: "json", level: "info" });
    logger.request({ method: "POST", hook: "wake", status: 200, durationMs: 1, requestId: "r0" });
    logger.request({ method: "POST", hook: "wake", status: 401, durationMs: 1, requestId: "r0" });
    logger.request({ method: "POST", hook: "wake", status: 500, durationMs: 1, requestId: "r0" });
    expect(lines.map((line) => JSON.parse(line).level)).toEqual(["error"]);
  });

  it("writes JSON lines with time, level and msg, and the fields", () => {
    const { lines, out } = sink();
    const logger = createGatewayLogger({ out, format: "json", level: "debug" });
    logger.request({
      method: "POST",
      hook: "wake",
      status: 200,
      durationMs: 1.5,
      requestId: "r1",
      mappingId: undefined,
    });
    logger.warn("careful", { requestId: "r2", n: 3, ok: false, gone: undefined });
    logger.request({ method: "POST", hook: "agent", status: 503, durationMs: 2, requestId: "r3" });
    expect(lines.every((line) => line.endsWith("\n") && !line.slice(0, -1).includes("\n"))).toBe(true);
    const records = lines.map((line) => JSON.parse(line));
    expect(records).toEqual([
      {
        time: expect.stringMatching(ISO_TIME),
        level: "debug",
        msg: "request",
        method: "POST",
        hook: "wake",
        status: 200,
        durationMs: 1.5,
        requestId: "r1",
      },
      {
        time: expect.stringMatching(ISO_TIME),
        level: "warn",
        msg: "careful",
        requestId: "r2",
        n: 3,
        ok: false,
      },
      {
        time: expect.stringMatching(ISO_TIME),
        level: "error",
        msg: "request",
        method: "POST",
        hook: "agent",
        status: 503,
        durationMs: 2,
        requestId: "r3",
      },
    ]);
    expect(Math.abs(Date.parse(records[0].time) - Date.now())).toBeLessThan(60_000);
  });

  it("never lets a field forge the line's time, level or msg: such a field keeps its value under field.<name>", () => {
    const { lines, out } = sink();
    const logger = createGatewayLogger({ out, format: "json", level: "debug" });
    logger.info("the real message", {
      level: "error",
      time: "1970-01-01T00:00:00.000Z",
      msg: "forged",
      a: 1,
    });
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    // One of each key in the text itself, not only after JSON.parse kept the last of two.
    for (const key of ["time", "level", "msg"]) expect(line.split(`"${key}":`)).toHaveLength(2);
    expect(JSON.parse(line)).toEqual({
      time: expect.stringMatching(ISO_TIME),
      level: "info",
      msg: "the real message",
      "field.level": "error",
      "field.time": "1970-01-01T00:00:00.000Z",
      "field.msg": "forged",
      a: 1,
    });
    expect(JSON.parse(line).time).not.toBe("1970-01-01T00:00:00.000Z");
  });

  it("keeps a message with quotes, newlines and format characters as one valid line, as written", () => {
    const { lines, out } = sink();
    const logger = createGatewayLogger({ out, format: "json", level: "info" });
    const message = 'quote " backslash \\ newline \n line sep \u2028 percent %s %d';
    logger.info(message, { 'odd "key"\n': "value\ttab" });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: message, 'odd "key"\n': "value\ttab" });
  });

  it("writes one readable line per record on a terminal: method, hook, status and time first, fields as key=value", () => {
    const { lines, out } = sink();
    const logger = createGatewayLogger({ out, format: "text" });
    logger.request({
      method: "POST",
      hook: "github/push",
      status: 500,
      durationMs: 12,
      requestId: "r1",
      mappingId: "gh",
    });
    logger.info("heartbeat", { reasons: "hook:wake, interval", drained: 2 });
    expect(lines).toEqual([
      expect.stringMatching(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] ERROR: POST github\/push 500 12ms requestId=r1 mappingId=gh\n$/,
      ),
      expect.stringMatching(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: heartbeat reasons="hook:wake, interval" drained=2\n$/,
      ),
    ]);
  });

  it("knows its four levels and nothing else", () => {
    expect(["debug", "info", "warn", "error"].every(isLogLevel)).toBe(true);
    expect(["trace", "fatal", "toString", "", 1, undefined].some(isLogLevel)).toBe(false);
  });
});

/** Runs a script against the built logger with stdout a pipe, as `hooks serve` under a service manager. */
function runWithPipedStdout(body: string): Promise<{ stdout: string; code: number | null; chunks: number }> {
  const loggerUrl = new URL(`file://${path.join(REPO_ROOT, "dist/gateway/logger.js")}`).href;
  const script = `import { writeSync } from "node:fs";\nimport { createGatewayLogger } from ${JSON.stringify(loggerUrl)};\nconst logger = createGatewayLogger();\n${body}`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  let chunks = 0;
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    chunks++;
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ stdout, code, chunks })));
}

describe("logger on process stdout", () => {
  it("loses nothing when the process exits right after logging", async () => {
    const run = await runWithPipedStdout(
      'for (let i = 0; i < 500; i++) logger.info("line", { i });\nprocess.exit(0);',
    );
    expect(run.code).toBe(0);
    const records = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records.map((record) => record.i)).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it("keeps serving while nobody reads its stdout, and writes every line in order once someone does", async () => {
    const loggerUrl = new URL(`file://${path.join(REPO_ROOT, "dist/gateway/logger.js")}`).href;
    const script = `import { createGatewayLogger } from ${JSON.stringify(loggerUrl)};
const logger = createGatewayLogger();
for (let i = 0; i < 30000; i++) logger.info("stalled", { i, pad: "x".repeat(40) });
setTimeout(() => process.stderr.write("alive\\n"), 10);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Nobody reads stdout until the child showed its event loop still turns with ~2 MB of lines unwritten.
    child.stdout.pause();
    await new Promise<void>((resolve) => {
      child.stderr.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("alive")) resolve();
      });
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stdout.resume();
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    const ids = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line).i);
    expect(ids).toEqual(Array.from({ length: 30000 }, (_, i) => i));
  });

  it("buffers a burst into few writes, shows a lone line soon, and flush() writes out what is pending", async () => {
    const run = await runWithPipedStdout(`
for (let i = 0; i < 2000; i++) logger.info("burst", { i });
await new Promise((resolve) => setTimeout(resolve, 50));
logger.info("lone");
await logger.flush();
writeSync(1, "after flush\\n");
// Alive and idle: a line logged now must appear without a flush or an exit.
logger.info("quiet");
await new Promise((resolve) => setTimeout(resolve, 500));
writeSync(1, "half a second later\\n");
`);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 2000).map((line) => JSON.parse(line).i)).toEqual(
      Array.from({ length: 2000 }, (_, i) => i),
    );
    expect(JSON.parse(lines[2000]!).msg).toBe("lone");
    expect(lines[2001]).toBe("after flush");
    expect(JSON.parse(lines[2002]!).msg).toBe("quiet");
    expect(lines[2003]).toBe("half a second later");
    // ~150 KB of lines in far fewer writes than lines (the pipe may still split what one write sent).
    expect(run.chunks).toBeLessThan(200);
  });
});
