/** @module The log file: the same JSON lines as the output, rotated by size with `keep` old files, where the config says. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveLogFile } from "../../src/gateway/log-file.js";
import { createGatewayLogger } from "../../src/gateway/logger.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "hooks-log-file-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function sink() {
  const lines: string[] = [];
  return { lines, out: { write: (text: string) => lines.push(text) } as never };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("log file", () => {
  it("rotates by size, keeping `keep` old files, each near the limit, holding the latest lines in order", async () => {
    const file = path.join(dir, "logs", "gateway.log");
    const maxBytes = 8_192;
    const logger = createGatewayLogger({
      out: sink().out,
      format: "json",
      file: { path: file, maxBytes, keep: 3 },
    });
    // Logged over many turns, as a gateway does, and far more than four files hold.
    for (let turn = 0; turn < 40; turn++) {
      for (let i = 0; i < 25; i++) logger.info("line", { n: turn * 25 + i, pad: "p".repeat(60) });
      await nextTurn();
    }
    await logger.close();

    expect(readdirSync(path.dirname(file)).sort()).toEqual([
      "gateway.log",
      "gateway.log.1",
      "gateway.log.2",
      "gateway.log.3",
    ]);
    const oldestFirst = ["gateway.log.3", "gateway.log.2", "gateway.log.1", "gateway.log"].map((name) =>
      path.join(path.dirname(file), name),
    );
    for (const rotated of oldestFirst.slice(0, 3)) {
      const size = statSync(rotated).size;
      // A turn's lines go out as one chunk of at most a sixteenth of the limit, never split between files.
      expect(size).toBeGreaterThanOrEqual(maxBytes);
      expect(size).toBeLessThanOrEqual(maxBytes + 1_024 + 200);
    }
    expect(statSync(file).size).toBeLessThanOrEqual(maxBytes + 1_024 + 200);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const numbers = oldestFirst
      .flatMap((name) => readFileSync(name, "utf8").split("\n"))
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line).n as number);
    expect(numbers.at(-1)).toBe(999);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => 1_000 - numbers.length + i));
  });

  it("gets the very lines the output gets, reserved-key guard included, as JSON even when the output is readable text", async () => {
    const file = path.join(dir, "gateway.log");
    const json = sink();
    const logger = createGatewayLogger({
      out: json.out,
      format: "json",
      file: { path: file, maxBytes: 1 << 20, keep: 1 },
    });
    logger.info("the real message", { level: "error", requestId: "r1" });
    await logger.close();
    expect(readFileSync(file, "utf8")).toBe(json.lines.join(""));
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ level: "info", "field.level": "error" });

    const text = sink();
    const readable = createGatewayLogger({
      out: text.out,
      format: "text",
      file: { path: file, maxBytes: 1 << 20, keep: 1 },
    });
    readable.warn("careful", { n: 3 });
    await readable.close();
    expect(text.lines[0]).toContain("WARN: careful n=3");
    expect(JSON.parse(readFileSync(file, "utf8").trimEnd().split("\n").at(-1)!)).toMatchObject({
      msg: "careful",
      n: 3,
    });
  });

  it("takes --log-file relative to the working directory, log.file relative to the config, with the defaults", () => {
    expect(resolveLogFile(undefined, "/etc/hooks")).toBeUndefined();
    expect(resolveLogFile({ maxSizeMb: 10, keep: 5 }, "/etc/hooks")).toBeUndefined();
    expect(resolveLogFile({ file: "logs/g.log", maxSizeMb: 2, keep: 7 }, "/etc/hooks")).toEqual({
      path: "/etc/hooks/logs/g.log",
      maxBytes: 2 * 1024 * 1024,
      keep: 7,
    });
    expect(
      resolveLogFile({ file: "logs/g.log", maxSizeMb: 2, keep: 7 }, "/etc/hooks", "here.log", "/work"),
    ).toEqual({
      path: "/work/here.log",
      maxBytes: 2 * 1024 * 1024,
      keep: 7,
    });
    expect(resolveLogFile(undefined, "/etc/hooks", "here.log", "/work")).toEqual({
      path: "/work/here.log",
      maxBytes: 10 * 1024 * 1024,
      keep: 5,
    });
  });
});
