/** @module Twilio's scheme against twilio's own webhook helpers: its signer for form and JSON bodies, its validators for ours. */
import { createHash } from "node:crypto";
import { parse as parseForm } from "node:querystring";
import fc from "fast-check";
// The functions the package root re-exports as twilio.getExpectedTwilioSignature etc.; the root would load the REST client too (~0.4 s).
import {
  getExpectedTwilioSignature,
  validateRequest,
  validateRequestWithBody,
} from "twilio/lib/webhooks/webhooks.js";
import { describe, expect, it } from "vitest";
import { twilio } from "../../src/verify/schemes/twilio.js";
import type { SignatureSettings } from "../../src/verify/signature-scheme.js";
import {
  formText,
  jsonText,
  RUNS,
  request,
  requestFrom,
  secret,
  secretPair,
  tamperedBody,
  text,
} from "./arbitraries.js";

const PUBLIC_URL = "https://hooks.example.com/twilio/sms";
const settings = (secrets: string[], publicUrl = PUBLIC_URL): SignatureSettings => ({
  scheme: "twilio",
  secrets,
  toleranceSeconds: 300,
  publicUrl,
});
const FORM = { "content-type": "application/x-www-form-urlencoded" };
/** What the log says when the signature does not verify: the URL it was checked against, and what to set. */
const mismatchAgainst = (url: string, query = false) =>
  `signature mismatch against ${url}${query ? " and the query as received" : ""}; if Twilio calls another URL, set this mapping's verify.publicUrl to it exactly as in the Twilio console`;
const MISMATCH = mismatchAgainst(PUBLIC_URL);
const JSON_TYPE = { "content-type": "application/json" };
const NOW = 1_700_000_000;

/** Twilio's own parameter names, plus random ones; repeats are likely with so few names. */
const name = fc.oneof(
  fc.constantFrom("Body", "From", "To", "MessageSid", "a", "A", "b"),
  text({ minLength: 1 }),
);
const formWithRepeats = fc
  .array(fc.tuple(name, fc.oneof(text(), fc.constantFrom("1", "2", "x y"))), { maxLength: 10 })
  .map((pairs) => new URLSearchParams(pairs).toString());
const formBody = fc.oneof(formText, formWithRepeats);
const rawQuery = fc.oneof(fc.constant(""), formText);

function urlOf(query: string, base = PUBLIC_URL): string {
  return query === "" ? base : `${base}?${query}`;
}

/** What an Express app hands twilio: `express.urlencoded({ extended: false })` parses with node's querystring. */
function paramsOf(body: Buffer): Record<string, string | string[]> {
  return { ...parseForm(body.toString("utf8")) } as Record<string, string | string[]>;
}

function withBodyHash(query: string, body: Buffer): string {
  const hash = `bodySHA256=${createHash("sha256").update(body).digest("hex")}`;
  return query === "" ? hash : `${query}&${hash}`;
}

describe("twilio scheme, form bodies", () => {
  it("accepts what twilio's getExpectedTwilioSignature signs", () => {
    fc.assert(
      fc.property(secret, formBody, rawQuery, (token, form, query) => {
        const body = Buffer.from(form);
        const signature = getExpectedTwilioSignature(token, urlOf(query), paramsOf(body));
        const verdict = twilio.verify(
          request({ ...FORM, "x-twilio-signature": signature }, body, NOW, query),
          settings([token]),
        );
        expect(verdict).toEqual({ ok: true });
      }),
      RUNS,
    );
  });

  it("signs what twilio's validateRequest accepts, and verifies it", () => {
    fc.assert(
      fc.property(secret, formBody, rawQuery, fc.uuid(), (token, form, query, id) => {
        const body = Buffer.from(`${form}&Body=hi`);
        const signed = twilio.sign(
          { rawBody: body, rawQuery: query, timestampSeconds: NOW, deliveryId: id, secret: token },
          settings([token]),
        );
        expect(signed.rawQuery).toBeUndefined();
        expect(signed.headers["i-twilio-idempotency-token"]).toBe(id);
        const signature = signed.headers["x-twilio-signature"]!;
        expect(validateRequest(token, signature, urlOf(query), paramsOf(body))).toBe(true);
        expect(twilio.verify(requestFrom(signed, body, NOW, query), settings([token]))).toEqual({
          ok: false,
          reason: "body hash mismatch",
        }); // without its form content type
        const withType = {
          ...requestFrom(signed, body, NOW, query),
          headers: { ...signed.headers, ...FORM },
        };
        expect(twilio.verify(withType, settings([token]))).toEqual({ ok: true });
      }),
      RUNS,
    );
  });

  it("refuses a changed byte exactly when the parameters twilio would sign change", () => {
    fc.assert(
      fc.property(
        secret,
        tamperedBody(formBody.map((form) => Buffer.from(form))),
        (token, { body, changed }) => {
          const signature = getExpectedTwilioSignature(token, PUBLIC_URL, paramsOf(body));
          const same = getExpectedTwilioSignature(token, PUBLIC_URL, paramsOf(changed)) === signature;
          const verdict = twilio.verify(
            request({ ...FORM, "x-twilio-signature": signature }, changed, NOW),
            settings([token]),
          );
          expect(verdict).toEqual(same ? { ok: true } : { ok: false, reason: MISMATCH });
        },
      ),
      RUNS,
    );
  });

  it("signs repeated names as twilio does: values de-duplicated and sorted, names in code-unit order", () => {
    const body = Buffer.from("b=2&a=2&a=1&a=2&B=0&%C3%A9=e&Z=z");
    const signature = getExpectedTwilioSignature("token", PUBLIC_URL, paramsOf(body));
    // Names by UTF-16 code unit (B Z a b é), then a's values once each and in order.
    const expected = getExpectedTwilioSignature("token", `${PUBLIC_URL}B0Zza1a2b2ée`, {});
    expect(signature).toBe(expected);
    const verdict = twilio.verify(
      request({ ...FORM, "x-twilio-signature": signature }, body, NOW),
      settings(["token"]),
    );
    expect(verdict).toEqual({ ok: true });
  });

  it("accepts the URL signed with or without the default port", () => {
    const body = Buffer.from("Body=hi");
    for (const [signedUrl, configured] of [
      ["https://hooks.example.com:443/twilio/sms", PUBLIC_URL],
      [PUBLIC_URL, "https://hooks.example.com:443/twilio/sms"],
      ["http://[::1]:80/t", "http://[::1]/t"],
      ["https://user@hooks.example.com/t", "https://user@hooks.example.com:443/t"],
    ] as const) {
      const signature = getExpectedTwilioSignature("token", `${signedUrl}?x=1`, paramsOf(body));
      const verdict = twilio.verify(
        request({ ...FORM, "x-twilio-signature": signature }, body, NOW, "x=1"),
        settings(["token"], configured),
      );
      expect(verdict, `${signedUrl} as ${configured}`).toEqual({ ok: true });
    }
    const otherPort = getExpectedTwilioSignature(
      "token",
      "https://hooks.example.com:8443/twilio/sms",
      paramsOf(body),
    );
    expect(
      twilio.verify(request({ ...FORM, "x-twilio-signature": otherPort }, body, NOW), settings(["token"])),
    ).toEqual({ ok: false, reason: MISMATCH });
  });

  it("a mismatch names the URL it was checked against and how to set it, never the signature, token, query or body", () => {
    const body = Buffer.from("Body=secret+text&From=%2B15550100");
    const token = "twilio-auth-token-0123";
    const signature = getExpectedTwilioSignature(token, "https://proxy.example.com/sms", paramsOf(body));
    const configured = "https://user:basic-pass@hooks.example.com:8443/twilio/sms";
    const verdict = twilio.verify(
      request({ ...FORM, "x-twilio-signature": signature }, body, NOW, "token=query-token"),
      settings([token], configured),
    );
    expect(verdict).toEqual({
      ok: false,
      reason: mismatchAgainst("https://***@hooks.example.com:8443/twilio/sms", true),
    });
    const reason = verdict.ok ? "" : verdict.reason;
    for (const hidden of [signature, token, "basic-pass", "query-token", "secret", "15550100"])
      expect(reason).not.toContain(hidden);
  });

  it("accepts the right token second in the list, refuses a wrong one", () => {
    fc.assert(
      fc.property(secretPair, formBody, ([right, wrong], form) => {
        const body = Buffer.from(form);
        const headers = {
          ...FORM,
          "x-twilio-signature": getExpectedTwilioSignature(right, PUBLIC_URL, paramsOf(body)),
        };
        expect(twilio.verify(request(headers, body, NOW), settings([wrong, right])).ok).toBe(true);
        expect(twilio.verify(request(headers, body, NOW), settings([wrong]))).toEqual({
          ok: false,
          reason: MISMATCH,
        });
      }),
      RUNS,
    );
  });
});

describe("twilio scheme, JSON bodies (bodySHA256)", () => {
  it("accepts what twilio signs: the URL with bodySHA256, no parameters", () => {
    fc.assert(
      fc.property(secret, jsonText, rawQuery, (token, payload, query) => {
        const body = Buffer.from(payload);
        const signedQuery = withBodyHash(query, body);
        const signature = getExpectedTwilioSignature(token, urlOf(signedQuery), {});
        expect(validateRequestWithBody(token, signature, urlOf(signedQuery), payload)).toBe(true);
        const verdict = twilio.verify(
          request({ ...JSON_TYPE, "x-twilio-signature": signature }, body, NOW, signedQuery),
          settings([token]),
        );
        expect(verdict).toEqual({ ok: true });
      }),
      RUNS,
    );
  });

  it("refuses any one byte changed as a body hash mismatch", () => {
    fc.assert(
      fc.property(
        secret,
        tamperedBody(jsonText.map((json) => Buffer.from(json))),
        (token, { body, changed }) => {
          const signedQuery = withBodyHash("", body);
          const signature = getExpectedTwilioSignature(token, urlOf(signedQuery), {});
          const verdict = twilio.verify(
            request({ ...JSON_TYPE, "x-twilio-signature": signature }, changed, NOW, signedQuery),
            settings([token]),
          );
          expect(verdict).toEqual({ ok: false, reason: "body hash mismatch" });
        },
      ),
      RUNS,
    );
  });

  it("signs through the query (other parameters kept) what twilio's validateRequestWithBody accepts", () => {
    fc.assert(
      fc.property(secret, jsonText, rawQuery, (token, payload, query) => {
        const body = Buffer.from(payload);
        const stale = query === "" ? "bodySHA256=00" : `bodySHA256=00&${query}`;
        const signed = twilio.sign(
          { rawBody: body, rawQuery: stale, timestampSeconds: NOW, deliveryId: "id", secret: token },
          settings([token]),
        );
        expect(signed.rawQuery).toBe(withBodyHash(query, body));
        const signature = signed.headers["x-twilio-signature"]!;
        expect(validateRequestWithBody(token, signature, urlOf(signed.rawQuery!), payload)).toBe(true);
        const verdict = twilio.verify(
          { ...requestFrom(signed, body, NOW), headers: { ...signed.headers, ...JSON_TYPE } },
          settings([token]),
        );
        expect(verdict).toEqual({ ok: true });
      }),
      RUNS,
    );
  });

  it("refuses a JSON body whose query carries no hash; an empty body needs none", () => {
    const body = Buffer.from('{"a":1}');
    const urlOnly = getExpectedTwilioSignature("token", PUBLIC_URL, {});
    expect(
      twilio.verify(request({ ...JSON_TYPE, "x-twilio-signature": urlOnly }, body, NOW), settings(["token"])),
    ).toEqual({ ok: false, reason: "body hash mismatch" });
    const get = getExpectedTwilioSignature("token", `${PUBLIC_URL}?CallSid=CA1`, {});
    expect(
      twilio.verify(
        request({ "x-twilio-signature": get }, Buffer.alloc(0), NOW, "CallSid=CA1"),
        settings(["token"]),
      ),
    ).toEqual({ ok: true });
    const signed = twilio.sign(
      {
        rawBody: Buffer.alloc(0),
        rawQuery: "CallSid=CA1",
        timestampSeconds: NOW,
        deliveryId: "id",
        secret: "token",
      },
      settings(["token"]),
    );
    expect(signed.headers["x-twilio-signature"]).toBe(get);
  });
});

describe("twilio scheme, the rest", () => {
  it("names a missing header and takes the idempotency token as delivery id", () => {
    expect(twilio.verify(request(FORM, Buffer.from("a=1"), NOW), settings(["token"]))).toEqual({
      ok: false,
      reason: "signature header missing",
    });
    expect(twilio.deliveryId({ "i-twilio-idempotency-token": "tok-1" }, {}, settings(["token"]))).toBe(
      "tok-1",
    );
    expect(twilio.signatureHeaders).toEqual(["x-twilio-signature"]);
    expect(twilio.checkSecret("")).toBeDefined();
    expect(twilio.checkSecret("0123456789abcdef0123456789abcdef")).toBeUndefined();
  });
});
