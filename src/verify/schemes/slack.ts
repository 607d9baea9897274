/** @module Slack: `X-Slack-Signature: v0=<hex>`, an HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<body>`. */
import type { SignatureScheme } from "../signature-scheme.js";
import { challengeVerdict } from "./challenge.js";
import {
  bodyString,
  equalBytes,
  headerValue,
  macOf,
  plainSecretProblem,
  timestampProblem,
} from "./compare.js";

const SIGNATURE = "x-slack-signature";
const TIMESTAMP = "x-slack-request-timestamp";
const VERSION = "v0";

function signature(secret: string, timestamp: string, body: Buffer): string {
  return `${VERSION}=` + macOf("sha256", secret, [`${VERSION}:${timestamp}:`, body]).toString("hex");
}

export const slack: SignatureScheme = {
  name: "slack",
  signatureHeaders: [SIGNATURE],
  signsTimestamp: true,
  checkSecret: plainSecretProblem,
  verify(request, settings) {
    const sent = headerValue(request.headers, SIGNATURE);
    if (sent === undefined) return { ok: false, reason: "signature header missing" };
    if (!sent.startsWith(`${VERSION}=`)) return { ok: false, reason: "signature header malformed" };
    const timestamp = headerValue(request.headers, TIMESTAMP);
    if (timestamp === undefined) return { ok: false, reason: "timestamp header missing" };
    const late = timestampProblem(timestamp, request.nowSeconds, settings.toleranceSeconds);
    if (late !== undefined) return { ok: false, reason: late };
    const matches = settings.secrets.some((secret) =>
      equalBytes(sent, signature(secret, timestamp, request.rawBody)),
    );
    return matches ? { ok: true } : { ok: false, reason: "signature mismatch" };
  },
  sign(input) {
    const timestamp = String(input.timestampSeconds);
    return {
      headers: { [SIGNATURE]: signature(input.secret, timestamp, input.rawBody), [TIMESTAMP]: timestamp },
    };
  },
  // Events API callbacks carry `event_id`. Slash commands and interactions (form bodies) carry no delivery id, but
  // each has its own `trigger_id`: without it a copy replayed inside the window would be acted on twice. Both are
  // read from the signed body alone, never by the unsigned Content-Type (a relabelled body is refused before this).
  deliveryId: (_headers, body) => bodyString(body, "event_id") ?? triggerIdOf(body),
  // The Events API checks a Request URL by posting this, signed, before it sends any event; it waits for the
  // challenge back and nothing else.
  bodyChallenge: (body) =>
    bodyString(body, "type") === "url_verification"
      ? challengeVerdict((body as Record<string, unknown>).challenge)
      : undefined,
};

/** A slash command's `trigger_id` field, or the one inside an interaction's `payload` field (JSON). */
function triggerIdOf(form: unknown): string | undefined {
  const direct = bodyString(form, "trigger_id");
  if (direct !== undefined) return direct;
  const payload = bodyString(form, "payload");
  if (payload === undefined) return undefined;
  try {
    return bodyString(JSON.parse(payload), "trigger_id");
  } catch {
    return undefined;
  }
}
