/** @module Meta's scheme against its documented recipe (HMAC-SHA256 of the raw body with the app secret, computed here with node:crypto) and its subscription query. */
import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { meta } from "../../src/verify/schemes/meta.js";
import type { SignatureSettings } from "../../src/verify/signature-scheme.js";
import { bytesBody, RUNS, request, requestFrom, secret, secretPair, tamperedBody } from "./arbitraries.js";

const settings = (secrets: string[]): SignatureSettings => ({
  scheme: "meta",
  secrets,
  toleranceSeconds: 300,
  verifyToken: "a-verify-token",
});
const NOW = 1_700_000_000;

/** https://developers.facebook.com/docs/graph-api/webhooks/getting-started: `sha256=` + hex HMAC-SHA256 of the payload. */
const metaSignature = (key: string, body: Buffer) =>
  `sha256=${createHmac("sha256", key).update(body).digest("hex")}`;

describe("meta scheme", () => {
  it("accepts the documented signature on any bytes and refuses any one byte changed", () => {
    fc.assert(
      fc.property(secret, tamperedBody(bytesBody), (key, { body, changed }) => {
        const headers = { "x-hub-signature-256": metaSignature(key, body) };
        expect(meta.verify(request(headers, body, NOW), settings([key]))).toEqual({ ok: true });
        expect(meta.verify(request(headers, changed, NOW), settings([key]))).toEqual({
          ok: false,
          reason: "signature mismatch",
        });
      }),
      RUNS,
    );
  });

  it("signs as Meta does (replay), with no timestamp and no delivery id, at any time", () => {
    fc.assert(
      fc.property(secretPair, bytesBody, ([key, other], body) => {
        const signed = meta.sign(
          { rawBody: body, rawQuery: "", timestampSeconds: NOW, deliveryId: "ignored", secret: key },
          settings([key]),
        );
        expect(signed.headers).toEqual({ "x-hub-signature-256": metaSignature(key, body) });
        // Nothing in it ages: a year later it verifies the same (only the duplicate check can catch a copy).
        expect(meta.verify(requestFrom(signed, body, NOW + 31_536_000), settings([other, key]))).toEqual({
          ok: true,
        });
        expect(meta.verify(requestFrom(signed, body, NOW), settings([other]))).toEqual({
          ok: false,
          reason: "signature mismatch",
        });
        expect(meta.deliveryId(signed.headers, { entry: [{ id: "1" }] }, settings([key]))).toBeUndefined();
      }),
      RUNS,
    );
  });

  it("refuses a missing or malformed header, and an access token pasted as the app secret", () => {
    const body = Buffer.from("{}");
    expect(meta.verify(request({}, body, NOW), settings(["s"]))).toEqual({
      ok: false,
      reason: "signature header missing",
    });
    const sha1 = { "x-hub-signature": `sha1=${createHmac("sha1", "s").update(body).digest("hex")}` };
    expect(meta.verify(request(sha1, body, NOW), settings(["s"]))).toEqual({
      ok: false,
      reason: "signature header missing",
    });
    expect(meta.verify(request({ "x-hub-signature-256": "abc" }, body, NOW), settings(["s"]))).toEqual({
      ok: false,
      reason: "signature header malformed",
    });
    expect(meta.checkSecret("EAAGm0PX4ZCpsBAKZAc")).toMatch(/access token/);
    expect(meta.checkSecret("0123456789abcdef0123456789abcdef")).toBeUndefined();
    expect(meta.checkSecret(" 0123 ")).toMatch(/whitespace/);
  });

  it("reads the subscription query: the verify token, then a subscribe with a challenge fit to echo", () => {
    const handshake = meta.getHandshake!;
    const query = (text: string) => new URLSearchParams(text);
    expect(handshake.verifyTokenOf(query("hub.mode=subscribe&hub.verify_token=t%20k"))).toBe("t k");
    expect(handshake.verifyTokenOf(query("hub.verify_token="))).toBeUndefined();
    expect(handshake.verifyTokenOf(undefined)).toBeUndefined();
    expect(handshake.challengeOf(query("hub.mode=subscribe&hub.challenge=1158201444"))).toEqual({
      ok: true,
      challenge: "1158201444",
    });
    expect(handshake.challengeOf(query("hub.mode=unsubscribe&hub.challenge=1"))).toEqual({
      ok: false,
      reason: "hub.mode is not subscribe",
    });
    expect(handshake.challengeOf(query("hub.mode=subscribe"))).toEqual({
      ok: false,
      reason: "challenge missing",
    });
    for (const odd of ["<script>", "a b", "x".repeat(257), "é"]) {
      const verdict = handshake.challengeOf(
        new URLSearchParams({ "hub.mode": "subscribe", "hub.challenge": odd }),
      );
      expect(verdict.ok, odd).toBe(odd === "<script>");
    }
  });
});
