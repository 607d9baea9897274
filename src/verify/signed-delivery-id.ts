/** @module What a signed delivery is known by for duplicates: an id its signature covers, else the digest of its signed body. */
import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { SignatureScheme, SignatureSettings } from "./signature-scheme.js";

/** A delivery as the duplicates stage sees it: after its signature was checked, its body parsed. */
export interface SignedDelivery {
  headers: IncomingHttpHeaders;
  body: unknown;
  /** The exact bytes the signature was checked on. */
  rawBody: Buffer;
}

/** Whether a copy of a delivery must keep its sender's id: the id is part of what is signed. */
export function signsDeliveryId(scheme: SignatureScheme, settings: SignatureSettings): boolean {
  const { hmac } = settings;
  if (hmac !== undefined) return hmac.idHeader !== undefined && hmac.signedContent.includes("{id}");
  return scheme.signsTimestamp;
}

/**
 * The signed timestamp of an `hmac` sender that sends no id header at all, as sent; undefined otherwise. With an
 * unsigned id header the body alone keys the delivery: its retries, signed anew, repeat that body.
 */
function signedTimestampWithoutId(
  settings: SignatureSettings,
  headers: IncomingHttpHeaders,
): string | undefined {
  const { hmac } = settings;
  if (hmac === undefined || hmac.idHeader !== undefined || hmac.timestampHeader === undefined)
    return undefined;
  if (!hmac.signedContent.includes("{timestamp}")) return undefined;
  const value = headers[hmac.timestampHeader];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The sender's id where the signature covers it. A sender that signs its id but sent none (a Stripe event without
 * `id`, a Slack form without `trigger_id`) is known by its body's digest, as the senders below are: its retries, signed
 * anew, repeat that body. Where the signature does not cover the id (GitHub's and Twilio's id headers, an `hmac`
 * mapping's unsigned `idHeader`), anyone holding one signed delivery could send it again under a new id: the delivery
 * is known by the digest of its body instead, which the signature vouches for. Each of those senders signs the body
 * itself (Twilio its parameters, or its JSON through `bodySHA256`) and sends a retry with the same body, so a retry is
 * still recognised, under a rotation of secrets too. The digest, not the body, is kept: bounded, and not the payload.
 */
export function signedDeliveryId(
  scheme: SignatureScheme,
  settings: SignatureSettings,
  delivery: SignedDelivery,
): string | undefined {
  if (signsDeliveryId(scheme, settings)) {
    const id = scheme.deliveryId(delivery.headers, delivery.body, settings);
    if (id !== undefined && id !== "") return id;
    return bodyDigest(delivery.rawBody);
  }
  const timestamp = signedTimestampWithoutId(settings, delivery.headers);
  if (timestamp !== undefined) {
    // Nothing names the delivery but its signed timestamp and body: two events with one body are two deliveries,
    // and a copy of one (same timestamp, same body) is refused anyway once its timestamp is too old.
    const digest = createHash("sha256").update(`${timestamp}\n`).update(delivery.rawBody).digest("base64url");
    return `signed-sha256:${digest}`;
  }
  return bodyDigest(delivery.rawBody);
}

function bodyDigest(rawBody: Buffer): string {
  return `body-sha256:${createHash("sha256").update(rawBody).digest("base64url")}`;
}
