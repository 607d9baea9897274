/** @module `X-Hub-Signature-256: sha256=<hex>`, an HMAC-SHA256 of the raw body alone: GitHub's header, which Meta signs with too. */
import type { SignatureSettings, SignatureVerdict, SignedRequest } from "../signature-scheme.js";
import { equalBytes, headerValue, macOf } from "./compare.js";

export const HUB_SIGNATURE = "x-hub-signature-256";
/** The SHA-1 header both senders send beside it: a signature all the same, so a credential, though never checked. */
export const HUB_SIGNATURE_SHA1 = "x-hub-signature";
const PREFIX = "sha256=";

export function hubSignature(secret: string, body: Buffer): string {
  return PREFIX + macOf("sha256", secret, [body]).toString("hex");
}

/** No timestamp is signed: a copy verifies at any time, and only the duplicate check on the body catches it. */
export function verifyHubSignature(request: SignedRequest, settings: SignatureSettings): SignatureVerdict {
  const sent = headerValue(request.headers, HUB_SIGNATURE);
  if (sent === undefined) return { ok: false, reason: "signature header missing" };
  if (!sent.startsWith(PREFIX)) return { ok: false, reason: "signature header malformed" };
  const matches = settings.secrets.some((secret) => equalBytes(sent, hubSignature(secret, request.rawBody)));
  return matches ? { ok: true } : { ok: false, reason: "signature mismatch" };
}
