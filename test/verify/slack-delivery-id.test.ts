/** @module Slack form bodies (slash commands, interactions) carry no delivery id: their trigger_id stands in, so a replayed copy is a duplicate. */
import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { readRecord, serveArgs, writeConfig } from "../gateway/support.js";
import { cleanupCli, makeTempDir, pollFor, startServe } from "../helpers/cli.js";

afterEach(cleanupCli);

const SECRET = "slack-delivery-id-signing-secret";

/** https://api.slack.com/authentication/verifying-requests-from-slack, as test/verify/slack.test.ts computes it. */
function slackHeaders(body: string): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    "content-type": "application/x-www-form-urlencoded",
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": `v0=${createHmac("sha256", SECRET).update(`v0:${timestamp}:${body}`).digest("hex")}`,
  };
}

const slashCommand = (triggerId: string) =>
  new URLSearchParams({
    command: "/assistant",
    text: "summarise today's deploys",
    user_name: "ada",
    trigger_id: triggerId,
  }).toString();

const interaction = (triggerId: string) =>
  new URLSearchParams({
    payload: JSON.stringify({ type: "block_actions", trigger_id: triggerId, user: { name: "ada" } }),
  }).toString();

async function startGateway() {
  const dir = makeTempDir("slack-delivery-id-");
  const config = writeConfig(dir, {
    hooks: {
      enabled: true,
      token: "slack-delivery-id-hook-token-0123456789",
      mappings: [
        {
          id: "command",
          match: { path: "slack/command" },
          verify: { scheme: "slack", secret: SECRET },
          action: "wake",
          textTemplate: "{{command}} {{text}}",
          response: { body: "Got it, {{user_name}}." },
        },
        {
          id: "interaction",
          match: { path: "slack/interaction" },
          verify: { scheme: "slack", secret: SECRET },
          action: "wake",
          textTemplate: "interaction {{payload}}",
        },
      ],
    },
  });
  const { args, record } = serveArgs(dir, config);
  const serve = await startServe(args);
  const post = async (hook: string, body: string) => {
    const response = await fetch(`${serve.url}/hooks/${hook}`, {
      method: "POST",
      headers: slackHeaders(body),
      body,
    });
    return {
      status: response.status,
      replay: response.headers.get("idempotent-replay"),
      body: await response.text(),
    };
  };
  const wakes = () => readRecord(record).filter((line) => line.event === "session:system-event");
  return { post, wakes };
}

describe("slack form bodies sent twice to hooks serve", () => {
  it("a slash command replayed with the same trigger_id is a duplicate: the first answer again, no second wake", async () => {
    const { post, wakes } = await startGateway();
    const body = slashCommand("13345224609.738474920.8088930838d88f008e0");
    const first = await post("slack/command", body);
    expect(first).toEqual({ status: 200, replay: null, body: "Got it, ada." });
    const second = await post("slack/command", body);
    expect(second).toEqual({ status: 200, replay: "true", body: "Got it, ada." });
    // Another command (its own trigger_id) is not a duplicate.
    expect(
      (await post("slack/command", slashCommand("13345224609.738474920.0000000000000000000"))).replay,
    ).toBeNull();
    await pollFor(() => (wakes().length >= 2 ? true : undefined), "two wakes");
    expect(wakes().map((line) => line.payload.raw)).toEqual([
      "/assistant summarise today's deploys",
      "/assistant summarise today's deploys",
    ]);
  });

  it("an interaction payload replayed with the same trigger_id is a duplicate", async () => {
    const { post, wakes } = await startGateway();
    const body = interaction("9876543210.1234.abcdef");
    expect((await post("slack/interaction", body)).replay).toBeNull();
    const again = await post("slack/interaction", body);
    expect(again.status).toBe(200);
    expect(again.replay).toBe("true");
    await pollFor(() => (wakes().length >= 1 ? true : undefined), "a wake");
    expect(wakes()).toHaveLength(1);
  });
});
