/** @module Posts one mailbox batch to the hook, classifies the answer, and retries transient failures with backoff. */
import { type Backoff, sleep } from "./backoff.js";
import type { MailboxLogger } from "./logger.js";
import type { MailboxMessage, MailboxPayload } from "./message-extract.js";

export interface HookTarget {
  url: string;
  /** Sent as `Authorization: Bearer <token>`; never logged. */
  token: string;
  /** Per request; an answer that takes longer counts as a transient failure. */
  timeoutMs: number;
}

export type PostResult =
  | { kind: "delivered"; status: number }
  /** Network error, timeout, 408, 429 or 5xx: worth trying again. */
  | { kind: "transient"; reason: string; retryAfterMs?: number }
  /** Any other non-2xx: repeating the same request cannot succeed. */
  | { kind: "rejected"; status: number; reason: string };

export type SendOutcome =
  | { kind: "delivered" }
  | { kind: "rejected"; status: number; reason: string }
  | { kind: "stopped" };

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export async function postToHook(
  target: HookTarget,
  messages: readonly MailboxMessage[],
  fetchImpl: FetchLike = fetch,
): Promise<PostResult> {
  const payload: MailboxPayload = { source: "mailbox", messages: [...messages] };
  let response: Response;
  try {
    response = await fetchImpl(target.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${target.token}` },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(target.timeoutMs),
    });
  } catch (error) {
    return { kind: "transient", reason: describeNetworkError(error, target.timeoutMs) };
  }
  const status = response.status;
  const reason = `HTTP ${status}${await readErrorSummary(response)}`;
  if (status >= 200 && status < 300) return { kind: "delivered", status };
  if (status === 408 || status === 429 || status >= 500) {
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
    return retryAfterMs === undefined
      ? { kind: "transient", reason }
      : { kind: "transient", reason, retryAfterMs };
  }
  return { kind: "rejected", status, reason };
}

export interface RetryingSenderOptions {
  post: (messages: readonly MailboxMessage[]) => Promise<PostResult>;
  backoff: Backoff;
  /** Longest wait honoured from a `Retry-After` header. */
  maxDelayMs: number;
  logger: MailboxLogger;
  /** Aborting cuts a wait short; a request already on the wire is let finish so its outcome is known. */
  signal: AbortSignal;
}

/**
 * Sends a batch until the hook answers 2xx or refuses it for good. Transient failures are retried without an
 * attempt limit (the gateway being down for an hour must not lose mail), with waits growing to a cap.
 */
export function createRetryingSender(options: RetryingSenderOptions) {
  const { post, backoff, logger, signal } = options;
  return async function send(messages: readonly MailboxMessage[]): Promise<SendOutcome> {
    backoff.reset();
    for (;;) {
      const result = await post(messages);
      if (result.kind === "delivered") {
        if (backoff.attempts > 0)
          logger.info(`hook accepted ${describeBatch(messages)} after ${backoff.attempts} retries`);
        return { kind: "delivered" };
      }
      if (result.kind === "rejected")
        return { kind: "rejected", status: result.status, reason: result.reason };
      if (signal.aborted) return { kind: "stopped" };
      const delay = Math.max(backoff.next(), Math.min(result.retryAfterMs ?? 0, options.maxDelayMs));
      logger.warn(
        `hook delivery of ${describeBatch(messages)} failed (${result.reason}); retry ${backoff.attempts} in ${formatDelay(delay)}`,
      );
      if ((await sleep(delay, signal)) === "aborted") return { kind: "stopped" };
    }
  };
}

/** Names a batch by its ids only: senders and subjects are message content and stay out of logs. */
export function describeBatch(messages: readonly MailboxMessage[]): string {
  const first = messages[0]?.id;
  const last = messages[messages.length - 1]?.id;
  if (first === undefined) return "an empty batch";
  if (messages.length === 1) return `message ${first}`;
  return `${messages.length} messages (${first} … ${last})`;
}

function formatDelay(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function describeNetworkError(error: unknown, timeoutMs: number): string {
  const err = error as Error & { cause?: { code?: string; message?: string } };
  if (err.name === "TimeoutError" || err.name === "AbortError") return `no answer within ${timeoutMs} ms`;
  const cause = err.cause;
  if (cause?.code) return `network error ${cause.code}`;
  return `network error: ${cause?.message ?? err.message}`;
}

/**
 * The gateway's error bodies are `{ ok: false, error, code }`; their sentence and code explain a
 * refusal. Only those two fields are read, cut short, so nothing else a receiver echoes ends up in logs.
 */
async function readErrorSummary(response: Response): Promise<string> {
  if (response.ok) {
    await response.body?.cancel();
    return "";
  }
  try {
    const body = (await response.json()) as { error?: unknown; code?: unknown };
    const code = typeof body.code === "string" ? ` ${body.code.slice(0, 40)}` : "";
    const error = typeof body.error === "string" ? `: ${body.error.slice(0, 200)}` : "";
    return `${code}${error}`;
  } catch {
    return "";
  }
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
