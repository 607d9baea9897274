/** @module Replay on signed paths: fixtures re-signed with the mapping's secret, negative fixtures refused, no real secret needed. */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { validateFixture } from "../../src/replay/load-fixture.js";
import { openReplayPipeline } from "../../src/replay/replay-fixture.js";
import { REPO_ROOT } from "../helpers/repo.js";

const TOKEN = "resign-test-token-0123456789abcdef";
const PUBLIC_KEY = "whpk_" + Buffer.alloc(32, 7).toString("base64");

function pipeline() {
  const mapping = (path: string, verify: Record<string, unknown>) => ({
    id: path,
    match: { path },
    action: "wake",
    textTemplate: "{{kind}}",
    verify,
  });
  return openReplayPipeline(
    {
      hooks: {
        enabled: true,
        token: TOKEN,
        mappings: [
          mapping("github", { scheme: "github", secret: "gh-secret" }),
          mapping("stripe", { scheme: "stripe", secrets: ["whsec_new", "whsec_old"] }),
          mapping("slack", { scheme: "slack", secret: "slack-secret" }),
          mapping("sw", {
            scheme: "standard-webhooks",
            secret: `whsec_${Buffer.from("k").toString("base64")}`,
          }),
          mapping("sw-ed25519", { scheme: "standard-webhooks", secret: PUBLIC_KEY }),
          mapping("twilio", {
            scheme: "twilio",
            secret: "auth-token",
            publicUrl: "https://example.com/hooks/twilio",
          }),
          mapping("generic", { scheme: "hmac", secret: "s", header: "x-sig", timestampHeader: "x-ts" }),
        ],
      },
    },
    { configDir: REPO_ROOT },
  );
}

const fixture = (hook: string, extra: Record<string, unknown> = {}, request: Record<string, unknown> = {}) =>
  validateFixture(
    { name: hook, request: { path: hook, body: { kind: "signed" }, ...request }, ...extra },
    path.join(REPO_ROOT, "x.json5"),
  );

describe("replay on signed paths", () => {
  const replay = pipeline();

  it.each(["github", "stripe", "slack", "sw", "sw-ed25519", "twilio", "generic"])(
    "%s: a fixture is re-signed with a fresh timestamp and id, and accepted by the signature alone",
    async (hook) => {
      const report = await replay.replay(fixture(hook));
      expect(report.status).toBe(200);
      expect(report.events[0]).toMatchObject({ event: "session:system-event" });
    },
  );

  it("a twilio form body is signed over the sorted parameters", async () => {
    const report = await replay.replay(
      fixture(
        "twilio",
        {},
        {
          body: undefined,
          rawBody: "Body=hello&From=%2B15555550100&kind=sms",
          headers: { "content-type": "application/x-www-form-urlencoded" },
        },
      ),
    );
    expect(report.status).toBe(200);
  });

  it.each([
    ["github", "x-github-delivery"],
    ["sw", "webhook-id"],
    ["twilio", "i-twilio-idempotency-token"],
  ])(
    "%s: the delivery id the fixture recorded is signed and sent again; a fixture without one gets a fresh one",
    async (hook, header) => {
      const kept = replay.buildRequest(fixture(hook, {}, { headers: { [header]: "recorded-id-1" } }));
      expect(kept.headers[header]).toBe("recorded-id-1");
      expect(
        (await replay.replay(fixture(hook, {}, { headers: { [header]: "recorded-id-1" } }))).status,
      ).toBe(200);
      const fresh = [1, 2].map(() => replay.buildRequest(fixture(hook)).headers[header]);
      expect(fresh[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(fresh[1]).not.toBe(fresh[0]);
    },
  );

  it("a public key cannot sign: replay verifies that path with a key pair of its own, and says so", async () => {
    const report = await replay.replay(fixture("sw-ed25519"));
    expect(report.logs.map((log) => log.message).join("\n")).toMatch(/public key \(whpk_\)/);
  });

  it.each([
    ["github", { resign: false }],
    ["github", { resign: { secret: "not-the-secret" } }],
    ["github", { resign: { tamper: true } }],
    ["stripe", { resign: { ageSeconds: 3600 } }],
    ["stripe", { resign: { ageSeconds: -3600 } }],
    ["slack", { resign: { ageSeconds: 301 } }],
    ["sw", { resign: { tamper: true } }],
    ["twilio", { resign: { secret: "other-token" } }],
  ])("%s with %j is a negative fixture: 401", async (hook, extra) => {
    const report = await replay.replay(fixture(hook, extra));
    expect(report.status).toBe(401);
    expect(report.events).toEqual([]);
    expect(report.logs.some((log) => /verification failed/.test(log.message))).toBe(true);
  });

  it("a fixture that brings the hook token is accepted on a path that allows it, without re-signing", async () => {
    const report = await replay.replay(
      fixture("github", { resign: false }, { headers: { authorization: `Bearer ${TOKEN}` } }),
    );
    expect(report.status).toBe(200);
  });
});
