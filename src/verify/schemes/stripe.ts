/** @module Stripe: `Stripe-Signature: t=<unix>,v1=<hex>…`, an HMAC-SHA256 of `<t>.<body>` keyed by the `whsec_…` string itself. */
import type { SignatureScheme } from "../signature-scheme.js";
import {
  bodyString,
  equalBytes,
  headerValue,
  macOf,
  plainSecretProblem,
  timestampProblem,
} from "./compare.js";

const SIGNATURE = "stripe-signature";

interface StripeHeader {
  timestamp: string | undefined;
  signatures: string[];
}

/** Stripe's own parser keeps unknown schemes (`v0`) out and lets a later `t` win; so does this one. */
function parseHeader(value: string): StripeHeader {
  const parsed: StripeHeader = { timestamp: undefined, signatures: [] };
  for (const item of value.split(",")) {
    const at = item.indexOf("=");
    if (at === -1) continue;
    const key = item.slice(0, at).trim();
    const field = item.slice(at + 1).trim();
    if (key === "t") parsed.timestamp = field;
    else if (key === "v1") parsed.signatures.push(field);
  }
  return parsed;
}

function signature(secret: string, timestamp: string, body: Buffer): string {
  return macOf("sha256", secret, [timestamp, ".", body]).toString("hex");
}

export const stripe: SignatureScheme = {
  name: "stripe",
  signatureHeaders: [SIGNATURE],
  signsTimestamp: true,
  checkSecret(secret) {
    const plain = plainSecretProblem(secret);
    if (plain !== undefined) return plain;
    // An API key pasted where the signing secret goes is the usual mistake; it would only ever mismatch. Other
    // shapes are let through: replay's random stand-ins, and whatever Stripe issues next.
    if (/^(?:sk|rk|pk)_/.test(secret))
      return "this is a Stripe API key; the webhook signing secret (whsec_…) is on the endpoint's page in the Stripe dashboard";
    return undefined;
  },
  verify(request, settings) {
    const sent = headerValue(request.headers, SIGNATURE);
    if (sent === undefined) return { ok: false, reason: "signature header missing" };
    const { timestamp, signatures } = parseHeader(sent);
    if (timestamp === undefined || signatures.length === 0)
      return { ok: false, reason: "signature header malformed" };
    // The window first: a stale delivery costs no HMAC.
    const late = timestampProblem(timestamp, request.nowSeconds, settings.toleranceSeconds);
    if (late !== undefined) return { ok: false, reason: late };
    const matches = settings.secrets.some((secret) => {
      const expected = signature(secret, timestamp, request.rawBody);
      return signatures.some((candidate) => equalBytes(candidate, expected));
    });
    return matches ? { ok: true } : { ok: false, reason: "signature mismatch" };
  },
  sign(input) {
    const timestamp = String(input.timestampSeconds);
    const value = `t=${timestamp},v1=${signature(input.secret, timestamp, input.rawBody)}`;
    return { headers: { [SIGNATURE]: value } };
  },
  // Stripe sends no id header: the event's own `evt_…` id is the one its retries repeat.
  deliveryId: (_headers, body) => bodyString(body, "id"),
};
