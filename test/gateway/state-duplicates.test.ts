/** @module Events the plugin re-emits with their original ids (after a crash) are dropped: system events by eventId, deliveries by runId. */
import path from "node:path";
import { EventEmitter } from "eventemitter3";
import { afterEach, describe, expect, it } from "vitest";
import type { DeliverySend, HookBus, SystemEvent } from "../../src/events.js";
import { startDeliverySubsystem } from "../../src/gateway/delivery-subsystem.js";
import type { LastRoute } from "../../src/gateway/gateway-config.js";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { createOutbox } from "../../src/gateway/outbox.js";
import { createSessionStore } from "../../src/gateway/session-store.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { openStateDb, type StateDb } from "../../src/gateway/state-db.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";
import { baseConfig, readState } from "./support.js";

const source = { hook: "wake", requestId: "r1" };
const systemEvent = (eventId: string, sessionKey = "main"): SystemEvent => ({
  source,
  sessionKey,
  text: `text ${eventId}`,
  untrusted: true,
  eventId,
});
const send = (runId: string, to = "+15550001111"): DeliverySend => ({
  source: { hook: "agent", requestId: `req-${runId}` },
  runId,
  channel: "signal",
  to,
  text: `reply of ${runId}`,
});

const opened: StateDb[] = [];
let handle: GatewayHandle | undefined;
afterEach(async () => {
  await handle?.close();
  handle = undefined;
  for (const state of opened.splice(0)) state.close();
  await cleanupCli();
});
function open(dir: string): StateDb {
  const state = openStateDb(dir);
  opened.push(state);
  return state;
}

describe("duplicate system events", () => {
  it("ignores an event id already queued, in this turn or committed, and after a restart", () => {
    const dir = makeTempDir();
    const first = open(dir);
    const store = createSessionStore(first, undefined);
    store.enqueue(systemEvent("e1"));
    store.enqueue(systemEvent("e1"));
    first.flush();
    store.enqueue(systemEvent("e1"));
    first.close();
    const again = createSessionStore(open(dir), undefined);
    again.enqueue(systemEvent("e1"));
    expect(again.pending().map((event) => event.eventId)).toEqual(["e1"]);
  });

  it("ignores an event id already drained into the transcript", () => {
    const store = createSessionStore(open(makeTempDir()), undefined);
    store.enqueue(systemEvent("e1"));
    expect(store.drain(["hook:wake"])).toBe(1);
    store.enqueue(systemEvent("e1"));
    store.enqueue(systemEvent("e2"));
    expect(store.pending().map((event) => event.eventId)).toEqual(["e2"]);
    expect(store.drain(["interval"])).toBe(1);
  });

  it("ignores an event id already among a session's messages, in this turn and after a restart", () => {
    const dir = makeTempDir();
    const first = open(dir);
    const store = createSessionStore(first, undefined);
    store.appendSystemNote(systemEvent("n1", "hook:ci"));
    store.appendSystemNote(systemEvent("n1", "hook:ci"));
    expect(store.history("hook:ci")).toEqual([{ role: "system", content: "text n1" }]);
    first.close();
    // A re-emitted event names the session it named the first time: it is looked for there.
    const again = createSessionStore(open(dir), undefined);
    again.appendSystemNote(systemEvent("n1", "hook:ci"));
    expect(again.history("hook:ci")).toEqual([{ role: "system", content: "text n1" }]);
  });
});

describe("duplicate deliveries", () => {
  function start(state: StateDb) {
    const bus: HookBus = new EventEmitter();
    const routes: LastRoute[] = [];
    const delivery = startDeliverySubsystem({
      bus,
      outbox: createOutbox(state),
      channels: ["signal", "telegram"],
      logger: silentGatewayLogger,
      lastRoute: () => routes.at(-1),
      setLastRoute: (route) => routes.push(route),
    });
    return { bus, routes, delivery };
  }

  it("records a run id once, in the same turn and after a restart, and moves the route only for the first", () => {
    const dir = makeTempDir();
    const first = open(dir);
    const one = start(first);
    one.bus.emit("delivery:send", send("run-1"));
    one.bus.emit("delivery:send", send("run-1", "+15559999999"));
    one.bus.emit("delivery:send", send("run-2"));
    expect(one.routes).toEqual([
      { channel: "signal", to: "+15550001111" },
      { channel: "signal", to: "+15550001111" },
    ]);
    one.delivery.stop();
    first.close();

    const two = start(open(dir));
    two.bus.emit("delivery:send", send("run-2", "+15559999999"));
    two.bus.emit("delivery:send", send("run-3"));
    expect(two.routes).toHaveLength(1);
    two.delivery.stop();
    opened[1]!.close();
    const outbox = readState(dir, (reader) => reader.outbox());
    expect(outbox.map((entry) => [entry.runId, entry.to])).toEqual([
      ["run-1", "+15550001111"],
      ["run-2", "+15550001111"],
      ["run-3", "+15550001111"],
    ]);
  });
});

describe("a gateway handed the same events twice", () => {
  it("keeps one transcript entry per event id and one outbox row per run id, across a restart", async () => {
    const dir = makeTempDir();
    const state = path.join(dir, "state");
    const config = baseConfig({ heartbeat: { everySeconds: 0 } });
    // The heartbeat it asks for is still pending at close, and a stop runs it: the event is drained by then.
    const emitBoth = (gateway: GatewayHandle) => {
      gateway.bus.emit("session:system-event", systemEvent("wake-1"));
      gateway.bus.emit("heartbeat:request", { source, reason: "hook:wake" });
      gateway.bus.emit("delivery:send", send("run-1"));
    };
    handle = await startGateway({ config, stateDir: state, port: 0, logger: silentGatewayLogger });
    emitBoth(handle);
    emitBoth(handle);
    await handle.close();
    handle = await startGateway({ config, stateDir: state, port: 0, logger: silentGatewayLogger });
    emitBoth(handle);
    await handle.close();

    const transcript = readState(state, (reader) => reader.transcript());
    expect(transcript.filter((entry) => entry.kind === "system-event").map((entry) => entry.eventId)).toEqual(
      ["wake-1"],
    );
    expect(readState(state, (reader) => reader.queue())).toEqual([]);
    expect(readState(state, (reader) => reader.outbox()).map((entry) => entry.runId)).toEqual(["run-1"]);
  });
});
