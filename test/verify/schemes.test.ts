/** @module The scheme table: every name has its scheme, signature headers are collected, and no reason ever carries a secret. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SCHEMES, SIGNATURE_HEADERS, schemeFor } from "../../src/verify/schemes/index.js";
import { SIGNATURE_SCHEMES, type SignatureSettings } from "../../src/verify/signature-scheme.js";
import { REASON } from "./arbitraries.js";

const settingsFor = (scheme: (typeof SIGNATURE_SCHEMES)[number], secret: string): SignatureSettings => ({
  scheme,
  secrets: [secret],
  toleranceSeconds: 300,
  publicUrl: "https://hooks.example.com/t",
  hmac: {
    header: "x-sig",
    algorithm: "sha256",
    encoding: "hex",
    prefix: "v1=",
    timestampHeader: "x-ts",
    signedContent: "{id}.{timestamp}.{body}",
    idHeader: "x-id",
  },
});

describe("scheme table", () => {
  it("has a scheme under each name, named as its key", () => {
    expect(Object.keys(SCHEMES).sort()).toEqual([...SIGNATURE_SCHEMES].sort());
    for (const name of SIGNATURE_SCHEMES) {
      expect(schemeFor(name).name).toBe(name);
    }
  });

  it("collects every scheme's signature headers, once each, lower-cased", () => {
    const all = Object.values(SCHEMES).flatMap((scheme) => scheme.signatureHeaders);
    expect(new Set(SIGNATURE_HEADERS)).toEqual(new Set(all));
    expect(SIGNATURE_HEADERS.length).toBe(new Set(SIGNATURE_HEADERS).size);
    for (const header of SIGNATURE_HEADERS) expect(header).toBe(header.toLowerCase());
  });

  it("signsTimestamp says whether a signature made an hour ago is refused now", () => {
    const now = 1_760_000_000;
    for (const name of SIGNATURE_SCHEMES) {
      const scheme = schemeFor(name);
      const secret = "whsec_c2VjcmV0c2VjcmV0";
      // The generic scheme as the field describes it: no timestamp unless a mapping signs one.
      const settings = {
        ...settingsFor(name, secret),
        hmac: { ...settingsFor(name, secret).hmac!, timestampHeader: undefined, signedContent: "{body}" },
      };
      const rawBody = Buffer.from('{"id":"evt_1","event_id":"Ev1"}');
      const signed = scheme.sign(
        {
          rawBody,
          rawQuery: "",
          timestampSeconds: now - 3600,
          deliveryId: "d-1",
          secret,
          contentType: "application/json",
        },
        settings,
      );
      const verdict = scheme.verify(
        {
          headers: { "content-type": "application/json", ...signed.headers },
          rawBody,
          rawQuery: signed.rawQuery ?? "",
          nowSeconds: now,
        },
        settings,
      );
      expect({ name, ok: verdict.ok }).toEqual({ name, ok: !scheme.signsTimestamp });
    }
  });

  it("logs only the fixed reasons, whatever a forger sends", () => {
    const header = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 30 }),
      fc.stringMatching(/^[0-9]{1,12}$/),
    );
    const forged = fc.record({
      signature: header,
      timestamp: header,
      id: header,
      contentType: fc.constantFrom(undefined, "application/json", "application/x-www-form-urlencoded"),
      rawQuery: fc.oneof(fc.constant(""), fc.string({ maxLength: 20 })),
      body: fc.uint8Array({ maxLength: 50 }).map((bytes) => Buffer.from(bytes)),
    });
    fc.assert(
      fc.property(fc.constantFrom(...SIGNATURE_SCHEMES), forged, (name, f) => {
        const secret = "whsec_c2VjcmV0c2VjcmV0";
        const headers: Record<string, string> = {};
        const set = (names: string[], value: string | undefined) => {
          if (value !== undefined) for (const n of names) headers[n] = value;
        };
        set([...SIGNATURE_HEADERS, "x-sig"], f.signature);
        set(["x-slack-request-timestamp", "webhook-timestamp", "x-ts"], f.timestamp);
        set(["webhook-id", "x-id"], f.id);
        set(["content-type"], f.contentType);
        const verdict = schemeFor(name).verify(
          { headers, rawBody: f.body, rawQuery: f.rawQuery, nowSeconds: 1_700_000_000 },
          settingsFor(name, secret),
        );
        if (!verdict.ok) expect(verdict.reason).toMatch(REASON);
      }),
      { numRuns: 300 },
    );
  });
});

describe("signature headers are credentials", () => {
  it("every scheme's signature headers are on the one credential list", async () => {
    const { CREDENTIAL_HEADERS } = await import("../../src/safety/credentials.js");
    for (const header of SIGNATURE_HEADERS) expect(CREDENTIAL_HEADERS.has(header)).toBe(true);
  });
});
