/** @module The contract every sender signature scheme implements: verify the exact bytes, sign them (replay), name the delivery. */
import type { IncomingHttpHeaders } from "node:http";

export const SIGNATURE_SCHEMES = [
  "github",
  "stripe",
  "slack",
  "standard-webhooks",
  "twilio",
  "meta",
  "hmac",
] as const;
export type SchemeName = (typeof SIGNATURE_SCHEMES)[number];

export const HMAC_ALGORITHMS = ["sha1", "sha256", "sha512"] as const;
export type HmacAlgorithm = (typeof HMAC_ALGORITHMS)[number];
export const SIGNATURE_ENCODINGS = ["hex", "base64"] as const;
export type SignatureEncoding = (typeof SIGNATURE_ENCODINGS)[number];

/** The generic `hmac` scheme's description of how its sender signs. */
export interface HmacOptions {
  /** Header carrying the signature, lower-cased. */
  header: string;
  algorithm: HmacAlgorithm;
  encoding: SignatureEncoding;
  /** Text before the signature in the header (`sha256=`); empty for none. */
  prefix: string;
  /** Header carrying the signed unix timestamp (seconds), lower-cased; checked against the tolerance. */
  timestampHeader?: string | undefined;
  /** What is signed: `{body}`, `{timestamp}` and `{id}` replaced by the raw body, the timestamp, the id header. */
  signedContent: string;
  /** Header carrying the sender's delivery id, lower-cased (duplicates). */
  idHeader?: string | undefined;
}

/** One path's verification, as compiled from its mapping's `verify` block. */
export interface SignatureSettings {
  scheme: SchemeName;
  /** Any one that verifies is enough (rotation). Never logged. */
  secrets: readonly string[];
  /** Age window for signed timestamps, checked both ways. */
  toleranceSeconds: number;
  /** `twilio`: the URL exactly as the sender calls it, without the query string. */
  publicUrl?: string | undefined;
  /** `hmac` only. */
  hmac?: HmacOptions | undefined;
  /** `meta` only: the token the sender's subscription GET carries (`hub.verify_token`). Never logged. */
  verifyToken?: string | undefined;
}

/** What a scheme looks at: headers and the exact bytes, before anything parses them. */
export interface SignedRequest {
  /** Header names lower-cased, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  rawBody: Buffer;
  /** The query string as received, without the `?` (empty when none). */
  rawQuery: string;
  /** Seconds since the epoch, now (from the Clock port). */
  nowSeconds: number;
}

/** The reason goes to the log only (`timestamp is 712 s old; tolerance 300 s`): never the secret, never the signature. */
export type SignatureVerdict = { ok: true } | { ok: false; reason: string };

/** What replay needs to sign a fixture the way the sender would. */
export interface SigningInput {
  rawBody: Buffer;
  rawQuery: string;
  timestampSeconds: number;
  /** The delivery id for schemes that carry one in a header: the fixture's recorded one, else a fresh one. */
  deliveryId: string;
  secret: string;
  /** The request's Content-Type: twilio signs form parameters, but a JSON body through its hash. */
  contentType?: string | undefined;
}

export interface SignedParts {
  /** Headers to set on the request (signature, timestamp, id), lower-cased names. */
  headers: Record<string, string>;
  /** The query string to send instead, when the scheme signs through it (twilio's `bodySHA256`). */
  rawQuery?: string;
}

/** A handshake's challenge: the text to echo back, or why it is not one (the log's reason; answered 400). */
export type ChallengeVerdict = { ok: true; challenge: string } | { ok: false; reason: string };

/** A sender that proves it owns the URL with a GET before it posts (Meta's `hub.*` query). */
export interface GetHandshake {
  /** The verify token the query carries: a credential, judged like the hook token (undefined when none). */
  verifyTokenOf(query: URLSearchParams | undefined): string | undefined;
  /** Judged once the token was accepted: whether the query asks to subscribe, with a challenge fit to echo. */
  challengeOf(query: URLSearchParams | undefined): ChallengeVerdict;
}

export interface SignatureScheme {
  readonly name: SchemeName;
  /** Headers whose values are signatures: credentials that no mapping, capture or log ever sees. */
  readonly signatureHeaders: readonly string[];
  /**
   * Whether the signature covers a timestamp the receiver holds to `toleranceSeconds`. The named schemes that sign one
   * sign their delivery id too (in the body, or beside the timestamp); those that sign none send their id in a header
   * nothing signs, so a copy under a new id is known by its body instead (see signed-delivery-id.ts). `hmac` says
   * false: it signs a timestamp and an id only where a mapping says so.
   */
  readonly signsTimestamp: boolean;
  /** A message when `secret` cannot be a key of this scheme (checked at startup; never quotes the secret). */
  checkSecret(secret: string): string | undefined;
  verify(request: SignedRequest, settings: SignatureSettings): SignatureVerdict;
  sign(input: SigningInput, settings: SignatureSettings): SignedParts;
  /** The sender's id for this delivery, from its headers or its parsed body; undefined when it sends none. */
  deliveryId(headers: IncomingHttpHeaders, body: unknown, settings: SignatureSettings): string | undefined;
  /** The only schemes whose paths take a GET: the sender's subscription handshake. */
  readonly getHandshake?: GetHandshake;
  /**
   * A signed body that is a handshake, not a delivery (Slack's `url_verification`): its challenge, answered before
   * any mapping runs. Undefined for every other body.
   */
  bodyChallenge?(body: unknown): ChallengeVerdict | undefined;
}
