/** @module Wake answers say what became of their system events (`eventOutcome`), over real HTTP against the reference gateway. */
import { EventEmitter, once } from "node:events";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { makeTempDir } from "../helpers/cli.js";
import { AUTH, baseConfig, postJson } from "./support.js";

let handle: GatewayHandle | undefined;
afterEach(async () => {
  await handle?.close();
  handle = undefined;
});

/** No periodic heartbeat: the queue is drained only by a `now` wake's heartbeat, which `heartbeats` hears of. */
async function start(hooks: Record<string, unknown> = {}, dir = makeTempDir()): Promise<GatewayHandle> {
  handle = await startGateway({
    config: baseConfig({ heartbeat: { everySeconds: 0 } }, hooks),
    stateDir: path.join(dir, "state"),
    port: 0,
    logger: {
      ...silentGatewayLogger,
      info: (message) => {
        if (message === "heartbeat") heartbeats.emit("beat");
      },
    },
  });
  return handle;
}
const heartbeats = new EventEmitter();

const wake = (gateway: GatewayHandle, body: unknown, headers: Record<string, string> = {}) =>
  postJson(`${gateway.url}/hooks/wake`, body, { ...AUTH, ...headers });

describe("eventOutcome in wake answers (reference gateway)", () => {
  it("a burst of wakes: the first queued, the rest coalesced behind it, queued again once a heartbeat drained them", async () => {
    const gateway = await start();
    const answers = [];
    for (let i = 1; i <= 4; i++)
      answers.push(await wake(gateway, { text: `build ${i}`, mode: "next-heartbeat" }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((answer) => answer.body.eventOutcome)).toEqual([
      "queued",
      "coalesced",
      "coalesced",
      "coalesced",
    ]);
    expect(answers[0]!.body).toEqual({
      ok: true,
      mode: "next-heartbeat",
      eventId: expect.any(String),
      eventOutcome: "queued",
    });
    // A `now` wake joins the waiting ones too; its heartbeat then drains the queue.
    const drained = once(heartbeats, "beat");
    const now = await wake(gateway, { text: "deploy", mode: "now" });
    expect(now.body.eventOutcome).toBe("coalesced");
    await drained;
    expect(
      (await wake(gateway, { text: "after the heartbeat", mode: "next-heartbeat" })).body.eventOutcome,
    ).toBe("queued");
  });

  it("a repeated delivery id gets the first answer again, eventOutcome included, and queues nothing", async () => {
    const gateway = await start();
    const key = { "idempotency-key": "backup-2026-11-23" };
    const first = await wake(gateway, { text: "Backup finished", mode: "next-heartbeat" }, key);
    expect(first.body.eventOutcome).toBe("queued");
    await wake(gateway, { text: "another", mode: "next-heartbeat" });
    const again = await wake(gateway, { text: "Backup finished", mode: "next-heartbeat" }, key);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(again.body).toEqual(first.body);
  });

  it("after a restart, a repeated delivery id still gets the first answer, eventOutcome included", async () => {
    const dir = makeTempDir();
    const key = { "idempotency-key": "nightly-2026-11-25" };
    let gateway = await start({}, dir);
    await wake(gateway, { text: "waiting already", mode: "next-heartbeat" });
    const first = await wake(gateway, { text: "Nightly done", mode: "next-heartbeat" }, key);
    expect(first.body.eventOutcome).toBe("coalesced");
    await gateway.close();
    gateway = await start({}, dir);
    const again = await wake(gateway, { text: "Nightly done", mode: "next-heartbeat" }, key);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    expect(again.body).toEqual(first.body);
  });

  it("a mapped wake and a forEach of wakes: queued if any was queued", async () => {
    const gateway = await start({
      mappings: [
        {
          id: "ping",
          match: { path: "ping" },
          action: "wake",
          textTemplate: "ping {{n}}",
          wakeMode: "next-heartbeat",
        },
        {
          id: "batch",
          match: { path: "batch" },
          action: "wake",
          forEach: "items",
          textTemplate: "item {{items[0]}}",
          wakeMode: "next-heartbeat",
        },
      ],
    });
    const ping = await postJson(`${gateway.url}/hooks/ping`, { n: 1 });
    expect(ping.body).toEqual({
      ok: true,
      mode: "next-heartbeat",
      mappingId: "ping",
      eventOutcome: "queued",
    });
    // Its first item joins the waiting ping, the others join it: nothing of this batch was queued on its own.
    const batch = await postJson(`${gateway.url}/hooks/batch`, { items: ["a", "b"] });
    expect(batch.body).toMatchObject({ mappingId: "batch", eventOutcome: "coalesced" });
  });
});
