/** @module The plugin registered on the fake OpenClaw in a full load, its services started and its routes listening: what most adapter tests start from. */
import openclawPlugin from "../../src/openclaw/index.js";
import type { FakeOpenClaw } from "./fake-openclaw-api.js";

export interface ServedPlugin {
  url: string;
  /** Closes the listener, then stops the services, as OpenClaw's shutdown does. */
  stop(): Promise<void>;
}

export async function servePlugin(fake: FakeOpenClaw): Promise<ServedPlugin> {
  openclawPlugin.register(fake.api);
  for (const service of fake.services) await service.start({});
  const server = await fake.listen();
  return {
    url: server.url,
    async stop() {
      await server.close();
      for (const service of fake.services) await service.stop?.({});
    },
  };
}
