/** @module Signs a fixture's request the way its sender would, with the path's secret, a fresh timestamp and the recorded delivery id (or wrongly, on purpose). */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { schemeFor } from "../verify/schemes/index.js";
import type { SignatureSettings } from "../verify/signature-scheme.js";
import type { SignedPath } from "../verify/signature-verifier.js";
import type { FixtureResign } from "./fixture-schema.js";

/** A signed path as replay sees it: what the intake verifies with, and the secret replay signs with. */
export interface ReplaySigning {
  path: SignedPath;
  signingSecret: string;
  /** Said once in the report when replay could not sign with the configured secret itself. */
  note?: string;
}

/**
 * Replay signs with the path's first secret. An ed25519 public key (`whpk_`) cannot sign, so replay verifies
 * that path with a key pair of its own instead: the signature path is exercised all the same.
 */
export function replaySigning(path: SignedPath): ReplaySigning {
  const secret = path.settings.secrets[0]!;
  if (path.settings.scheme !== "standard-webhooks" || !secret.startsWith("whpk_")) {
    return { path, signingSecret: secret };
  }
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const publicRaw = Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url");
  const seed = Buffer.from(privateKey.export({ format: "jwk" }).d!, "base64url");
  const settings: SignatureSettings = { ...path.settings, secrets: [`whpk_${publicRaw.toString("base64")}`] };
  return {
    path: { ...path, settings },
    signingSecret: `whsk_${seed.toString("base64")}`,
    note: "the configured key is a public key (whpk_), which cannot sign: replay verified with a key pair of its own",
  };
}

export interface SignableRequest {
  headers: Record<string, string>;
  rawBody: Buffer;
  rawQuery: string;
}

/** The request as its sender would send it now; unchanged when the fixture says `resign: false`. */
export function signFixtureRequest(
  signing: ReplaySigning,
  resign: FixtureResign,
  request: SignableRequest,
  nowMs: number,
): SignableRequest {
  if (resign === false) return request;
  const options = resign === true ? {} : resign;
  const { settings } = signing.path;
  const scheme = schemeFor(settings.scheme);
  const signed = scheme.sign(
    {
      rawBody: request.rawBody,
      rawQuery: request.rawQuery,
      timestampSeconds: Math.floor(nowMs / 1000) - Math.round(options.ageSeconds ?? 0),
      // The recorded delivery id travels with the request, as an id in the body (Stripe's, Slack's) always does: a
      // gateway that remembers it answers the replay as a duplicate. A fixture without one gets a fresh one.
      deliveryId: scheme.deliveryId(request.headers, undefined, settings) || randomUUID(),
      secret: options.secret ?? signing.signingSecret,
      contentType: request.headers["content-type"],
    },
    settings,
  );
  return {
    headers: { ...request.headers, ...signed.headers },
    rawBody: options.tamper ? tampered(request.rawBody) : request.rawBody,
    rawQuery: signed.rawQuery ?? request.rawQuery,
  };
}

/** The body with one byte changed (or one added, when it is empty). */
function tampered(body: Buffer): Buffer {
  if (body.length === 0) return Buffer.from(" ");
  const copy = Buffer.from(body);
  const at = copy.length - 1;
  copy[at] = copy[at]! ^ 0x01;
  return copy;
}
