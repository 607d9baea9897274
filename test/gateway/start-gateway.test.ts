/** @module `startGateway` in-process: all config problems at once, and a stop that is bounded even when a turn is not. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isConfigError } from "../../src/config/issues.js";
import type { AgentTurnFinished } from "../../src/events.js";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";
import { AUTH, baseConfig, postJson } from "./support.js";

let handle: GatewayHandle | undefined;
afterEach(async () => {
  await handle?.close();
  handle = undefined;
  await cleanupCli();
});

describe("startGateway", () => {
  it("throws one ConfigError listing the gateway's and the plugin's problems", async () => {
    const error = await startGateway({
      config: { hooks: { enabled: true, token: "" }, heartbeat: { everySeconds: -1 }, channels: ["fax"] },
      stateDir: makeTempDir(),
      logger: silentGatewayLogger,
    }).catch((thrown: unknown) => thrown);
    expect(isConfigError(error)).toBe(true);
    const paths = (error as { issues: Array<{ path: string }> }).issues.map((issue) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(["heartbeat.everySeconds", "channels[0]", "hooks.token"]));
  });

  it("bounds a stop: a turn still running at the deadline is aborted and reported as an error", async () => {
    const dir = makeTempDir();
    writeFileSync(path.join(dir, "stuck.mjs"), "setTimeout(() => {}, 60_000);");
    handle = await startGateway({
      config: baseConfig({ runner: { kind: "command", command: process.execPath, args: ["stuck.mjs"] } }),
      configDir: dir,
      port: 0,
      stateDir: path.join(dir, "state"),
      logger: silentGatewayLogger,
      stopTimeoutMs: 300,
    });
    const finished: AgentTurnFinished[] = [];
    handle.bus.on("session:agent-turn-finished", (event) => finished.push(event));
    const agent = await postJson(`${handle.url}/hooks/agent`, { message: "never answered" }, AUTH);
    expect(agent.status).toBe(202);

    const started = performance.now();
    await handle.close();
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(finished).toEqual([
      expect.objectContaining({
        runId: agent.body.runId,
        status: "error",
        error: "the gateway stopped before the turn finished",
      }),
    ]);
    // A second close is the same stop, not a new one.
    await handle.close();
  });
});
