/** @module A refusal's reason code in one line a person can act on: what the sender likely did wrong, what to check. */
import type { ErrorCode } from "../errors.js";

/** The journal's finer reasons for a 401 or 404, beside the error codes themselves. */
type FineReason =
  | "TOKEN_MISSING"
  | "TOKEN_WRONG"
  | "SIGNATURE_MISSING"
  | "SIGNATURE_MALFORMED"
  | "SIGNATURE_MISMATCH"
  | "SIGNATURE_INVALID"
  | "TIMESTAMP_TOO_OLD"
  | "NO_MAPPING";

/** Every error code has a line (the type checks it), so a new code cannot be shown without one. */
export const REASON_EXPLANATIONS: Readonly<Record<FineReason | ErrorCode, string>> = {
  TOKEN_MISSING:
    "No token was sent: the sender needs `Authorization: Bearer <token>` or `X-Service-Token: <token>`.",
  TOKEN_WRONG:
    "A token was sent but it is not the hook token: check for an old token, a typo, or a token for another gateway.",
  SIGNATURE_MISSING:
    "The signature header (or its timestamp or id header) was absent: is the sender configured to sign, with this scheme?",
  SIGNATURE_MALFORMED:
    "The signature header is not in the scheme's format: check that the mapping's `verify.scheme` matches the sender.",
  SIGNATURE_MISMATCH:
    "The signature does not match the body: the signing secret differs from the sender's, or a proxy changed the body.",
  SIGNATURE_INVALID:
    "The signature could not be checked: compare the mapping's `verify` settings with the sender's documentation.",
  TIMESTAMP_TOO_OLD:
    "The signed timestamp is outside the allowed window: a delayed retry, a replayed request, or a sender's clock that is off.",
  NO_MAPPING:
    "No mapping matches this path: check the URL the sender posts to against the mappings' `match.path`.",
  NOT_FOUND: "No hook answers at this path: check the URL the sender posts to.",
  UNAUTHORIZED: "The credentials were refused: check the token or the signing secret the sender uses.",
  AUTH_THROTTLED:
    "Too many failed credentials from this address: it is locked out for a while (`hooks.authFailures`); fix its credentials first.",
  HANDSHAKE_REFUSED:
    "A subscription request (Meta's GET) without the mapping's verify token: paste `verify.verifyToken` in the app's webhook settings.",
  SOURCE_NOT_ALLOWED:
    "The request came from an address the hook's `allowFrom` does not list: check the sender's published ranges (`hooks.addressRanges`), and behind a proxy `hooks.trustedProxies`.",
  INVALID_HANDSHAKE:
    "A handshake (Meta's GET, Slack's `url_verification`) that asks nothing or whose challenge is unfit to echo: the message says which.",
  INVALID_JSON: "The body is not valid JSON: check the sender's content type and body.",
  INVALID_PAYLOAD: "The body is not what this hook expects: the message the sender got names the field.",
  MODEL_NOT_ALLOWED: "The request asks for a model the config does not allow (`agents.defaults.models`).",
  AGENT_ID_NOT_ALLOWED:
    "The request names an agent that does not exist or that the config does not allow (`hooks.allowRequestAgentId`, `hooks.allowedAgentIds`); with no `agentId`, the default agent is not in `hooks.allowedAgentIds`.",
  SESSION_KEY_NOT_ALLOWED:
    "The request names a session key the config does not allow (`hooks.allowRequestSessionKey`, `hooks.allowedSessionKeyPrefixes`).",
  METHOD_NOT_ALLOWED:
    "Hooks accept POST only (and GET where a `meta` mapping takes its handshake): the sender used another method.",
  BODY_TIMEOUT:
    "The body did not arrive in time: a slow or stalled sender, or a proxy holding the body back.",
  DUPLICATE_IN_PROGRESS:
    "The same delivery id is being handled right now: the sender retried too quickly; its first attempt decides.",
  SESSION_CONFLICT:
    "The gateway would not start the agent turn in that session as it stands (archived, changing, not ready): check the session, then retry.",
  TURN_REFUSED: "The gateway refused to start the agent turn: the message the sender got says why.",
  TURN_NOT_ADMITTED:
    "The gateway did not take the agent turn in time, or was draining for a reload: the sender should retry.",
  PAYLOAD_TOO_LARGE: "The body is larger than the limit (`hooks.maxBodyBytes`).",
  UNSUPPORTED_MEDIA_TYPE:
    "The content type is neither JSON nor a url-encoded form: check the sender's `Content-Type` header.",
  CLIENT_BUSY:
    "This address had too many requests in progress at once: the sender should retry later, or send fewer at a time.",
  RATE_LIMITED:
    "The hook's rate limit was reached (its mapping's `rateLimit`, or `hooks.limits`): the sender sends more often than the limit allows, or the limit is too low for it.",
  TURNS_QUEUED_FULL:
    "The hook already had its most agent turns waiting for a slot (`maxQueuedTurns`): its turns run slower than they arrive; the sender should retry later.",
  SERVER_BUSY: "The intake had too many requests in progress: the sender should retry later.",
  MAPPING_FAILED: "The mapping's transform or template failed: the gateway log has the reason.",
  INTERNAL: "The intake failed while handling it: the gateway log has the reason.",
  UNAVAILABLE:
    "The intake could not accept it just then (the journal or the duplicate store was unavailable): the sender should retry.",
};

export function explainReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  return Object.hasOwn(REASON_EXPLANATIONS, reason)
    ? REASON_EXPLANATIONS[reason as keyof typeof REASON_EXPLANATIONS]
    : undefined;
}
