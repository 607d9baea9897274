/** @module A sender's handshake, answered with its challenge as plain text: Meta's subscription GET, Slack's signed `url_verification`. No event, no journal record, no delivery id. */
import { HookError } from "../errors.js";
import type { ChallengeVerdict } from "../verify/signature-scheme.js";
import type { PipelineResponse } from "./request.js";

/** The challenge echoed as `text/plain`; one unfit to echo (absent, too long, not printable ASCII) is refused. */
export function challengeResponse(verdict: ChallengeVerdict, requestId: string): PipelineResponse {
  // Told to a sender whose credentials were accepted already: the reason names a field, never a secret.
  if (!verdict.ok)
    throw new HookError("INVALID_HANDSHAKE", `The handshake cannot be answered: ${verdict.reason}.`);
  return {
    status: 200,
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      "Content-Length": String(Buffer.byteLength(verdict.challenge)),
      // The text comes from the request: no browser may take it for anything but text.
      "X-Content-Type-Options": "nosniff",
      "X-Request-Id": requestId,
    },
    body: verdict.challenge,
  };
}
