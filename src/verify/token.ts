/** @module The hook-token verifier: Bearer, then X-Service-Token, then the deprecated query; compared in constant time. */
import { hash, timingSafeEqual } from "node:crypto";
import type { AuthVerdict, CredentialsView, Verifier } from "./verifier.js";

const BEARER = /^bearer[ \t]+(.+)$/i;

/** The one-shot `crypto.hash` (Node 20.12+) skips building a Hash object per request. */
function digest(value: string): Buffer {
  return hash("sha256", value, "buffer") as unknown as Buffer;
}

/** The first credential present is the one judged: `Authorization: Bearer`, `X-Service-Token`, `?token=`. */
export function findToken(request: CredentialsView): { token?: string; viaQuery: boolean } {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = BEARER.exec(authorization.trim());
    if (match) return { token: match[1]!.trim(), viaQuery: false };
  }
  const service = request.headers["x-service-token"];
  if (typeof service === "string" && service !== "") return { token: service.trim(), viaQuery: false };
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
export type TokenCheck = (request: CredentialsView) => AuthVerdict | undefined;

export function createTokenCheck(token: string): TokenCheck {
  // Both sides hashed to equal-length digests: the comparison time depends on neither token's length.
  const expected = digest(token);
  return (request) => {
    const found = findToken(request);
    if (found.token === undefined) return undefined;
    if (!timingSafeEqual(digest(found.token), expected))
      return {
        ok: false,
        message: "The hook token is not valid.",
        reason: "hook token not valid",
        credential: "invalid",
      };
    return { ok: true, viaQuery: found.viaQuery };
  };
}

export function createTokenVerifier(token: string): Verifier {
  const check = createTokenCheck(token);
  return {
    kind: "token",
    needsBody: false,
    acceptsToken: true,
    async verify(request) {
      return (
        check(request) ?? {
          ok: false,
          message: missingMessage(request),
          reason: "no hook token",
          credential: "missing",
        }
      );
    },
  };
}
