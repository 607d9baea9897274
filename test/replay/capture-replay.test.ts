import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { sign as githubSign } from "@octokit/webhooks-methods";
import JSON5 from "json5";
import { afterEach, describe, expect, it } from "vitest";
import { hooksCommand } from "../../src/gateway/hooks-command.js";
import { loadFixture } from "../../src/replay/load-fixture.js";
import { baseConfig, TOKEN, writeConfig } from "../gateway/support.js";
import { cleanupCli, makeTempDir, pollFor, runCli, startServe } from "../helpers/cli.js";
import { REPO_ROOT } from "../helpers/repo.js";

afterEach(cleanupCli);

/** This process's environment as a shell outside npm has it: `npx hooks` is then no answer outside a checkout. */
function outsideNpm(): NodeJS.ProcessEnv {
  const { npm_command: _command, npm_lifecycle_event: _event, ...env } = process.env;
  return env;
}

describe("hooks serve --capture → hooks replay", () => {
  it("records accepted requests as fixtures without credentials, and replay reproduces their result", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          mappings: [
            {
              id: "contact",
              match: { path: "forms/contact" },
              action: "wake",
              textTemplate: "{{ name }}: {{ topic }}",
            },
          ],
        },
      ),
    );
    // A bare --capture writes into ./captures, the folder the docs suggest (git-ignored in this repository).
    const captures = path.join(dir, "captures");
    const gateway = await startServe(
      ["--config", config, "--capture", "--state-dir", path.join(dir, "state")],
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

  it("keeps a signed JSON body's exact bytes and a readable copy beside them, owner-only; replay re-signs the exact bytes", async () => {
    const dir = makeTempDir();
    const secret = "capture-github-secret";
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          mappings: [
            {
              id: "github-push",
              match: { path: "github" },
              action: "wake",
              textTemplate: "{{ pusher.name }} pushed to {{ ref }}",
              verify: { scheme: "github", secret },
            },
          ],
        },
      ),
    );
    const captures = path.join(dir, "captures");
    const gateway = await startServe(
      ["--config", config, "--state-dir", path.join(dir, "state"), "--capture", captures],
      { cwd: dir },
    );
    // GitHub sends compact JSON; an escape re-serialising would not keep shows that the bytes are the sender's.
    const push = readFileSync(path.join(REPO_ROOT, "fixtures/payloads/github/push.json"), "utf8");
    const body = `${JSON.stringify(JSON.parse(push)).slice(0, -1)},"note":"caf\\u00e9"}`;
    const sent = await fetch(`${gateway.url}/hooks/github`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
        "x-hub-signature-256": await githubSign(secret, body),
      },
      body,
    });
    expect(sent.status).toBe(200);

    const [file] = await pollFor(() => {
      const files = readdirSync(captures);
      return files.length > 0 ? files : undefined;
    }, "a captured fixture");
    const captured = path.join(captures, file!);
    expect(statSync(captured).mode & 0o777).toBe(0o600);
    expect(statSync(captures).mode & 0o777).toBe(0o700);
    const text = readFileSync(captured, "utf8");
    expect(text).not.toContain("sha256=");
    expect(text).toContain("// request.rawBody is the exact body: what replay sends and signs.");
    const fixture = JSON5.parse(text);
    expect(fixture.request.rawBody).toBe(body);
    expect(fixture.request.bodyJson).toEqual(JSON.parse(body));
    expect(fixture.request.bodyJson.note).toBe("café");
    // The copy is for people: one field a line, before the exact bytes' single long line.
    expect(text).toContain('\n      ref: "refs/heads/master",\n');
    expect(text.indexOf("bodyJson:")).toBeLessThan(text.indexOf("rawBody:"));
    expect(loadFixture(captured).rawBody?.equals(Buffer.from(body))).toBe(true);

    const replay = await runCli(["replay", "--json", "--config", config, captured], { cwd: dir });
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout).reports[0]).toMatchObject({
      status: 200,
      mappingId: "github-push",
      actions: [{ kind: "wake", text: "Codertocat pushed to refs/heads/master" }],
    });

    // An edit to the copy alone would be silently ignored: the fixture is refused, saying what to do instead.
    fixture.request.bodyJson.ref = "refs/heads/other";
    const edited = path.join(dir, "edited.json5");
    writeFileSync(edited, JSON5.stringify(fixture));
    const refused = await runCli(["replay", "--config", config, edited], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "request.bodyJson: bodyJson is a readable copy of rawBody and must match it: to send a changed body, edit rawBody, or rename bodyJson to body and delete rawBody",
    );
  });

  it("writes a Replay line that runs as printed where serve ran, outside a checkout", async () => {
    const dir = makeTempDir();
    writeConfig(
      dir,
      baseConfig(
        {},
        { mappings: [{ id: "ping", match: { path: "ping" }, action: "wake", textTemplate: "{{ n }}" }] },
      ),
    );
    const gateway = await startServe(["--capture", "--state-dir", path.join(dir, "state")], {
      cwd: dir,
      env: { npm_command: undefined, npm_lifecycle_event: undefined },
    });
    const sent = await fetch(`${gateway.url}/hooks/ping`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: '{"n":7}',
    });
    expect(sent.status).toBe(200);
    const [file] = await pollFor(() => {
      const files = readdirSync(path.join(dir, "captures"));
      return files.length > 0 ? files : undefined;
    }, "a captured fixture");

    const text = readFileSync(path.join(dir, "captures", file!), "utf8");
    const line = text.match(/^\/\/ Replay: (.+)$/m)?.[1];
    // Outside a checkout and npm, `npx hooks` would fetch an unrelated package of that name.
    expect(line).toBe(`${hooksCommand(outsideNpm(), dir)} replay captures/${file}`);
    const replay = await promisify(execFile)("sh", ["-c", `${line} --json`], { cwd: dir, env: outsideNpm() });
    expect(JSON.parse(replay.stdout).reports[0]).toMatchObject({
      status: 200,
      mappingId: "ping",
      actions: [{ kind: "wake", text: "7" }],
    });
  });
});
