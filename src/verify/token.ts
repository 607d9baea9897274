/** @module The hook-token verifier: Bearer, then X-Service-Token or X-OpenClaw-Token, then the deprecated query; compared in constant time. */
import { timingSafeEqual } from "node:crypto";
import type { CredentialsView, CredentialVerdict, Verifier } from "./verifier.js";

const BEARER = /^bearer[ \t]+(.+)$/i;

/**
 * Compares a presented token with the configured one in time that depends on neither token's content nor the
 * presented one's length: the presented bytes are copied into a buffer of the expected length (cut or zero-padded)
 * and compared whole, and the length is checked after. Hashing both sides per request did the same for ~2 µs more
 * (bench/PROFILE.md).
 */
export function createTokenComparer(token: string): (presented: string) => boolean {
  const expected = Buffer.from(token, "utf8");
  const scratch = Buffer.alloc(expected.length);
  return (presented) => {
    scratch.fill(0);
    const written = scratch.write(presented, "utf8");
    const same = timingSafeEqual(scratch, expected);
    // `written` is cut at the buffer's end; a longer token must not pass as its own prefix.
    return same && written === expected.length && Buffer.byteLength(presented, "utf8") === expected.length;
  };
}

/**
 * The first credential present is the one judged: `Authorization: Bearer`, `X-Service-Token`, `X-OpenClaw-Token`
 * (the header OpenClaw's own hooks take, so a sender moved over from them keeps its setup), `?token=`.
 */
export function findToken(request: CredentialsView): { token?: string; viaQuery: boolean } {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = BEARER.exec(authorization.trim());
    if (match) return { token: match[1]!.trim(), viaQuery: false };
  }
  const service = request.headers["x-service-token"];
  if (typeof service === "string" && service !== "") return { token: service.trim(), viaQuery: false };
  const openclaw = request.headers["x-openclaw-token"];
  if (typeof openclaw === "string" && openclaw !== "") return { token: openclaw.trim(), viaQuery: false };
  const fromQuery = request.query?.get("token");
  if (fromQuery) return { token: fromQuery, viaQuery: true };
  return { viaQuery: false };
}

/** Basic credentials (`https://user:TOKEN@host`): say what to send instead of "a token is required". */
function missingMessage(request: CredentialsView): string {
  return /^basic\s/i.test(request.headers.authorization ?? "")
    ? "Basic credentials are not accepted; send the hook token as Authorization: Bearer <token>."
    : "A hook token is required.";
}

/** Judges the token a request carries; `undefined` when it carries none. */
export type TokenCheck = (request: CredentialsView) => CredentialVerdict | undefined;

export function createTokenCheck(token: string): TokenCheck {
  const matches = createTokenComparer(token);
  return (request) => {
    const found = findToken(request);
    if (found.token === undefined) return undefined;
    if (!matches(found.token))
      return {
        ok: false,
        message: "The hook token is not valid.",
        reason: "hook token not valid",
        credential: "invalid",
      };
    return { ok: true, viaQuery: found.viaQuery };
  };
}

/** What a refusal on a path the hook token can get into offers the sender. */
export const BEARER_CHALLENGE = 'Bearer realm="hooks"';

export function createTokenVerifier(token: string): Verifier {
  const check = createTokenCheck(token);
  return {
    kind: "token",
    signsBody: false,
    verify(request) {
      const verdict: CredentialVerdict = check(request) ?? {
        ok: false,
        message: missingMessage(request),
        reason: "no hook token",
        credential: "missing",
      };
      return verdict.ok ? verdict : { ...verdict, challenge: BEARER_CHALLENGE };
    },
  };
}
