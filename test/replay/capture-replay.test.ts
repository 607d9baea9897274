import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import JSON5 from "json5";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, pollFor, runCli, startServe } from "../helpers/cli.js";

const TOKEN = "capture-test-token-0123456789abcdefg";
afterEach(cleanupCli);

describe("hooks serve --capture → hooks replay", () => {
  it("records accepted requests as fixtures without credentials, and replay reproduces their result", async () => {
    const dir = makeTempDir();
    const config = path.join(dir, "gateway.json5");
    writeFileSync(
      config,
      JSON5.stringify({
        hooks: {
          enabled: true,
          token: TOKEN,
          mappings: [
            {
              id: "contact",
              match: { path: "forms/contact" },
              action: "wake",
              textTemplate: "{{ name }}: {{ topic }}",
            },
          ],
        },
      }),
    );
    const captures = path.join(dir, "captures");
    const gateway = await startServe(
      ["--config", config, "--state-dir", path.join(dir, "state"), "--capture", captures],
      { cwd: dir },
    );
    const form = await fetch(`${gateway.url}/hooks/forms/contact?token=${TOKEN}&ref=site`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: "session=abc" },
      body: "name=Ada&topic=billing&topic=urgent",
    });
    expect(form.status).toBe(200);
    const refused = await fetch(`${gateway.url}/hooks/forms/contact`, {
      method: "POST",
      body: "{}",
      headers: { authorization: "Bearer wrong" },
    });
    expect(refused.status).toBe(401);

    const [file] = await pollFor(() => {
      const files = readdirSync(captures);
      return files.length > 0 ? files : undefined;
    }, "a captured fixture");
    expect(readdirSync(captures)).toHaveLength(1);
    const text = readFileSync(path.join(captures, file!), "utf8");
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain("session=abc");
    const fixture = JSON5.parse(text);
    expect(fixture.request).toMatchObject({
      method: "POST",
      path: "forms/contact",
      query: { ref: "site" },
      rawBody: "name=Ada&topic=billing&topic=urgent",
    });

    const replay = await runCli(["replay", "--json", "--config", config, path.join(captures, file!)], {
      cwd: dir,
    });
    expect(replay.code).toBe(0);
    const [report] = JSON.parse(replay.stdout).reports;
    expect(report).toMatchObject({
      status: 200,
      mappingId: "contact",
      actions: [{ kind: "wake", text: 'Ada: ["billing","urgent"]' }],
    });
  });
});
