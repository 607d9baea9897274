/** @module Standard Webhooks: `webhook-signature` lists `v1,<HMAC-SHA256>` and `v1a,<ed25519>` signatures of `<id>.<timestamp>.<body>`. */
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { SignatureScheme } from "../signature-scheme.js";
import { equalBytes, headerValue, macOf, timestampProblem } from "./compare.js";

const ID = "webhook-id";
const TIMESTAMP = "webhook-timestamp";
const SIGNATURE = "webhook-signature";
/** Svix, the service behind many Standard Webhooks senders, sends the same three under its own names. */
const SVIX = { [ID]: "svix-id", [TIMESTAMP]: "svix-timestamp", [SIGNATURE]: "svix-signature" } as const;

/** The standard header, else its Svix name: one request carries one set or the other. */
function read(headers: IncomingHttpHeaders, name: keyof typeof SVIX): string | undefined {
  return headerValue(headers, name) ?? headerValue(headers, SVIX[name]);
}

/** node:crypto takes a raw ed25519 seed only inside its PKCS#8 envelope; this is the envelope's fixed head. */
const PKCS8_ED25519 = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * The secrets this scheme takes:
 * - `whsec_<base64>`, or the base64 alone as the `standardwebhooks` library allows: the decoded bytes key `v1`.
 * - `whpk_<base64>`: the raw 32-byte ed25519 public key; verifies `v1a`, cannot sign.
 * - `whsk_<base64>`: the raw 32-byte ed25519 seed (or the 64-byte libsodium form, seed then public key,
 *   of which the seed is used); signs `v1a` and verifies with the public key it implies.
 */
type Key =
  | { kind: "hmac"; secret: Buffer }
  | { kind: "public"; key: KeyObject }
  | { kind: "private"; key: KeyObject; publicKey: KeyObject };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Buffer's own decoder skips characters it does not know; a typo must not quietly become another key. */
function decodeBase64(text: string): Buffer | undefined {
  if (!BASE64.test(text)) return undefined;
  const padded = text.endsWith("=");
  if (padded ? text.length % 4 !== 0 : text.length % 4 === 1) return undefined;
  const bytes = Buffer.from(text, "base64");
  return bytes.length === 0 ? undefined : bytes;
}

/** The key, or what is wrong with the secret (never the secret itself). */
function parseKey(secret: string): Key | string {
  if (secret.startsWith("whpk_")) {
    const raw = decodeBase64(secret.slice(5));
    if (raw?.length !== 32) return "a whpk_ key must be the base64 of a 32-byte ed25519 public key";
    // The JWK import is about 14 µs where the DER one takes about 110: cheap enough to decode per request, uncached.
    try {
      const jwk = { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") };
      return { kind: "public", key: createPublicKey({ key: jwk, format: "jwk" }) };
    } catch {
      return "a whpk_ key must be an ed25519 public key";
    }
  }
  if (secret.startsWith("whsk_")) {
    const raw = decodeBase64(secret.slice(5));
    if (raw?.length !== 32 && raw?.length !== 64)
      return "a whsk_ key must be the base64 of a 32-byte ed25519 seed (or the 64-byte seed and public key)";
    const seed = raw.subarray(0, 32);
    const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: "der", type: "pkcs8" });
    return { kind: "private", key, publicKey: createPublicKey(key) };
  }
  const raw = decodeBase64(secret.startsWith("whsec_") ? secret.slice(6) : secret);
  if (raw === undefined)
    return "the secret must be whsec_<base64>, bare base64, whpk_<base64> or whsk_<base64>";
  return { kind: "hmac", secret: raw };
}

function signedPrefix(id: string, timestamp: string): string {
  return `${id}.${timestamp}.`;
}

function hmacSignature(secret: Buffer, id: string, timestamp: string, body: Buffer): string {
  return macOf("sha256", secret, [signedPrefix(id, timestamp), body]).toString("base64");
}

interface Signatures {
  v1: string[];
  v1a: Buffer[];
}

/** Unknown versions are skipped, as the reference library does: a sender may add schemes before receivers know them. */
function parseSignatures(value: string): Signatures {
  const found: Signatures = { v1: [], v1a: [] };
  for (const entry of value.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma === -1) continue;
    const version = entry.slice(0, comma);
    const signature = entry.slice(comma + 1);
    if (version === "v1") found.v1.push(signature);
    else if (version === "v1a") {
      const bytes = decodeBase64(signature);
      if (bytes?.length === 64) found.v1a.push(bytes);
    }
  }
  return found;
}

function keyMatches(key: Key, signatures: Signatures, id: string, timestamp: string, body: Buffer): boolean {
  if (key.kind === "hmac") {
    if (signatures.v1.length === 0) return false;
    const expected = hmacSignature(key.secret, id, timestamp, body);
    return signatures.v1.some((candidate) => equalBytes(candidate, expected));
  }
  if (signatures.v1a.length === 0) return false;
  const publicKey = key.kind === "public" ? key.key : key.publicKey;
  const content = Buffer.concat([Buffer.from(signedPrefix(id, timestamp), "utf8"), body]);
  return signatures.v1a.some((candidate) => verify(null, content, publicKey, candidate));
}

export const standardWebhooks: SignatureScheme = {
  name: "standard-webhooks",
  signatureHeaders: [SIGNATURE, SVIX[SIGNATURE]],
  signsTimestamp: true,
  checkSecret(secret) {
    const key = parseKey(secret);
    return typeof key === "string" ? key : undefined;
  },
  verify(request, settings) {
    const sent = read(request.headers, SIGNATURE);
    if (sent === undefined) return { ok: false, reason: "signature header missing" };
    const id = read(request.headers, ID);
    if (id === undefined) return { ok: false, reason: "id header missing" };
    const timestamp = read(request.headers, TIMESTAMP);
    if (timestamp === undefined) return { ok: false, reason: "timestamp header missing" };
    const late = timestampProblem(timestamp, request.nowSeconds, settings.toleranceSeconds);
    if (late !== undefined) return { ok: false, reason: late };
    const signatures = parseSignatures(sent);
    if (signatures.v1.length === 0 && signatures.v1a.length === 0)
      return { ok: false, reason: "signature header malformed" };
    const matches = settings.secrets.some((secret) => {
      const key = parseKey(secret);
      return typeof key !== "string" && keyMatches(key, signatures, id, timestamp, request.rawBody);
    });
    return matches ? { ok: true } : { ok: false, reason: "signature mismatch" };
  },
  sign(input) {
    const key = parseKey(input.secret);
    if (typeof key === "string") throw new Error(`standard-webhooks cannot sign: ${key}`);
    if (key.kind === "public")
      throw new Error("standard-webhooks cannot sign with a whpk_ key: a public key cannot sign");
    const id = input.deliveryId;
    const timestamp = String(input.timestampSeconds);
    const signature =
      key.kind === "hmac"
        ? `v1,${hmacSignature(key.secret, id, timestamp, input.rawBody)}`
        : `v1a,${sign(null, Buffer.concat([Buffer.from(signedPrefix(id, timestamp), "utf8"), input.rawBody]), key.key).toString("base64")}`;
    return { headers: { [ID]: id, [TIMESTAMP]: timestamp, [SIGNATURE]: signature } };
  },
  deliveryId: (headers) => read(headers, ID),
};
