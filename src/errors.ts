/** @module The one table from error code to HTTP status, and the error every layer throws for a refused request. */

export const ERROR_STATUS = {
  INVALID_JSON: 400,
  INVALID_PAYLOAD: 400,
  MODEL_NOT_ALLOWED: 400,
  SESSION_KEY_NOT_ALLOWED: 400,
  /** A policy refusal like a session key's, and OpenClaw's own hooks answer it 400 too: not a retryable condition. */
  AGENT_ID_NOT_ALLOWED: 400,
  /** A sender's handshake (Meta's GET, Slack's `url_verification`) that asks for nothing, or whose challenge is not fit to echo. */
  INVALID_HANDSHAKE: 400,
  UNAUTHORIZED: 401,
  /** A Meta subscription GET without the mapping's verify token: 403 is what Meta's own samples answer. */
  HANDSHAKE_REFUSED: 403,
  /** The client address is not on the hook's `allowFrom`: a policy refusal no credential can change, so not 401. */
  SOURCE_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  BODY_TIMEOUT: 408,
  DUPLICATE_IN_PROGRESS: 409,
  SESSION_CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  AUTH_THROTTLED: 429,
  CLIENT_BUSY: 429,
  /** Over a hook's own `rateLimit`: the operator's choice, so the sender learns which limit and when to come back. */
  RATE_LIMITED: 429,
  /** A hook's `maxQueuedTurns` agent turns already wait for a slot: the sender retries later, with `Retry-After`. */
  TURNS_QUEUED_FULL: 429,
  MAPPING_FAILED: 500,
  INTERNAL: 500,
  TURN_REFUSED: 502,
  UNAVAILABLE: 503,
  SERVER_BUSY: 503,
  TURN_NOT_ADMITTED: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  path: string;
  message: string;
}

export interface ErrorBody {
  ok: false;
  error: string;
  code: ErrorCode;
  details?: ErrorDetail[];
}

const HOOK_ERROR = Symbol.for("hooks-intake.hook-error");

/** A request the pipeline refuses. `cause` is for logs only; it never reaches a response. */
export class HookError extends Error {
  readonly [HOOK_ERROR] = true;
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  /** Extra response headers (Allow, Retry-After, WWW-Authenticate); never a body field. */
  readonly headers: Record<string, string> | undefined;
  /** Why, finer than the code (`TOKEN_WRONG`, `SIGNATURE_MISMATCH`): for the journal only, never sent. */
  readonly reason: string | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      details?: ErrorDetail[];
      headers?: Record<string, string>;
      cause?: unknown;
      reason?: string;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "HookError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers;
    this.reason = options.reason;
  }

  toJSON(): ErrorBody {
    return this.details && this.details.length > 0
      ? { ok: false, error: this.message, code: this.code, details: this.details }
      : { ok: false, error: this.message, code: this.code };
  }
}

/** Marker check rather than instanceof: a transform loaded by jiti may carry a second copy of this module. */
export function isHookError(error: unknown): error is HookError {
  return typeof error === "object" && error !== null && HOOK_ERROR in error;
}

/** Any thrown value as a HookError; unknown failures become a bare INTERNAL with no detail. */
export function toHookError(error: unknown): HookError {
  if (isHookError(error)) return error;
  return new HookError("INTERNAL", "The hook could not be processed because of an internal error.", {
    cause: error,
  });
}

/** 413 for a body over `maxBytes`: the pipeline's reader and the winning mapping's own limit say it the same way. */
export function payloadTooLarge(maxBytes: number): HookError {
  return new HookError(
    "PAYLOAD_TOO_LARGE",
    `The body is larger than the ${maxBytes}-byte limit for this hook.`,
  );
}

/** The message of anything thrown, for a log line. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
