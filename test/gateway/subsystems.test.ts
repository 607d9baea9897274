/** @module The gateway's parts in-process: heartbeat coalescing, delivery routing, router, the runner's history file. */

import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { EventEmitter } from "eventemitter3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { HookBus } from "../../src/events.js";
import { resolveDelivery } from "../../src/gateway/delivery-subsystem.js";
import { startHeartbeatSubsystem } from "../../src/gateway/heartbeat-subsystem.js";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { createRouter } from "../../src/gateway/router.js";
import { createCommandRunner } from "../../src/gateway/runners/command.js";

const source = { hook: "wake", requestId: "r1" };

describe("heartbeat subsystem", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("coalesces requests within 250 ms into one heartbeat carrying every reason", () => {
    const bus: HookBus = new EventEmitter();
    const beats: string[][] = [];
    const heartbeat = startHeartbeatSubsystem({
      bus,
      everySeconds: 0,
      beat: (reasons) => beats.push(reasons),
    });
    bus.emit("heartbeat:request", { source, reason: "hook:wake" });
    vi.advanceTimersByTime(100);
    bus.emit("heartbeat:request", { source, reason: "hook:run-1" });
    bus.emit("heartbeat:request", { source, reason: "hook:wake" });
    vi.advanceTimersByTime(149);
    expect(beats).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(beats).toEqual([["hook:wake", "hook:run-1"]]);
    bus.emit("heartbeat:request", { source, reason: "hook:run-2" });
    vi.advanceTimersByTime(250);
    expect(beats).toEqual([["hook:wake", "hook:run-1"], ["hook:run-2"]]);
    heartbeat.stop();
  });

  it("beats periodically, and a stop runs the heartbeat still pending", () => {
    const bus: HookBus = new EventEmitter();
    const beats: string[][] = [];
    const heartbeat = startHeartbeatSubsystem({
      bus,
      everySeconds: 60,
      beat: (reasons) => beats.push(reasons),
    });
    vi.advanceTimersByTime(60_000 + 250);
    expect(beats).toEqual([["interval"]]);
    bus.emit("heartbeat:request", { source, reason: "hook:late" });
    heartbeat.stop();
    expect(beats).toEqual([["interval"], ["hook:late"]]);
    bus.emit("heartbeat:request", { source, reason: "after-stop" });
    vi.advanceTimersByTime(120_000);
    expect(beats).toHaveLength(2);
  });
});

describe("delivery routing", () => {
  const offered = new Set(["whatsapp", "telegram", "signal"]);
  it.each([
    [
      "last with no route → whatsapp, no recipient",
      { channel: "last" },
      undefined,
      { channel: "whatsapp", reason: expect.stringContaining("no recipient") },
    ],
    [
      "last follows the route",
      { channel: "last" },
      { channel: "telegram", to: "@ops_room" },
      { channel: "telegram", to: "@ops_room" },
    ],
    [
      "explicit channel and recipient",
      { channel: "signal", to: "+15550001111" },
      undefined,
      { channel: "signal", to: "+15550001111" },
    ],
    [
      "last recipient only on its own channel",
      { channel: "signal" },
      { channel: "telegram", to: "@ops_room" },
      { channel: "signal", reason: expect.stringContaining("no recipient") },
    ],
    [
      "recipient of the wrong kind for the resolved channel",
      { channel: "last", to: "@ops_room" },
      { channel: "whatsapp", to: "+15550001111" },
      { channel: "whatsapp", to: "@ops_room", reason: expect.stringContaining("E.164") },
    ],
    [
      "a route to a channel no longer offered",
      { channel: "last" },
      { channel: "slack", to: "C0123456789" },
      { channel: "slack", to: "C0123456789", reason: expect.stringContaining("not offered") },
    ],
  ] as const)("%s", (_, send, last, expected) => {
    const resolved = resolveDelivery(send as { channel: string; to?: string }, last as never, offered);
    expect(resolved).toEqual(expected);
  });
});

describe("router", () => {
  it("sends a request to the longest matching prefix, answers 404 JSON otherwise, and 500 when a handler fails", async () => {
    const router = createRouter(silentGatewayLogger);
    router.add({
      path: "/hooks",
      match: "prefix",
      auth: "plugin",
      handler: async (_req, res) => {
        res.end("outer");
        return true;
      },
    });
    router.add({
      path: "/hooks/inner/",
      match: "prefix",
      auth: "plugin",
      handler: async (_req, res) => {
        res.end("inner");
        return true;
      },
    });
    router.add({
      path: "/broken",
      match: "prefix",
      auth: "plugin",
      handler: async () => Promise.reject(new Error("boom")),
    });
    expect(() =>
      router.add({ path: "hooks", match: "prefix", auth: "plugin", handler: async () => true }),
    ).toThrow(/already registered/);
    const server = createServer(router.handle);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const text = async (p: string) => {
        const response = await fetch(`${base}${p}`);
        return [response.status, await response.text()];
      };
      expect(await text("/hooks/wake?token=x")).toEqual([200, "outer"]);
      expect(await text("/hooks/inner/deep")).toEqual([200, "inner"]);
      expect(await text("/hooksy")).toEqual([404, expect.stringContaining('"code":"NOT_FOUND"')]);
      expect(await text("/broken")).toEqual([500, expect.stringContaining('"code":"INTERNAL"')]);
    } finally {
      server.close();
    }
  });
});

describe("command runner history file", () => {
  it("hands the program the session's history in HOOKS_SESSION_FILE and removes it after the turn", async () => {
    const runner = createCommandRunner(
      {
        kind: "command",
        command: process.execPath,
        env: [],
        args: [
          "-e",
          'const fs=require("fs");const f=process.env.HOOKS_SESSION_FILE;process.stdout.write(f+"\\n"+fs.readFileSync(f,"utf8"))',
        ],
      },
      os.tmpdir(),
    );
    const history = [
      { role: "user" as const, content: "before" },
      { role: "assistant" as const, content: "reply" },
    ];
    const output = await runner.run({
      turn: {
        source,
        runId: "run-1",
        sessionKey: "hook:h",
        message: "now",
        raw: "now",
        untrusted: true,
        name: "Hook",
        timeoutSeconds: 5,
        wakeMode: "now",
        deliver: false,
        channel: "last",
      },
      history,
      signal: new AbortController().signal,
    });
    const [file, ...lines] = output.reply.split("\n");
    expect(lines.map((line) => JSON.parse(line))).toEqual(history);
    expect(existsSync(file!)).toBe(false);
  });
});
