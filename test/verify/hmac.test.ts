/** @module The generic hmac scheme in a few sender configurations, against the same HMAC computed here with node:crypto. */
import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hmac } from "../../src/verify/schemes/hmac.js";
import type { HmacOptions, SignatureSettings } from "../../src/verify/signature-scheme.js";
import {
  bytesBody,
  clock,
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

const CONFIGS: Record<string, HmacOptions> = {
  "sha1, hex, prefixed": {
    header: "x-hub-signature",
    algorithm: "sha1",
    encoding: "hex",
    prefix: "sha1=",
    signedContent: "{body}",
  },
  "sha512, base64": {
    header: "x-signature",
    algorithm: "sha512",
    encoding: "base64",
    prefix: "",
    signedContent: "{body}",
  },
  "sha256, timestamp.body": {
    header: "x-sig",
    algorithm: "sha256",
    encoding: "hex",
    prefix: "v1=",
    timestampHeader: "x-ts",
    signedContent: "{timestamp}.{body}",
    idHeader: "x-delivery",
  },
  "sha256, id:timestamp:body": {
    header: "x-sig",
    algorithm: "sha256",
    encoding: "base64",
    prefix: "",
    timestampHeader: "x-ts",
    signedContent: "{id}:{timestamp}:{body}",
    idHeader: "x-delivery",
  },
};

const settings = (
  hmacOptions: HmacOptions,
  secrets: string[],
  toleranceSeconds = 300,
): SignatureSettings => ({
  scheme: "hmac",
  secrets,
  toleranceSeconds,
  hmac: hmacOptions,
});

/** The sender's side, written out independently: the template's text with the body's bytes spliced in. */
function senderHeaders(options: HmacOptions, key: string, body: Buffer, timestamp: number, id: string) {
  const [before, after] = options.signedContent
    .replaceAll("{timestamp}", String(timestamp))
    .replaceAll("{id}", id)
    .split("{body}") as [string, string];
  const content = Buffer.concat([Buffer.from(before), body, Buffer.from(after)]);
  const headers: Record<string, string> = {
    [options.header]:
      options.prefix + createHmac(options.algorithm, key).update(content).digest(options.encoding),
  };
  if (options.timestampHeader) headers[options.timestampHeader] = String(timestamp);
  if (options.idHeader) headers[options.idHeader] = id;
  return headers;
}

const anyBody = fc.oneof(
  textBody.map((body) => Buffer.from(body)),
  bytesBody,
);
const deliveryId = fc.stringMatching(/^[A-Za-z0-9-]{1,36}$/);

describe.each(Object.entries(CONFIGS))("hmac scheme: %s", (_label, options) => {
  it("accepts what the sender signs and refuses any one byte changed", () => {
    fc.assert(
      fc.property(secret, tamperedBody(anyBody), clock, deliveryId, (key, { body, changed }, time, id) => {
        const headers = senderHeaders(options, key, body, time.signedAt, id);
        const s = settings(options, [key], time.toleranceSeconds);
        expect(hmac.verify(request(headers, body, time.now), s)).toEqual({ ok: true });
        expect(hmac.verify(request(headers, changed, time.now), s)).toEqual({
          ok: false,
          reason: "signature mismatch",
        });
      }),
      RUNS,
    );
  });

  it("accepts the right secret second in the list, refuses a wrong one", () => {
    fc.assert(
      fc.property(secretPair, anyBody, clock, deliveryId, ([right, wrong], body, time, id) => {
        const headers = senderHeaders(options, right, body, time.signedAt, id);
        expect(
          hmac.verify(request(headers, body, time.now), settings(options, [wrong, right], 3600)).ok,
        ).toBe(true);
        expect(hmac.verify(request(headers, body, time.now), settings(options, [wrong], 3600))).toEqual({
          ok: false,
          reason: "signature mismatch",
        });
      }),
      RUNS,
    );
  });

  it("signs exactly what the sender signs, and verifies it", () => {
    fc.assert(
      fc.property(secret, anyBody, clock, deliveryId, (key, body, time, id) => {
        const signed = hmac.sign(
          { rawBody: body, rawQuery: "", timestampSeconds: time.signedAt, deliveryId: id, secret: key },
          settings(options, [key]),
        );
        expect(signed.headers).toEqual(senderHeaders(options, key, body, time.signedAt, id));
        expect(hmac.verify(requestFrom(signed, body, time.now), settings(options, [key], 3600))).toEqual({
          ok: true,
        });
      }),
      RUNS,
    );
  });

  it("names a missing or malformed signature header, and takes the delivery id from idHeader", () => {
    const body = Buffer.from("{}");
    const headers = senderHeaders(options, "s", body, 1000, "d-1");
    const without = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== options.header));
    expect(hmac.verify(request(without, body, 1000), settings(options, ["s"]))).toEqual({
      ok: false,
      reason: "signature header missing",
    });
    if (options.prefix !== "") {
      const bare = { ...headers, [options.header]: headers[options.header]!.slice(options.prefix.length) };
      expect(hmac.verify(request(bare, body, 1000), settings(options, ["s"]))).toEqual({
        ok: false,
        reason: "signature header malformed",
      });
    }
    expect(hmac.deliveryId(headers, {}, settings(options, ["s"]))).toBe(options.idHeader ? "d-1" : undefined);
    expect(hmac.signatureHeaders).toEqual([]);
  });
});

const TIMED = Object.entries(CONFIGS).filter(([, options]) => options.timestampHeader !== undefined);

describe.each(TIMED)("hmac scheme with a timestamp: %s", (_label, options) => {
  it("refuses a timestamp outside the window, either way, with how far", () => {
    fc.assert(
      fc.property(secret, anyBody, staleClock, deliveryId, (key, body, stale, id) => {
        const headers = senderHeaders(options, key, body, stale.signedAt, id);
        const verdict = hmac.verify(
          request(headers, body, stale.now),
          settings(options, [key], stale.toleranceSeconds),
        );
        expect(verdict).toEqual({ ok: false, reason: windowReason(stale) });
      }),
      RUNS,
    );
  });
});

describe("hmac scheme: headers the template needs", () => {
  const options = CONFIGS["sha256, id:timestamp:body"]!;
  const body = Buffer.from("{}");
  const headers = senderHeaders(options, "s", body, 1000, "d-1");
  const without = (name: string) =>
    Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));

  it("names a missing timestamp or id header", () => {
    expect(hmac.verify(request(without("x-ts"), body, 1000), settings(options, ["s"]))).toEqual({
      ok: false,
      reason: "timestamp header missing",
    });
    expect(hmac.verify(request({ ...headers, "x-ts": "-5" }, body, 1000), settings(options, ["s"]))).toEqual({
      ok: false,
      reason: "timestamp header malformed",
    });
    expect(hmac.verify(request(without("x-delivery"), body, 1000), settings(options, ["s"]))).toEqual({
      ok: false,
      reason: "id header missing",
    });
  });

  it("throws on options the config check refuses, rather than verifying something else", () => {
    const broken = { ...options, idHeader: undefined };
    expect(() => hmac.verify(request(headers, body, 1000), settings(broken, ["s"]))).toThrow(/\{id\}/);
    expect(() =>
      hmac.verify(request(headers, body, 1000), { scheme: "hmac", secrets: ["s"], toleranceSeconds: 300 }),
    ).toThrow(/hmac options/);
  });
});
