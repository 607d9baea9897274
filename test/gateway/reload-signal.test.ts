/** @module SIGHUP reloads `hooks serve` as a real process: the signal reads the file again, and does not end the process. */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, startServeProcess } from "../helpers/cli.js";
import { AUTH, baseConfig, postJson, writeConfig } from "./support.js";

afterEach(cleanupCli);

describe("hooks serve and SIGHUP", () => {
  it("SIGHUP reloads the config, even an edit the file watch cannot see, and the gateway keeps serving", async () => {
    const dir = makeTempDir();
    // The config is a symlink into another directory: an edit there is not seen by the watch on this one, so only
    // the signal can bring it in.
    const real = path.join(dir, "real");
    mkdirSync(real);
    const target = writeConfig(real, baseConfig());
    const config = path.join(dir, "gateway.json5");
    symlinkSync(target, config);
    const gateway = await startServeProcess(["--config", config, "--state-dir", path.join(dir, "state")]);
    expect((await postJson(`${gateway.url}/hooks/late`, { n: 1 }, AUTH)).status).toBe(404);

    writeFileSync(
      target,
      JSON.stringify(
        baseConfig(
          {},
          { mappings: [{ id: "late", match: { path: "late" }, action: "wake", textTemplate: "late" }] },
        ),
      ),
    );
    gateway.signal("SIGHUP");
    const line = await gateway.waitForLog((r) => String(r.msg).startsWith("config reloaded"));
    expect(line).toMatchObject({ level: "info", mappings: 1 });
    expect(line.msg).toBe("config reloaded (SIGHUP): 1 mapping(s) (was 0); changed: hooks.mappings");

    const late = await postJson(`${gateway.url}/hooks/late`, { n: 2 }, AUTH);
    expect(late).toMatchObject({ status: 200, body: { mappingId: "late" } });
    gateway.signal("SIGTERM");
    expect(await gateway.exited).toEqual({ code: 0, signal: null });
  });
});
