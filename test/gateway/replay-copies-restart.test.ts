/** @module A restart of `hooks serve` remembers what a copy of a signed delivery is known by: a GitHub body's digest, a slash command's trigger_id. */
import { createHmac, randomUUID } from "node:crypto";
import { sign as githubSign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, pollFor, startServe } from "../helpers/cli.js";
import { readRecord, serveArgs, writeConfig } from "./support.js";

afterEach(cleanupCli);

const GITHUB_SECRET = "github-secret-for-the-restart-test";
const SLACK_SECRET = "slack-secret-for-the-restart-test";

function slackHeaders(body: string): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000);
  const mac = createHmac("sha256", SLACK_SECRET).update(`v0:${timestamp}:${body}`).digest("hex");
  return {
    "content-type": "application/x-www-form-urlencoded",
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": `v0=${mac}`,
  };
}

describe("copies of signed deliveries after hooks serve restarts", () => {
  it("a GitHub body under a new X-GitHub-Delivery, and a slash command's trigger_id, are still duplicates", async () => {
    const dir = makeTempDir("replay-copies-");
    const config = writeConfig(dir, {
      hooks: {
        enabled: true,
        token: "replay-copies-hook-token-0123456789",
        mappings: [
          {
            id: "github",
            match: { path: "github" },
            verify: { scheme: "github", secret: GITHUB_SECRET },
            action: "wake",
            textTemplate: "{{action}} #{{number}}",
          },
          {
            id: "command",
            match: { path: "slack/command" },
            verify: { scheme: "slack", secret: SLACK_SECRET },
            action: "wake",
            textTemplate: "{{command}} {{text}}",
            response: { body: "On it." },
          },
        ],
      },
    });
    const { args, record } = serveArgs(dir, config);
    const issue = JSON.stringify({ action: "opened", number: 12 });
    const signature = await githubSign(GITHUB_SECRET, issue);
    const slash = new URLSearchParams({
      command: "/deploy",
      text: "status",
      trigger_id: "13345224609.738474920.8088930838d88f008e0",
    }).toString();
    const post = async (url: string, hook: string, body: string, headers: Record<string, string>) => {
      const response = await fetch(`${url}/hooks/${hook}`, { method: "POST", headers, body });
      await response.text();
      return { status: response.status, replay: response.headers.get("idempotent-replay") };
    };
    const github = (url: string) =>
      post(url, "github", issue, {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": signature,
      });
    const wakes = () =>
      readRecord(record)
        .filter((line) => line.event === "session:system-event")
        .map((line) => line.payload.raw);

    const first = await startServe(args);
    expect(await github(first.url)).toEqual({ status: 200, replay: null });
    expect(await post(first.url, "slack/command", slash, slackHeaders(slash))).toEqual({
      status: 200,
      replay: null,
    });
    await pollFor(() => (wakes().length >= 2 ? true : undefined), "two wakes");
    first.signal("SIGTERM");
    expect((await first.exited).code).toBe(0);

    const second = await startServe(args);
    expect(await github(second.url)).toEqual({ status: 200, replay: "true" });
    expect(await post(second.url, "slack/command", slash, slackHeaders(slash))).toEqual({
      status: 200,
      replay: "true",
    });
    // Something new after the copies, awaited, so that a second wake of either copy would be recorded before it.
    const other = JSON.stringify({ action: "closed", number: 12 });
    expect(
      await post(second.url, "github", other, {
        "content-type": "application/json",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": await githubSign(GITHUB_SECRET, other),
      }),
    ).toEqual({ status: 200, replay: null });
    await pollFor(() => (wakes().length >= 3 ? true : undefined), "three wakes");
    expect(wakes()).toEqual(["opened #12", "/deploy status", "closed #12"]);
  });
});
