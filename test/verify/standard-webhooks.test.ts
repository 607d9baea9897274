/** @module Standard Webhooks against the standardwebhooks library (v1), and ed25519 keys from node:crypto (v1a, which the library lacks). */
import { createHmac, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { standardWebhooks } from "../../src/verify/schemes/standard-webhooks.js";
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
  textBody,
  windowReason,
} from "./arbitraries.js";

const settings = (secrets: string[], toleranceSeconds = 300): SignatureSettings => ({
  scheme: "standard-webhooks",
  secrets,
  toleranceSeconds,
});

const keyBytes = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes));
/** Both spellings the library takes: `whsec_<base64>` and the base64 alone. */
const hmacSecret = fc
  .tuple(keyBytes, fc.boolean())
  .map(([bytes, prefixed]) => (prefixed ? "whsec_" : "") + bytes.toString("base64"));
const hmacSecretPair = fc
  .tuple(keyBytes, keyBytes)
  .filter(([a, b]) => !a.equals(b))
  .map(([a, b]): [string, string] => [`whsec_${a.toString("base64")}`, `whsec_${b.toString("base64")}`]);
const msgId = fc.stringMatching(/^msg_[A-Za-z0-9]{1,24}$/);
const anyBody = fc.oneof(
  textBody.map((body) => Buffer.from(body)),
  bytesBody,
);

function rawKey(secret: string): Buffer {
  return Buffer.from(secret.replace(/^whsec_/, ""), "base64");
}

function v1(secret: string, id: string, timestamp: number, body: Buffer): string {
  return createHmac("sha256", rawKey(secret)).update(`${id}.${timestamp}.`).update(body).digest("base64");
}

interface Ed25519 {
  privateKey: KeyObject;
  /** `whpk_<base64 raw public key>` */
  whpk: string;
  /** `whsk_<base64 raw seed>` */
  whsk: string;
}

function ed25519(): Ed25519 {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  return {
    privateKey,
    whpk: `whpk_${Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url").toString("base64")}`,
    whsk: `whsk_${Buffer.from(jwk.d!, "base64url").toString("base64")}`,
  };
}

function v1a(key: KeyObject, id: string, timestamp: number, body: Buffer): string {
  return sign(null, Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]), key).toString("base64");
}

function headers(id: string, timestamp: number, signature: string): Record<string, string> {
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signature };
}

/** Key pairs are slow to make: a few, reused across runs. */
const KEYS = [ed25519(), ed25519(), ed25519()];
const keyIndex = fc.nat({ max: KEYS.length - 1 });

describe("standard-webhooks scheme", () => {
  it("accepts what the standardwebhooks library signs (whsec_ and bare base64 secrets)", () => {
    fc.assert(
      fc.property(
        hmacSecret,
        msgId,
        textBody,
        clock,
        (secret, id, payload, { signedAt, now, toleranceSeconds }) => {
          const signature = new Webhook(secret).sign(id, new Date(signedAt * 1000), payload);
          const verdict = standardWebhooks.verify(
            request(headers(id, signedAt, signature), Buffer.from(payload), now),
            settings([secret], toleranceSeconds),
          );
          expect(verdict).toEqual({ ok: true });
        },
      ),
      RUNS,
    );
  });

  it("refuses any one byte changed, v1 and v1a alike", () => {
    fc.assert(
      fc.property(
        hmacSecret,
        keyIndex,
        msgId,
        tamperedBody(anyBody),
        clock,
        (secret, k, id, { body, changed }, { signedAt, now }) => {
          const key = KEYS[k]!;
          const both = `v1,${v1(secret, id, signedAt, body)} v1a,${v1a(key.privateKey, id, signedAt, body)}`;
          const s = settings([secret, key.whpk], 3600);
          expect(standardWebhooks.verify(request(headers(id, signedAt, both), body, now), s)).toEqual({
            ok: true,
          });
          expect(standardWebhooks.verify(request(headers(id, signedAt, both), changed, now), s)).toEqual({
            ok: false,
            reason: "signature mismatch",
          });
        },
      ),
      RUNS,
    );
  });

  it("accepts a v1a signature among wrong ones with the whpk_ public key", () => {
    fc.assert(
      fc.property(keyIndex, keyIndex, msgId, anyBody, clock, (k, other, id, body, { signedAt, now }) => {
        fc.pre(k !== other);
        const key = KEYS[k]!;
        const wrong = v1a(KEYS[other]!.privateKey, id, signedAt, body);
        const list = `v1a,${wrong} v2,unknown v1,${"A".repeat(44)} v1a,${v1a(key.privateKey, id, signedAt, body)}`;
        expect(
          standardWebhooks.verify(
            request(headers(id, signedAt, list), body, now),
            settings([key.whpk], 3600),
          ),
        ).toEqual({ ok: true });
        expect(
          standardWebhooks.verify(
            request(headers(id, signedAt, `v1a,${wrong}`), body, now),
            settings([key.whpk], 3600),
          ),
        ).toEqual({ ok: false, reason: "signature mismatch" });
      }),
      RUNS,
    );
  });

  it("refuses a timestamp outside the window, either way, with how far", () => {
    fc.assert(
      fc.property(hmacSecret, msgId, anyBody, staleClock, (secret, id, body, stale) => {
        const signature = `v1,${v1(secret, id, stale.signedAt, body)}`;
        const verdict = standardWebhooks.verify(
          request(headers(id, stale.signedAt, signature), body, stale.now),
          settings([secret], stale.toleranceSeconds),
        );
        expect(verdict).toEqual({ ok: false, reason: windowReason(stale) });
      }),
      RUNS,
    );
  });

  it("accepts the right secret second in the list, refuses a wrong one", () => {
    fc.assert(
      fc.property(hmacSecretPair, msgId, anyBody, clock, ([right, wrong], id, body, { signedAt, now }) => {
        const h = headers(id, signedAt, `v1,${v1(right, id, signedAt, body)}`);
        expect(standardWebhooks.verify(request(h, body, now), settings([wrong, right], 3600)).ok).toBe(true);
        expect(standardWebhooks.verify(request(h, body, now), settings([wrong], 3600))).toEqual({
          ok: false,
          reason: "signature mismatch",
        });
      }),
      RUNS,
    );
  });

  it("signs v1 that it verifies and the library verifies", () => {
    fc.assert(
      fc.property(hmacSecret, msgId, jsonText, (secret, id, payload) => {
        // The library checks the timestamp against its own clock.
        const nowSeconds = Math.floor(Date.now() / 1000);
        const body = Buffer.from(payload);
        const signed = standardWebhooks.sign(
          { rawBody: body, rawQuery: "", timestampSeconds: nowSeconds, deliveryId: id, secret },
          settings([secret]),
        );
        expect(signed.headers["webhook-id"]).toBe(id);
        expect(standardWebhooks.verify(requestFrom(signed, body, nowSeconds), settings([secret]))).toEqual({
          ok: true,
        });
        expect(() => new Webhook(secret).verify(payload, signed.headers)).not.toThrow();
      }),
      RUNS,
    );
  });

  it("signs v1a with a whsk_ seed, verified by its whpk_ key (and by itself); a whpk_ key cannot sign", () => {
    fc.assert(
      fc.property(keyIndex, msgId, anyBody, clock, (k, id, body, { signedAt, now }) => {
        const key = KEYS[k]!;
        const input = {
          rawBody: body,
          rawQuery: "",
          timestampSeconds: signedAt,
          deliveryId: id,
          secret: key.whsk,
        };
        const signed = standardWebhooks.sign(input, settings([key.whpk]));
        expect(signed.headers["webhook-signature"]).toMatch(/^v1a,/);
        expect(standardWebhooks.verify(requestFrom(signed, body, now), settings([key.whpk], 3600))).toEqual({
          ok: true,
        });
        expect(standardWebhooks.verify(requestFrom(signed, body, now), settings([key.whsk], 3600))).toEqual({
          ok: true,
        });
        expect(() => standardWebhooks.sign({ ...input, secret: key.whpk }, settings([key.whpk]))).toThrow(
          /public key cannot sign/,
        );
      }),
      { numRuns: 20 },
    );
  });

  it("takes the 64-byte seed-and-public-key form of whsk_", () => {
    const key = KEYS[0]!;
    const seed = Buffer.from(key.whsk.slice(5), "base64");
    const pub = Buffer.from(key.whpk.slice(5), "base64");
    const long = `whsk_${Buffer.concat([seed, pub]).toString("base64")}`;
    expect(standardWebhooks.checkSecret(long)).toBeUndefined();
    const body = Buffer.from("{}");
    const signed = standardWebhooks.sign(
      { rawBody: body, rawQuery: "", timestampSeconds: 10, deliveryId: "msg_1", secret: long },
      settings([key.whpk]),
    );
    expect(standardWebhooks.verify(requestFrom(signed, body, 10), settings([key.whpk]))).toEqual({
      ok: true,
    });
  });

  it("names what is missing or malformed", () => {
    const body = Buffer.from("{}");
    const good = headers("msg_1", 1000, `v1,${v1("whsec_c2VjcmV0", "msg_1", 1000, body)}`);
    const verify = (h: Record<string, string>) =>
      standardWebhooks.verify(request(h, body, 1000), settings(["whsec_c2VjcmV0"]));
    const without = (name: string) =>
      Object.fromEntries(Object.entries(good).filter(([key]) => key !== name));
    expect(verify(good)).toEqual({ ok: true });
    expect(verify(without("webhook-signature"))).toEqual({ ok: false, reason: "signature header missing" });
    expect(verify(without("webhook-id"))).toEqual({ ok: false, reason: "id header missing" });
    expect(verify(without("webhook-timestamp"))).toEqual({ ok: false, reason: "timestamp header missing" });
    expect(verify({ ...good, "webhook-timestamp": "soon" })).toEqual({
      ok: false,
      reason: "timestamp header malformed",
    });
    expect(verify({ ...good, "webhook-signature": "v2,abc nonsense" })).toEqual({
      ok: false,
      reason: "signature header malformed",
    });
    expect(verify({ ...good, "webhook-id": "msg_2" })).toEqual({ ok: false, reason: "signature mismatch" });
  });

  it("checks secrets without quoting them", () => {
    const key = KEYS[0]!;
    expect(standardWebhooks.checkSecret("whsec_c2VjcmV0")).toBeUndefined();
    expect(standardWebhooks.checkSecret("c2VjcmV0")).toBeUndefined();
    expect(standardWebhooks.checkSecret(key.whpk)).toBeUndefined();
    expect(standardWebhooks.checkSecret(key.whsk)).toBeUndefined();
    for (const bad of [
      "whsec_hunter2!",
      "hunter2 hunter2",
      "whpk_aHVudGVyMg==",
      "whsk_aHVudGVyMg==",
      "",
      "whsec_",
    ]) {
      const problem = standardWebhooks.checkSecret(bad);
      expect(problem, bad).toBeDefined();
      expect(problem).not.toContain("hunter2");
      expect(problem).not.toContain("aHVudGVyMg");
    }
  });

  it("takes the delivery id from webhook-id", () => {
    expect(standardWebhooks.deliveryId({ "webhook-id": "msg_1" }, {}, settings(["c2VjcmV0"]))).toBe("msg_1");
    expect(standardWebhooks.signatureHeaders).toEqual(["webhook-signature", "svix-signature"]);
  });
});

describe("standard-webhooks: Svix's header names", () => {
  it("accepts svix-id, svix-timestamp and svix-signature as Svix-based senders send them, and takes the id from svix-id", () => {
    const secret = `whsec_${Buffer.from("svix-test-key-0123456789").toString("base64")}`;
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from('{"type":"user.created"}');
    const signature = new Webhook(secret).sign("msg_svix", new Date(now * 1000), body.toString());
    const svixHeaders = { "svix-id": "msg_svix", "svix-timestamp": String(now), "svix-signature": signature };
    const request = { headers: svixHeaders, rawBody: body, rawQuery: "", nowSeconds: now };
    expect(standardWebhooks.verify(request, settings([secret]))).toEqual({ ok: true });
    expect(standardWebhooks.deliveryId(svixHeaders, undefined, settings([secret]))).toBe("msg_svix");
    expect(standardWebhooks.signatureHeaders).toContain("svix-signature");
  });
});
