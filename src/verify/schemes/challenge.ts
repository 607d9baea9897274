/** @module A handshake's challenge as the sender must get it back: short, printable ASCII, echoed as plain text. */
import type { ChallengeVerdict } from "../signature-scheme.js";

/** Meta sends a number, Slack about fifty letters and digits: anything longer or odder is not a sender's challenge. */
export const MAX_CHALLENGE_LENGTH = 256;
const CHALLENGE = new RegExp(`^[\\x21-\\x7e]{1,${MAX_CHALLENGE_LENGTH}}$`);

/** The value echoed back, checked first: the answer repeats what the request said, so only harmless text is repeated. */
export function challengeVerdict(value: unknown): ChallengeVerdict {
  if (typeof value !== "string" || value === "") return { ok: false, reason: "challenge missing" };
  if (!CHALLENGE.test(value)) return { ok: false, reason: "challenge malformed" };
  return { ok: true, challenge: value };
}
