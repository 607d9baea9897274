/** @module The Verifiers port: how a request proves it may use a hook (the hook token, or its sender's signature). */
import type { IncomingHttpHeaders } from "node:http";
import type { SignatureFailure } from "./signature-failure.js";
import type { ChallengeVerdict } from "./signature-scheme.js";

/** What a verifier may look at. The body is there only for verifiers that need it (signatures). */
export interface CredentialsView {
  headers: IncomingHttpHeaders;
  query: URLSearchParams | undefined;
  /** The query string as received, without the `?`. */
  rawQuery?: string | undefined;
  /** Milliseconds since the epoch, from the Clock port (signed timestamps are judged against it). */
  now?: number | undefined;
}

export type AuthVerdict =
  | {
      ok: true;
      needsBody?: undefined;
      /** The token came in the deprecated `?token=` query. */
      viaQuery: boolean;
      /**
       * A credential that travels in URLs (Meta's verify token): accepted, it neither clears the address's failed
       * authentications nor gets past their limit, so knowing it cannot buy more guesses at the hook token.
       */
      weak?: boolean;
    }
  | AuthRefusal
  | NeedsBody;

/** Credentials refused, with why (for the log and metrics) and what the sender is told. */
export interface AuthRefusal {
  ok: false;
  needsBody?: undefined;
  /** For the person reading the 401: never which signature check failed, nothing about the secret. */
  message: string;
  /** For the log only (`timestamp is 712 s old; tolerance 300 s`): never a secret or a signature value. */
  reason?: string;
  /** For metrics: no credential at all, or a wrong one (absent counts as `invalid`). */
  credential?: "missing" | "invalid";
  /** For metrics, when a signature was checked and failed: what was wrong with it, in one word. */
  signature?: SignatureFailure;
  /**
   * A handshake's verify token: refused with 403, as its sender expects; a 401 would offer an HTTP
   * authentication scheme the sender cannot answer.
   */
  forbidden?: boolean;
  /** The `WWW-Authenticate` challenge of a path a bearer token can get into; absent where only signatures can. */
  challenge?: string;
}

/** Asked before the body is read, a verifier that judges only the body's bytes: ask again with them. */
export interface NeedsBody {
  ok: false;
  needsBody: true;
}

/** A verdict on the credentials themselves: accepted or refused. */
export type CredentialVerdict = Exclude<AuthVerdict, NeedsBody>;

export const NEEDS_BODY: NeedsBody = Object.freeze({ ok: false, needsBody: true });

/**
 * How a request proves it may use a hook. The verifier owns its policy: asked first without the body, it accepts or
 * refuses what the headers carry (a token), or answers `NEEDS_BODY` when only the signed bytes can tell; asked then
 * with the exact bytes, it judges them.
 */
export interface Verifier {
  /** Name for logs (`token`, `github`). */
  readonly kind: string;
  /** Its sender signs the body's exact bytes: they are read as sent, whatever the unsigned Content-Type says. */
  readonly signsBody: boolean;
  /** A value when it can answer at once (the hook token), a promise otherwise. */
  verify(request: CredentialsView, rawBody?: Buffer): AuthVerdict | Promise<AuthVerdict>;
  /**
   * What a delivery is known by for duplicates: its sender's id, or (where a copy could change that id) the digest of
   * the signed body; undefined when there is neither. `rawBody` is undefined when the request got in by the hook
   * token, not by its signature: then only the sender's own id counts, as sent.
   */
  deliveryId?(headers: IncomingHttpHeaders, body: unknown, rawBody: Buffer | undefined): string | undefined;
  /** Present on the paths that take the sender's subscription GET (Meta): judges it. */
  readonly handshake?: HandshakeVerifier | undefined;
  /** A verified body that is a handshake, not a delivery (Slack's `url_verification`): its challenge. */
  bodyChallenge?(body: unknown): ChallengeVerdict | undefined;
}

/** A subscription GET: its verify token judged as the request's credential, then its challenge. */
export interface HandshakeVerifier extends Verifier {
  challengeOf(query: URLSearchParams | undefined): ChallengeVerdict;
}

export interface Verifiers {
  /** The verifier that guards `hook`. */
  forHook(hook: string): Verifier;
}
