/** @module Real senders over real HTTP: each scheme signed by the sender's own library, accepted; one byte changed, refused. */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { sign as githubSign } from "@octokit/webhooks-methods";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import twilio from "twilio";
import { afterEach, describe, expect, it } from "vitest";
import type { MappingInput } from "../../src/config/mapping-schema.js";
import { createHooksPlugin } from "../../src/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import {
  flipped,
  verificationLogs as logsOf,
  sendRaw,
  startSignedHost,
  SENDERS_TOKEN as TOKEN,
} from "../helpers/signed-host.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const stripe = new Stripe("sk_test_not_used");
let host: TestHost;
afterEach(async () => host?.close());

async function start(mappings: MappingInput[], hooks: Record<string, unknown> = {}) {
  host = await startSignedHost(mappings, hooks);
}
const send = (path: string, body: Buffer | string, headers: Record<string, string>) =>
  sendRaw(host, path, body, headers);
const verificationLogs = () => logsOf(host);

/**
 * A signed body with no delivery id is known by its digest: sent again, or signed again 5 s later, it gets the first
 * answer as a replay; another body does not.
 */
async function expectKnownByBody(
  path: string,
  body: Buffer,
  other: Buffer,
  signed: (payload: Buffer, timestamp: number) => Record<string, string>,
): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const answers = [
    await send(path, body, signed(body, now)),
    await send(path, body, signed(body, now)),
    await send(path, body, signed(body, now + 5)),
    await send(path, other, signed(other, now)),
  ];
  expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  expect(answers.map((answer) => answer.headers.get("idempotent-replay"))).toEqual([
    null,
    "true",
    "true",
    null,
  ]);
}

const jsonBody = fc.jsonValue().map((value) => Buffer.from(JSON.stringify({ value }, null, 1)));
const RUNS = 15;

describe("github: X-Hub-Signature-256 made by @octokit/webhooks-methods", () => {
  it("accepts what the library signs, byte for byte, and refuses any one byte changed", async () => {
    const secret = randomBytes(16).toString("hex");
    await start([
      {
        id: "gh",
        match: { path: "github" },
        action: "wake",
        textTemplate: "push",
        verify: { scheme: "github", secret },
      },
    ]);
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 300 }), fc.nat(), async (text, at) => {
        // Any bytes: escapes, unicode, pretty-printing survive because the check is on what was sent.
        const body = Buffer.from(JSON.stringify({ text }, null, 2));
        const signature = await githubSign(secret, body.toString("utf8"));
        const headers = { "content-type": "application/json", "x-hub-signature-256": signature };
        expect((await send("github", body, headers)).status).toBe(200);
        expect((await send("github", flipped(body, at), headers)).status).toBe(401);
      }),
      { numRuns: RUNS },
    );
    const logs = verificationLogs();
    expect(logs.length).toBe(RUNS);
    expect(logs.every((line) => line.endsWith("signature mismatch"))).toBe(true);
    expect(logs.join("\n")).not.toContain(secret);
    expect(logs.join("\n")).not.toContain("sha256=");
  });

  it("a refusal is 401 with one sentence, counts as an auth failure, and the token still works unless tokenAlso is false", async () => {
    const secret = "github-secret-0123";
    host = await startTestHost(
      createHooksPlugin(),
      {
        hooks: {
          enabled: true,
          token: TOKEN,
          authFailures: { limit: 2, windowSeconds: 60 },
          mappings: [
            {
              match: { path: "gh" },
              action: "wake",
              textTemplate: "x",
              verify: { scheme: "github", secret },
            },
            {
              match: { path: "strict" },
              action: "wake",
              textTemplate: "x",
              verify: { scheme: "github", secret, tokenAlso: false },
            },
          ],
        },
      },
      { configDir: REPO_ROOT },
    );
    const body = Buffer.from('{"zen":"Keep it logically awesome."}');
    const wrong = { "content-type": "application/json", "x-hub-signature-256": `sha256=${"0".repeat(64)}` };
    const refused = await send("gh", body, wrong);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text)).toEqual({
      ok: false,
      code: "UNAUTHORIZED",
      error: "The request's signature could not be verified.",
    });
    const bearer = { "content-type": "application/json", authorization: `Bearer ${TOKEN}` };
    expect((await send("gh", body, bearer)).status).toBe(200);
    // A correct token is always accepted where the path allows one, even beside a signature that fails.
    expect((await send("gh", body, { ...wrong, ...bearer })).status).toBe(200);
    const strictRefusal = await send("strict", body, bearer);
    expect(strictRefusal.status).toBe(401);
    // Only signatures get in there: no Bearer challenge is offered.
    expect(strictRefusal.headers.get("www-authenticate")).toBeNull();
    expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="hooks"');
    expect((await send("strict", body, wrong)).status).toBe(401);
    expect((await send("strict", body, wrong)).status).toBe(429);
  });
});

describe("stripe: Stripe-Signature made by stripe.webhooks.generateTestHeaderString", () => {
  it("accepts fresh signatures with any secret of a rotation, refuses changed bytes and stale or early timestamps", async () => {
    const secrets = [`whsec_${randomBytes(12).toString("hex")}`, `whsec_${randomBytes(12).toString("hex")}`];
    await start([
      {
        id: "stripe",
        match: { path: "stripe" },
        action: "wake",
        textTemplate: "a Stripe event",
        verify: { scheme: "stripe", secrets, toleranceSeconds: 300 },
      },
    ]);
    await fc.assert(
      fc.asyncProperty(
        jsonBody,
        fc.constantFrom(...secrets),
        fc.integer({ min: -299, max: 299 }),
        fc.integer({ min: 301, max: 100_000 }),
        fc.nat(),
        async (body, secret, skew, late, at) => {
          const now = Math.floor(Date.now() / 1000);
          const header = (timestamp: number) => ({
            "content-type": "application/json",
            "stripe-signature": stripe.webhooks.generateTestHeaderString({
              payload: body.toString("utf8"),
              secret,
              timestamp,
            }),
          });
          expect((await send("stripe", body, header(now + skew))).status).toBe(200);
          expect((await send("stripe", flipped(body, at), header(now))).status).toBe(401);
          expect((await send("stripe", body, header(now - late))).status).toBe(401);
          expect((await send("stripe", body, header(now + late))).status).toBe(401);
        },
      ),
      { numRuns: RUNS },
    );
    const logs = verificationLogs();
    expect(logs.some((line) => /timestamp is \d+ s old; tolerance \d+ s$/.test(line))).toBe(true);
    expect(logs.some((line) => /timestamp is \d+ s in the future; tolerance \d+ s$/.test(line))).toBe(true);
    for (const secret of secrets) expect(logs.join("\n")).not.toContain(secret);
  });

  it("an event without an id is known by its signed body: the same body again, as sent or signed anew, is a duplicate", async () => {
    const secret = `whsec_${randomBytes(12).toString("hex")}`;
    await start([
      {
        id: "stripe",
        match: { path: "stripe" },
        action: "wake",
        textTemplate: "a Stripe event {{type}}",
        verify: { scheme: "stripe", secret },
      },
    ]);
    const body = Buffer.from(JSON.stringify({ object: "event", type: "invoice.paid", data: { n: 1 } }));
    const signed = (payload: Buffer, timestamp: number) => ({
      "content-type": "application/json",
      "stripe-signature": stripe.webhooks.generateTestHeaderString({
        payload: payload.toString("utf8"),
        secret,
        timestamp,
      }),
    });
    const other = Buffer.from(JSON.stringify({ object: "event", type: "invoice.paid", data: { n: 2 } }));
    await expectKnownByBody("stripe", body, other, signed);
    expect(host.eventsOf("session:system-event")).toHaveLength(2);
  });
});

describe("slack: the documented v0 recipe, form and JSON bodies", () => {
  const slackSign = (secret: string, timestamp: number, body: Buffer) =>
    `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:`).update(body).digest("hex")}`;

  it("a signed slash command (form body) gets the mapping's fixed text; a changed byte gets 401", async () => {
    const secret = randomBytes(16).toString("hex");
    await start([
      {
        id: "slash",
        match: { path: "slack/command" },
        action: "wake",
        textTemplate: "{{user_name}} asked: {{text}}",
        response: { body: "On it, {{user_name}}." },
        verify: { scheme: "slack", secret },
      },
    ]);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }), fc.nat(), async (text, at) => {
        // Each command has its own trigger_id, as Slack sends: the same text twice is two commands.
        const form = new URLSearchParams({
          command: "/ask",
          text,
          user_name: "ada",
          team_id: "T1",
          trigger_id: randomBytes(8).toString("hex"),
        });
        const body = Buffer.from(form.toString());
        const timestamp = Math.floor(Date.now() / 1000);
        const headers = {
          "content-type": "application/x-www-form-urlencoded",
          "x-slack-request-timestamp": String(timestamp),
          "x-slack-signature": slackSign(secret, timestamp, body),
        };
        const answer = await send("slack/command", body, headers);
        expect(answer.status).toBe(200);
        expect(answer.headers.get("content-type")).toBe("text/plain; charset=utf-8");
        expect(answer.text).toBe("On it, ada.");
        expect((await send("slack/command", flipped(body, at), headers)).status).toBe(401);
      }),
      { numRuns: RUNS },
    );
    const texts = host.eventsOf("session:system-event").map((event) => event.text);
    expect(texts.length).toBe(RUNS);
  });

  it("a form without trigger_id is known by its signed body: the same form again, as sent or signed anew, is a duplicate", async () => {
    const secret = randomBytes(16).toString("hex");
    await start([
      {
        id: "slash",
        match: { path: "slack/command" },
        action: "wake",
        textTemplate: "{{user_name}} asked: {{text}}",
        verify: { scheme: "slack", secret },
      },
    ]);
    const form = (text: string) =>
      Buffer.from(new URLSearchParams({ command: "/ask", text, user_name: "ada", team_id: "T1" }).toString());
    const signed = (body: Buffer, timestamp: number) => ({
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": String(timestamp),
      "x-slack-signature": slackSign(secret, timestamp, body),
    });
    const body = form("deploy");
    await expectKnownByBody("slack/command", body, form("rollback"), signed);
    expect(host.eventsOf("session:system-event").map((event) => event.raw)).toEqual([
      "ada asked: deploy",
      "ada asked: rollback",
    ]);
  });
});

describe("standard-webhooks: webhook-signature made by the standardwebhooks library", () => {
  it("accepts v1 signatures among several in one header, refuses changed bytes and old timestamps", async () => {
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    await start([
      {
        id: "events",
        match: { path: "events" },
        action: "wake",
        textTemplate: "an event",
        verify: { scheme: "standard-webhooks", secret },
      },
    ]);
    const webhook = new Webhook(secret);
    const other = new Webhook(`whsec_${randomBytes(24).toString("base64")}`);
    await fc.assert(
      fc.asyncProperty(jsonBody, fc.nat(), async (body, at) => {
        const id = `msg_${randomBytes(8).toString("hex")}`;
        const date = new Date();
        const payload = body.toString("utf8");
        const headers = (signature: string, when = date) => ({
          "content-type": "application/json",
          "webhook-id": id,
          "webhook-timestamp": String(Math.floor(when.getTime() / 1000)),
          "webhook-signature": signature,
        });
        const good = webhook.sign(id, date, payload);
        const wrong = other.sign(id, date, payload);
        expect((await send("events", body, headers(`${wrong} ${good}`))).status).toBe(200);
        expect((await send("events", flipped(body, at), headers(good))).status).toBe(401);
        const old = new Date(date.getTime() - 3_600_000);
        expect((await send("events", body, headers(webhook.sign(id, old, payload), old))).status).toBe(401);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("twilio: X-Twilio-Signature made by twilio.getExpectedTwilioSignature", () => {
  it("form bodies: URL plus sorted parameters; a changed parameter or URL is refused; TwiML answer", async () => {
    const authToken = randomBytes(16).toString("hex");
    const publicUrl = "https://assistant.example.com/hooks/twilio/sms";
    await start([
      {
        id: "sms",
        match: { path: "twilio/sms" },
        action: "wake",
        textTemplate: "SMS from {{From}}: {{Body}}",
        response: { contentType: "text/xml", body: "<Response/>" },
        verify: { scheme: "twilio", secret: authToken, publicUrl },
      },
    ]);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 120 }), fc.string({ maxLength: 20 }), async (text, extra) => {
        const params = {
          MessageSid: "SM0123",
          From: "+15555550100",
          To: "+15555550199",
          Body: text,
          Extra: extra,
        };
        const body = Buffer.from(new URLSearchParams(params).toString());
        const headers = {
          "content-type": "application/x-www-form-urlencoded",
          "x-twilio-signature": twilio.getExpectedTwilioSignature(authToken, publicUrl, params),
        };
        const answer = await send("twilio/sms", body, headers);
        expect(answer.status).toBe(200);
        expect(answer.headers.get("content-type")).toBe("text/xml");
        expect(answer.text).toBe("<Response/>");
        const changed = Buffer.from(new URLSearchParams({ ...params, Body: `${text}!` }).toString());
        expect((await send("twilio/sms", changed, headers)).status).toBe(401);
        const otherUrl = twilio.getExpectedTwilioSignature(authToken, `${publicUrl}x`, params);
        expect((await send("twilio/sms", body, { ...headers, "x-twilio-signature": otherUrl })).status).toBe(
          401,
        );
      }),
      { numRuns: RUNS },
    );
  });

  it("JSON bodies: bodySHA256 in the query, checked against the body's hash", async () => {
    const authToken = randomBytes(16).toString("hex");
    const publicUrl = "https://assistant.example.com/hooks/twilio/events";
    await start([
      {
        id: "events",
        match: { path: "twilio/events" },
        action: "wake",
        textTemplate: "{{type}}",
        verify: { scheme: "twilio", secret: authToken, publicUrl },
      },
    ]);
    const body = Buffer.from(JSON.stringify({ type: "com.twilio.messaging.message.delivered" }));
    const hash = createHash("sha256").update(body).digest("hex");
    const signedUrl = `${publicUrl}?bodySHA256=${hash}`;
    const headers = {
      "content-type": "application/json",
      "x-twilio-signature": twilio.getExpectedTwilioSignature(authToken, signedUrl, {}),
    };
    expect(
      twilio.validateRequestWithBody(authToken, headers["x-twilio-signature"], signedUrl, body.toString()),
    ).toBe(true);
    expect((await send(`twilio/events?bodySHA256=${hash}`, body, headers)).status).toBe(200);
    const other = Buffer.from(JSON.stringify({ type: "com.twilio.messaging.message.failed" }));
    expect((await send(`twilio/events?bodySHA256=${hash}`, other, headers)).status).toBe(401);
  });
});
