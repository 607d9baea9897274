/** @module Wakes OpenClaw queued and no heartbeat read are handed over again after OpenClaw restarts, once; read ones and a reload's are not. */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import openclawPlugin from "../../src/openclaw/index.js";
import { type FakeOpenClaw, fakeOpenClaw } from "../helpers/fake-openclaw-api.js";

const TOKEN = "unread-wakes-token-0123456789abcdef";
const pluginConfig = { enabled: true, token: TOKEN, path: "/intake" };
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One OpenClaw process: the plugin registered and its service started on a fake that shares `stateDir`. */
async function startOpenClaw(stateDir?: string) {
  const fake = fakeOpenClaw({ pluginConfig, ...(stateDir ? { stateDir } : {}) });
  openclawPlugin.register(fake.api);
  for (const service of fake.services) await service.start({});
  const hideQueues = fake.exposeQueues();
  const server = await fake.listen();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await server.close();
    for (const service of fake.services) await service.stop?.({});
    hideQueues();
  };
  cleanups.push(stop);
  const wake = async (text: string, mode = "next-heartbeat") => {
    const response = await fetch(`${server.url}/intake/wake`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ text, mode }),
    });
    expect(response.status).toBe(200);
  };
  return { fake, wake, stop };
}

const savedFile = (fake: FakeOpenClaw) => path.join(fake.stateDir, "hooks-intake", "unread-wakes.json");

/** What the next process finds: the file this one wrote, as if another process had written it. */
function asIfNewProcess(fake: FakeOpenClaw): void {
  const saved = JSON.parse(readFileSync(savedFile(fake), "utf8")) as { process: string };
  writeFileSync(savedFile(fake), JSON.stringify({ ...saved, process: "1:0" }));
}

const markers = (texts: string[]) => texts.join("\n").match(/marker-\d+/g) ?? [];

describe("wakes OpenClaw had not read when it stopped", () => {
  it("are handed over again after a restart, each once, and not again after a second restart once read", async () => {
    const first = await startOpenClaw();
    for (let i = 1; i <= 10; i++) await first.wake(`marker-${i}`);
    await first.stop();
    asIfNewProcess(first.fake);

    const second = await startOpenClaw(first.fake.stateDir);
    const read = markers(second.fake.queue.drain("agent:main:main"));
    expect(read).toEqual(Array.from({ length: 10 }, (_, i) => `marker-${i + 1}`));
    await second.wake("marker-11", "now");
    expect(markers(second.fake.queue.drain("agent:main:main"))).toEqual(["marker-11"]);
    await second.stop();

    const third = await startOpenClaw(first.fake.stateDir);
    expect(third.fake.queue.drain("agent:main:main")).toEqual([]);
  });

  it("handed over again and still unread at the next stop, they are kept again", async () => {
    const first = await startOpenClaw();
    await first.wake("marker-1");
    await first.stop();
    asIfNewProcess(first.fake);
    const second = await startOpenClaw(first.fake.stateDir);
    await second.stop();
    asIfNewProcess(first.fake);
    const third = await startOpenClaw(first.fake.stateDir);
    expect(markers(third.fake.queue.drain("agent:main:main"))).toEqual(["marker-1"]);
  });

  it("a heartbeat's read before the stop leaves nothing to hand over again", async () => {
    const first = await startOpenClaw();
    await first.wake("marker-1");
    first.fake.queue.drain("agent:main:main");
    await first.stop();
    expect(() => readFileSync(savedFile(first.fake))).toThrow(/ENOENT/);
    const second = await startOpenClaw(first.fake.stateDir);
    expect(second.fake.queue.drain("agent:main:main")).toEqual([]);
  });

  it("a start in the same process (a reload, where OpenClaw's queue kept them) hands nothing over again", async () => {
    const first = await startOpenClaw();
    await first.wake("marker-1");
    await first.stop();
    const second = await startOpenClaw(first.fake.stateDir);
    expect(second.fake.queue.drain("agent:main:main")).toEqual([]);
    expect(() => readFileSync(savedFile(first.fake))).toThrow(/ENOENT/);
  });

  it("left queued by a reload in the same process, they are still handed over again after a later restart", async () => {
    const first = await startOpenClaw();
    await first.wake("marker-1");
    await first.stop();
    // The reload: OpenClaw registers the plugin again in the same process, on the same queue.
    const { fake } = first;
    fake.routes.length = 0;
    fake.services.length = 0;
    openclawPlugin.register(fake.api);
    for (const service of fake.services) await service.start({});
    const hideQueues = fake.exposeQueues();
    expect(markers(fake.queue.queues.get("agent:main:main")?.map((event) => event.text) ?? [])).toEqual([
      "marker-1",
    ]);
    for (const service of fake.services) await service.stop?.({});
    hideQueues();
    asIfNewProcess(fake);
    const restarted = await startOpenClaw(fake.stateDir);
    expect(markers(restarted.fake.queue.drain("agent:main:main"))).toEqual(["marker-1"]);
  });

  it("without OpenClaw's queue in sight, the open batch is probed instead", async () => {
    const first = await startOpenClaw();
    await first.wake("marker-1");
    const hidden = Symbol.for("openclaw.systemEvents.queues");
    delete (globalThis as Record<symbol, unknown>)[hidden];
    await first.stop();
    asIfNewProcess(first.fake);
    const second = await startOpenClaw(first.fake.stateDir);
    expect(markers(second.fake.queue.drain("agent:main:main"))).toEqual(["marker-1"]);
  });
});
