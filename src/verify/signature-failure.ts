/** @module A signature failure in one fixed word (missing, malformed, stale, mismatch), for metrics; the log keeps the scheme's sentence. */

export type SignatureFailure = "missing" | "malformed" | "stale" | "mismatch" | "other";

/**
 * The schemes' reasons are a closed set of phrases (a property test pins them): a missing or malformed header
 * says so in its last word, every timestamp that is neither is outside the window, and a mismatch says so first
 * (twilio's goes on to name the URL it checked).
 */
export function signatureFailureOf(reason: string): SignatureFailure {
  if (reason.endsWith(" missing")) return "missing";
  if (reason.endsWith(" malformed")) return "malformed";
  if (reason.startsWith("timestamp ")) return "stale";
  if (/^(?:signature|body hash) mismatch\b/.test(reason)) return "mismatch";
  return "other";
}

/** The journal's reason code for a signature failure (`stale` covers a timestamp outside the window either way). */
export const SIGNATURE_REASON: Readonly<Record<SignatureFailure, string>> = {
  missing: "SIGNATURE_MISSING",
  malformed: "SIGNATURE_MALFORMED",
  stale: "TIMESTAMP_TOO_OLD",
  mismatch: "SIGNATURE_MISMATCH",
  other: "SIGNATURE_INVALID",
};
