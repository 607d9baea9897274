/** @module A replay sends the delivery it recorded: a real `hooks serve` that remembers it answers a GitHub replay (journal or capture) as a duplicate, and the CLI says nothing was done. */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { sign as githubSign } from "@octokit/webhooks-methods";
import JSON5 from "json5";
import { afterEach, describe, expect, it } from "vitest";
import { baseConfig, writeConfig } from "../gateway/support.js";
import { cleanupCli, makeTempDir, pollFor, runCli, startServe } from "../helpers/cli.js";

const SECRET = "github-secret-for-the-replay-test";
afterEach(cleanupCli);

describe("replaying a GitHub delivery to the gateway that accepted it", () => {
  it("is a duplicate, from the journal and from a capture, and says so, without its id too; another body runs", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          mappings: [
            {
              id: "github-push",
              match: { path: "github", headers: { "x-github-event": "push" } },
              action: "wake",
              textTemplate: "pushed to {{ ref }}",
              verify: { scheme: "github", secret: SECRET },
            },
          ],
        },
      ),
    );
    const state = path.join(dir, "state");
    const captures = path.join(dir, "captures");
    const gateway = await startServe(["--config", config, "--state-dir", state, "--capture", captures], {
      cwd: dir,
    });
    const body = JSON.stringify({ ref: "refs/heads/main", after: "6113728f" });
    const delivery = randomUUID();
    const sent = await fetch(`${gateway.url}/hooks/github`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-github-delivery": delivery,
        "x-hub-signature-256": await githubSign(SECRET, body),
      },
      body,
    });
    expect(sent.status).toBe(200);
    await sent.text();
    const requestId = sent.headers.get("x-request-id")!;
    const cli = (args: string[]) => runCli([...args, "--config", config], { cwd: dir });

    const fromJournal = await cli([
      "journal",
      "replay",
      requestId,
      "--send",
      gateway.url,
      "--state-dir",
      state,
    ]);
    expect(fromJournal.code).toBe(0);
    expect(fromJournal.stdout).toBe(
      "200 duplicate: nothing done (the gateway had already accepted this delivery id; its first answer: mappingId=github-push)\n",
    );

    const [capture] = await pollFor(() => {
      const files = readdirSync(captures).sort();
      return files.length > 0 ? files : undefined;
    }, "the capture");
    const captured = path.join(captures, capture!);
    expect(JSON5.parse(readFileSync(captured, "utf8")).request.headers["x-github-delivery"]).toBe(delivery);
    const fromCapture = await cli(["replay", captured, "--send", gateway.url]);
    expect(fromCapture.stdout).toMatch(/: 200 duplicate: nothing done \(/);

    // GitHub signs no timestamp and not its delivery id: without the id, replay signs the same body under a fresh
    // one, and that is still the delivery the gateway accepted. Another body is another delivery, and it runs.
    const fixture = JSON5.parse(readFileSync(captured, "utf8"));
    delete fixture.request.headers["x-github-delivery"];
    const renamed = path.join(dir, "push-again.json5");
    writeFileSync(renamed, JSON5.stringify(fixture));
    const sameBody = await cli(["replay", renamed, "--send", gateway.url]);
    expect(sameBody.stdout).toMatch(/: 200 duplicate: nothing done \(/);
    fixture.request.body = { ref: "refs/heads/main", after: "7224839a" };
    delete fixture.request.rawBody;
    delete fixture.request.bodyJson;
    writeFileSync(renamed, JSON5.stringify(fixture));
    const again = await cli(["replay", renamed, "--send", gateway.url]);
    expect(again.stdout).toMatch(/: 200 accepted: mappingId=github-push\n$/);

    // The last request's done line follows its answer (once the gateway stored its events): read until it is there.
    const states = async () => {
      const list = await cli(["journal", "list", "--state-dir", state]);
      return list.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(/ {2,}/)[2]!.trim());
    };
    let listed = await states();
    for (const deadline = Date.now() + 5_000; listed.at(-1) !== "done" && Date.now() < deadline; )
      listed = await states();
    expect(listed).toEqual(["done", "duplicate", "duplicate", "duplicate", "done"]);
  });
});
