/** @module Slack's scheme against its documented v0 recipe (Slack publishes no signer), computed here with node:crypto. */
import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { slack } from "../../src/verify/schemes/slack.js";
import type { SignatureSettings } from "../../src/verify/signature-scheme.js";
import {
  bytesBody,
  clock,
  formText,
  RUNS,
  request,
  requestFrom,
  secret,
  secretPair,
  staleClock,
  tamperedBody,
  textBody,
  windowReason,
} from "./arbitraries.js";

const settings = (secrets: string[], toleranceSeconds = 300): SignatureSettings => ({
  scheme: "slack",
  secrets,
  toleranceSeconds,
});

/** https://api.slack.com/authentication/verifying-requests-from-slack: `v0:` timestamp `:` body, HMAC-SHA256, hex. */
function slackHeaders(key: string, timestamp: number, body: Buffer): Record<string, string> {
  const basestring = Buffer.concat([Buffer.from(`v0:${timestamp}:`), body]);
  return {
    "x-slack-signature": "v0=" + createHmac("sha256", key).update(basestring).digest("hex"),
    "x-slack-request-timestamp": String(timestamp),
  };
}

const anyBody = fc.oneof(
  textBody.map((body) => Buffer.from(body)),
  bytesBody,
);

describe("slack scheme", () => {
  it("accepts the documented recipe on any body, form bodies included, inside the window", () => {
    fc.assert(
      fc.property(secret, anyBody, clock, (key, body, { signedAt, now, toleranceSeconds }) => {
        expect(
          slack.verify(
            request(slackHeaders(key, signedAt, body), body, now),
            settings([key], toleranceSeconds),
          ),
        ).toEqual({
          ok: true,
        });
      }),
      RUNS,
    );
  });

  it("refuses any one byte changed", () => {
    fc.assert(
      fc.property(secret, tamperedBody(anyBody), clock, (key, { body, changed }, { signedAt, now }) => {
        const headers = slackHeaders(key, signedAt, body);
        expect(slack.verify(request(headers, changed, now), settings([key], 3600))).toEqual({
          ok: false,
          reason: "signature mismatch",
        });
      }),
      RUNS,
    );
  });

  it("refuses a timestamp outside the window, either way, with how far", () => {
    fc.assert(
      fc.property(secret, formText, staleClock, (key, form, stale) => {
        const body = Buffer.from(form);
        const verdict = slack.verify(
          request(slackHeaders(key, stale.signedAt, body), body, stale.now),
          settings([key], stale.toleranceSeconds),
        );
        expect(verdict).toEqual({ ok: false, reason: windowReason(stale) });
      }),
      RUNS,
    );
  });

  it("accepts the right secret second in the list, refuses a wrong one", () => {
    fc.assert(
      fc.property(secretPair, anyBody, clock, ([right, wrong], body, { signedAt, now }) => {
        const headers = slackHeaders(right, signedAt, body);
        expect(slack.verify(request(headers, body, now), settings([wrong, right], 3600)).ok).toBe(true);
        expect(slack.verify(request(headers, body, now), settings([wrong], 3600))).toEqual({
          ok: false,
          reason: "signature mismatch",
        });
      }),
      RUNS,
    );
  });

  it("signs exactly the documented recipe, and verifies it", () => {
    fc.assert(
      fc.property(secret, anyBody, clock, (key, body, { signedAt, now }) => {
        const signed = slack.sign(
          { rawBody: body, rawQuery: "", timestampSeconds: signedAt, deliveryId: "unused", secret: key },
          settings([key]),
        );
        expect(signed.headers).toEqual(slackHeaders(key, signedAt, body));
        expect(slack.verify(requestFrom(signed, body, now), settings([key], 3600))).toEqual({ ok: true });
      }),
      RUNS,
    );
  });

  it("names what is wrong with the headers", () => {
    const body = Buffer.from("token=x&command=%2Fhi");
    const good = slackHeaders("s", 1000, body);
    const verify = (headers: Record<string, string>) =>
      slack.verify(request(headers, body, 1000), settings(["s"]));
    expect(verify({ "x-slack-request-timestamp": "1000" })).toEqual({
      ok: false,
      reason: "signature header missing",
    });
    expect(verify({ ...good, "x-slack-signature": "v1=abc" })).toEqual({
      ok: false,
      reason: "signature header malformed",
    });
    expect(verify({ "x-slack-signature": good["x-slack-signature"]! })).toEqual({
      ok: false,
      reason: "timestamp header missing",
    });
    expect(verify({ ...good, "x-slack-request-timestamp": "1000.5" })).toEqual({
      ok: false,
      reason: "timestamp header malformed",
    });
    expect(verify(good)).toEqual({ ok: true });
  });

  it("takes the delivery id from event_id when there is one", () => {
    const s = settings(["s"]);
    expect(slack.deliveryId({}, { event_id: "Ev123", type: "event_callback" }, s)).toBe("Ev123");
    expect(slack.deliveryId({}, { command: "/hi" }, s)).toBeUndefined();
    expect(slack.signatureHeaders).toEqual(["x-slack-signature"]);
  });

  it("takes trigger_id for a body with no event_id: a slash command's field, or the one in an interaction's payload", () => {
    const s = settings(["s"]);
    const form = { "content-type": "application/x-www-form-urlencoded; charset=utf-8" };
    expect(slack.deliveryId(form, { command: "/hi", trigger_id: "1.2.abc" }, s)).toBe("1.2.abc");
    const payload = JSON.stringify({ type: "block_actions", trigger_id: "3.4.def" });
    expect(slack.deliveryId(form, { payload }, s)).toBe("3.4.def");
    expect(slack.deliveryId(form, { payload: "{not json" }, s)).toBeUndefined();
    expect(slack.deliveryId(form, { trigger_id: ["1", "2"] }, s)).toBeUndefined();
    // Read from the signed body alone: the unsigned Content-Type does not change which id it is.
    expect(slack.deliveryId({ "content-type": "application/json" }, { trigger_id: "1.2.abc" }, s)).toBe(
      "1.2.abc",
    );
    expect(slack.deliveryId(form, { event_id: "Ev1", trigger_id: "1.2.abc" }, s)).toBe("Ev1");
  });
});
