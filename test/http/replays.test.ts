/** @module Copies of signed deliveries over real HTTP: under a new unsigned id, or relabelled as a form, they cause nothing twice. */
import { createHash, createHmac, randomBytes, randomUUID } from "node:crypto";
import { sign as githubSign } from "@octokit/webhooks-methods";
import Stripe from "stripe";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks.js";
import { afterEach, describe, expect, it } from "vitest";
import type { MappingInput } from "../../src/config/mapping-schema.js";
import { SENDERS_TOKEN, sendRaw, startSignedHost } from "../helpers/signed-host.js";
import type { TestHost } from "../helpers/test-host.js";

const stripe = new Stripe("sk_test_not_used");
const FORM = "application/x-www-form-urlencoded";
let host: TestHost;
afterEach(async () => host?.close());

async function start(mappings: MappingInput[]) {
  host = await startSignedHost(mappings);
}

/** What the sender sees of one POST: its status, whether it was a replayed answer, the answer's text. */
async function send(path: string, body: Buffer | string, headers: Record<string, string>) {
  const answer = await sendRaw(host, path, body, headers);
  return { status: answer.status, replay: answer.headers.get("idempotent-replay"), text: answer.text };
}
const wakes = () => host.eventsOf("session:system-event").map((event) => event.raw);

describe("github signs no timestamp: X-GitHub-Delivery is not signed", () => {
  const secret = randomBytes(16).toString("hex");
  const mapping = (secrets: string[]): MappingInput => ({
    id: "gh",
    match: { path: "github" },
    action: "wake",
    textTemplate: "{{action}} #{{number}}",
    verify: { scheme: "github", secrets },
  });
  const headers = (signature: string, delivery = randomUUID()) => ({
    "content-type": "application/json",
    "x-github-event": "issues",
    "x-github-delivery": delivery,
    "x-hub-signature-256": signature,
  });

  it("the same body and signature under a new delivery id is a duplicate: the first answer again, no second wake", async () => {
    await start([mapping([secret])]);
    const body = JSON.stringify({ action: "opened", number: 7 });
    const signature = await githubSign(secret, body);
    const first = await send("github", body, headers(signature));
    expect(first).toMatchObject({ status: 200, replay: null });
    const copy = await send("github", body, headers(signature));
    expect(copy).toEqual({ status: 200, replay: "true", text: first.text });
    // Another body is another delivery.
    const other = JSON.stringify({ action: "closed", number: 7 });
    expect(await send("github", other, headers(await githubSign(secret, other)))).toMatchObject({
      status: 200,
      replay: null,
    });
    expect(wakes()).toEqual(["opened #7", "closed #7"]);
  });

  it("a redelivery signed with the next secret of a rotation is still the same delivery", async () => {
    const next = randomBytes(16).toString("hex");
    await start([mapping([secret, next])]);
    const body = JSON.stringify({ action: "opened", number: 8 });
    const delivery = randomUUID();
    expect((await send("github", body, headers(await githubSign(secret, body), delivery))).replay).toBeNull();
    const again = await send("github", body, headers(await githubSign(next, body), delivery));
    expect(again).toMatchObject({ status: 200, replay: "true" });
    expect(wakes()).toEqual(["opened #8"]);
  });
});

describe("twilio signs no timestamp: I-Twilio-Idempotency-Token is not signed", () => {
  const authToken = randomBytes(16).toString("hex");
  const publicUrl = "https://assistant.example.com/hooks/twilio/sms";

  it("a form body and signature under a new idempotency token is a duplicate; other parameters are not", async () => {
    await start([
      {
        id: "sms",
        match: { path: "twilio/sms" },
        action: "wake",
        textTemplate: "SMS: {{Body}}",
        response: { contentType: "text/xml", body: "<Response/>" },
        verify: { scheme: "twilio", secret: authToken, publicUrl },
      },
    ]);
    const sms = (text: string) => {
      const params = { MessageSid: "SM0123", From: "+15555550100", Body: text };
      return {
        body: new URLSearchParams(params).toString(),
        headers: () => ({
          "content-type": FORM,
          "i-twilio-idempotency-token": randomUUID(),
          "x-twilio-signature": getExpectedTwilioSignature(authToken, publicUrl, params),
        }),
      };
    };
    const hello = sms("hello");
    expect(await send("twilio/sms", hello.body, hello.headers())).toEqual({
      status: 200,
      replay: null,
      text: "<Response/>",
    });
    expect(await send("twilio/sms", hello.body, hello.headers())).toEqual({
      status: 200,
      replay: "true",
      text: "<Response/>",
    });
    const bye = sms("bye");
    expect((await send("twilio/sms", bye.body, bye.headers())).replay).toBeNull();
    expect(wakes()).toEqual(["SMS: hello", "SMS: bye"]);
  });

  it("a JSON body vouched for by bodySHA256: a copy under a new token is a duplicate, relabelled as a form it is refused", async () => {
    const url = "https://assistant.example.com/hooks/twilio/events";
    await start([
      {
        id: "events",
        match: { path: "twilio/events" },
        action: "wake",
        textTemplate: "{{type}}",
        verify: { scheme: "twilio", secret: authToken, publicUrl: url },
      },
    ]);
    const body = JSON.stringify({ type: "com.twilio.messaging.message.delivered" });
    const hash = createHash("sha256").update(body).digest("hex");
    const headers = (contentType = "application/json") => ({
      "content-type": contentType,
      "i-twilio-idempotency-token": randomUUID(),
      "x-twilio-signature": getExpectedTwilioSignature(authToken, `${url}?bodySHA256=${hash}`, {}),
    });
    const path = `twilio/events?bodySHA256=${hash}`;
    expect((await send(path, body, headers())).replay).toBeNull();
    expect((await send(path, body, headers())).replay).toBe("true");
    expect((await send(path, body, headers(FORM))).status).toBe(400);
    expect(wakes()).toEqual(["com.twilio.messaging.message.delivered"]);
  });
});

describe("the Content-Type is not signed: a signed JSON event relabelled as a form", () => {
  it("stripe: refused every time, before or after the event itself, which is accepted once", async () => {
    const secret = `whsec_${randomBytes(12).toString("hex")}`;
    await start([
      {
        id: "stripe",
        match: { path: "stripe" },
        action: "wake",
        // Fixed text: a template reading fields would refuse the relabelled copy for want of them, hiding the hole.
        textTemplate: "a Stripe event",
        verify: { scheme: "stripe", secret },
      },
    ]);
    const body = JSON.stringify({ id: "evt_1Q2w3E", object: "event", type: "invoice.paid" });
    const headers = (contentType: string) => ({
      "content-type": contentType,
      "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
    });
    const relabelled = await send("stripe", body, headers(FORM));
    expect(relabelled.status).toBe(400);
    expect(JSON.parse(relabelled.text)).toEqual({
      ok: false,
      code: "INVALID_PAYLOAD",
      error:
        "The body is JSON but its Content-Type says application/x-www-form-urlencoded: a signed body is read as its sender sends it; send it as application/json.",
    });
    expect(await send("stripe", body, headers("application/json"))).toMatchObject({
      status: 200,
      replay: null,
    });
    for (let copy = 0; copy < 3; copy++) {
      expect((await send("stripe", body, headers(`${FORM}; charset=utf-8`))).status).toBe(400);
    }
    expect((await send("stripe", body, headers("application/json"))).replay).toBe("true");
    expect(wakes()).toEqual(["a Stripe event"]);
  });

  it("slack: an Events API callback resent as a form is refused; a slash command repeated with its trigger_id is a duplicate", async () => {
    const secret = randomBytes(16).toString("hex");
    const verify = { scheme: "slack" as const, secret };
    await start([
      {
        id: "events",
        match: { path: "slack/events" },
        action: "wake",
        textTemplate: "a Slack event",
        verify,
      },
      {
        id: "command",
        match: { path: "slack/command" },
        action: "wake",
        textTemplate: "{{command}} {{text}}",
        response: { body: "On it." },
        verify,
      },
    ]);
    const headers = (contentType: string, body: string) => {
      const timestamp = Math.floor(Date.now() / 1000);
      const mac = createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex");
      return {
        "content-type": contentType,
        "x-slack-request-timestamp": String(timestamp),
        "x-slack-signature": `v0=${mac}`,
      };
    };
    const event = JSON.stringify({
      type: "event_callback",
      event_id: "Ev08MFMKH6",
      event: { type: "app_mention", text: "deploy status?" },
    });
    expect((await send("slack/events", event, headers("application/json", event))).status).toBe(200);
    for (let copy = 0; copy < 2; copy++) {
      expect((await send("slack/events", event, headers(FORM, event))).status).toBe(400);
    }
    const command = (triggerId: string) =>
      new URLSearchParams({ command: "/deploy", text: "status", trigger_id: triggerId }).toString();
    const slash = command("13345224609.738474920.8088930838d88f008e0");
    expect(await send("slack/command", slash, headers(FORM, slash))).toEqual({
      status: 200,
      replay: null,
      text: "On it.",
    });
    // Slack signs each send with a fresh timestamp: the same command is still the same trigger_id.
    expect(await send("slack/command", slash, headers(FORM, slash))).toEqual({
      status: 200,
      replay: "true",
      text: "On it.",
    });
    const other = command("13345224609.738474920.0000000000000000000");
    expect((await send("slack/command", other, headers(FORM, other))).replay).toBeNull();
    expect(wakes()).toEqual(["a Slack event", "/deploy status", "/deploy status"]);
  });
});

describe("hmac: an id header is the delivery id only where the signature covers it", () => {
  const secret = randomBytes(16).toString("hex");
  const mapping = (path: string, signedContent: string): MappingInput => ({
    id: path,
    match: { path },
    action: "wake",
    textTemplate: "{{event}}",
    verify: { scheme: "hmac", secret, header: "x-signature", idHeader: "x-delivery", signedContent },
  });
  const headers = (signed: string, delivery: string) => ({
    "content-type": "application/json",
    "x-delivery": delivery,
    "x-signature": createHmac("sha256", secret).update(signed).digest("hex"),
  });

  it("unsigned: a copy under a new id is a duplicate", async () => {
    await start([mapping("unsigned", "{body}")]);
    const body = JSON.stringify({ event: "order.created" });
    expect((await send("unsigned", body, headers(body, "d-1"))).replay).toBeNull();
    expect((await send("unsigned", body, headers(body, "d-2"))).replay).toBe("true");
    expect(wakes()).toEqual(["order.created"]);
  });

  it("signed ({id} in signedContent): the id is the delivery's, and a copy cannot change it", async () => {
    await start([mapping("signed", "{id}.{body}")]);
    const body = JSON.stringify({ event: "order.created" });
    const signed = headers(`d-1.${body}`, "d-1");
    expect((await send("signed", body, signed)).replay).toBeNull();
    expect((await send("signed", body, { ...signed, "x-delivery": "d-2" })).status).toBe(401);
    expect((await send("signed", body, signed)).replay).toBe("true");
    // The same body under another signed id is another delivery: the sender said so, and signed it.
    expect((await send("signed", body, headers(`d-3.${body}`, "d-3"))).replay).toBeNull();
    expect(wakes()).toEqual(["order.created", "order.created"]);
  });

  it("no id header, a signed timestamp: the same body at another time is another delivery, a copy is not", async () => {
    await start([
      {
        id: "doorbell",
        match: { path: "doorbell" },
        action: "wake",
        textTemplate: "{{event}}",
        verify: { scheme: "hmac", secret, header: "x-signature", timestampHeader: "x-timestamp" },
      },
    ]);
    const body = JSON.stringify({ event: "ring" });
    const signedAt = (seconds: number) => ({
      "content-type": "application/json",
      "x-timestamp": String(seconds),
      "x-signature": createHmac("sha256", secret).update(`${seconds}.${body}`).digest("hex"),
    });
    const now = Math.floor(Date.now() / 1000);
    expect((await send("doorbell", body, signedAt(now))).replay).toBeNull();
    expect((await send("doorbell", body, signedAt(now))).replay).toBe("true");
    expect((await send("doorbell", body, signedAt(now - 5))).replay).toBeNull();
    expect(wakes()).toEqual(["ring", "ring"]);
  });
});

describe("a request the hook token let in on a signed path", () => {
  it("is known by the id it was sent with, not by its body: another Idempotency-Key is another request", async () => {
    await start([
      {
        id: "gh",
        match: { path: "github" },
        action: "wake",
        textTemplate: "{{action}}",
        verify: { scheme: "github", secret: "github-secret-0123" },
      },
    ]);
    const body = JSON.stringify({ action: "opened" });
    const withKey = (key: string) => ({
      "content-type": "application/json",
      authorization: `Bearer ${SENDERS_TOKEN}`,
      "idempotency-key": key,
    });
    expect((await send("github", body, withKey("k-1"))).replay).toBeNull();
    expect((await send("github", body, withKey("k-2"))).replay).toBeNull();
    expect((await send("github", body, withKey("k-1"))).replay).toBe("true");
    expect(wakes()).toEqual(["opened", "opened"]);
  });
});
