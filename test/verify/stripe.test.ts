/** @module Stripe's scheme against the stripe library's own test-header signer and its constructEvent. */
import { createHmac } from "node:crypto";
import fc from "fast-check";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { stripe } from "../../src/verify/schemes/stripe.js";
import type { SignatureSettings } from "../../src/verify/signature-scheme.js";
import {
  bytesBody,
  clock,
  jsonText,
  RUNS,
  request,
  requestFrom,
  staleClock,
  tamperedBody,
  text,
  textBody,
  windowReason,
} from "./arbitraries.js";

const client = new Stripe("sk_test_x");
const settings = (secrets: string[], toleranceSeconds = 300): SignatureSettings => ({
  scheme: "stripe",
  secrets,
  toleranceSeconds,
});
const whsec = text({ minLength: 1 }).map((rest) => `whsec_${rest}`);
const whsecPair = fc.tuple(whsec, whsec).filter(([a, b]) => a !== b);

function v1(key: string, timestamp: number, body: Buffer): string {
  return createHmac("sha256", key).update(`${timestamp}.`).update(body).digest("hex");
}

describe("stripe scheme", () => {
  it("accepts what stripe's generateTestHeaderString signs, anywhere inside the window", () => {
    fc.assert(
      fc.property(whsec, textBody, clock, (key, payload, { signedAt, now, toleranceSeconds }) => {
        const header = client.webhooks.generateTestHeaderString({
          payload,
          secret: key,
          timestamp: signedAt,
        });
        const verdict = stripe.verify(
          request({ "stripe-signature": header }, Buffer.from(payload), now),
          settings([key], toleranceSeconds),
        );
        expect(verdict).toEqual({ ok: true });
      }),
      RUNS,
    );
  });

  it("accepts any one v1 that matches, ignores v0, refuses any one byte changed", () => {
    fc.assert(
      fc.property(whsec, tamperedBody(bytesBody), clock, (key, { body, changed }, { signedAt, now }) => {
        const header = `t=${signedAt},v1=${"0".repeat(64)},v1=${v1(key, signedAt, body)},v0=${"f".repeat(64)}`;
        expect(
          stripe.verify(request({ "stripe-signature": header }, body, now), settings([key], 3600)),
        ).toEqual({
          ok: true,
        });
        expect(
          stripe.verify(request({ "stripe-signature": header }, changed, now), settings([key], 3600)),
        ).toEqual({ ok: false, reason: "signature mismatch" });
      }),
      RUNS,
    );
  });

  it("refuses a timestamp outside the window, either way, with how far", () => {
    fc.assert(
      fc.property(whsec, bytesBody, staleClock, (key, body, stale) => {
        const header = `t=${stale.signedAt},v1=${v1(key, stale.signedAt, body)}`;
        const verdict = stripe.verify(
          request({ "stripe-signature": header }, body, stale.now),
          settings([key], stale.toleranceSeconds),
        );
        expect(verdict).toEqual({ ok: false, reason: windowReason(stale) });
      }),
      RUNS,
    );
  });

  it("accepts the right secret second in the list, refuses a wrong one", () => {
    fc.assert(
      fc.property(whsecPair, bytesBody, clock, ([right, wrong], body, { signedAt, now }) => {
        const headers = { "stripe-signature": `t=${signedAt},v1=${v1(right, signedAt, body)}` };
        expect(stripe.verify(request(headers, body, now), settings([wrong, right], 3600)).ok).toBe(true);
        expect(stripe.verify(request(headers, body, now), settings([wrong], 3600))).toEqual({
          ok: false,
          reason: "signature mismatch",
        });
      }),
      RUNS,
    );
  });

  it("signs what it verifies and what stripe's constructEvent accepts", () => {
    fc.assert(
      fc.property(whsec, jsonText, clock, (key, payload, { signedAt, now }) => {
        const body = Buffer.from(payload);
        const signed = stripe.sign(
          { rawBody: body, rawQuery: "", timestampSeconds: signedAt, deliveryId: "unused", secret: key },
          settings([key]),
        );
        expect(stripe.verify(requestFrom(signed, body, now), settings([key], 3600))).toEqual({ ok: true });
        const header = signed.headers["stripe-signature"]!;
        expect(() =>
          client.webhooks.constructEvent(payload, header, key, 3600, undefined, now * 1000),
        ).not.toThrow();
      }),
      RUNS,
    );
  });

  it("names what is wrong with the header", () => {
    const body = Buffer.from("{}");
    const verify = (header?: string) =>
      stripe.verify(
        request(header === undefined ? {} : { "stripe-signature": header }, body, 100),
        settings(["whsec_x"]),
      );
    expect(verify()).toEqual({ ok: false, reason: "signature header missing" });
    expect(verify("garbage")).toEqual({ ok: false, reason: "signature header malformed" });
    expect(verify("t=100")).toEqual({ ok: false, reason: "signature header malformed" });
    expect(verify(`v1=${"0".repeat(64)}`)).toEqual({ ok: false, reason: "signature header malformed" });
    expect(verify(`t=1e2,v1=${"0".repeat(64)}`)).toEqual({ ok: false, reason: "timestamp header malformed" });
    expect(verify(`t=100,v1=${"0".repeat(64)}`)).toEqual({ ok: false, reason: "signature mismatch" });
  });

  it("takes the delivery id from the event's id", () => {
    const s = settings(["whsec_x"]);
    expect(stripe.deliveryId({}, { id: "evt_1", object: "event" }, s)).toBe("evt_1");
    expect(stripe.deliveryId({}, { id: 7 }, s)).toBeUndefined();
    expect(stripe.deliveryId({}, ["evt_1"], s)).toBeUndefined();
    expect(stripe.deliveryId({}, undefined, s)).toBeUndefined();
    expect(stripe.signatureHeaders).toEqual(["stripe-signature"]);
  });

  it("wants a whsec_ secret, and says so without quoting what it got", () => {
    expect(stripe.checkSecret("whsec_abc")).toBeUndefined();
    const apiKey = stripe.checkSecret("sk_test_hunter2");
    expect(apiKey).toMatch(/whsec_/);
    expect(apiKey).not.toContain("hunter2");
    expect(stripe.checkSecret("")).toBeDefined();
    expect(stripe.checkSecret("whsec_abc ")).toBeDefined();
  });
});
