/** @module Twilio: `X-Twilio-Signature`, a base64 HMAC-SHA1 of the URL plus the sorted form parameters, or of a URL whose `bodySHA256` vouches for a JSON body. */
import { createHash } from "node:crypto";
import type { SignatureScheme, SignatureSettings, SignatureVerdict } from "../signature-scheme.js";
import { equalBytes, headerValue, isForm, macOf, plainSecretProblem } from "./compare.js";

const SIGNATURE = "x-twilio-signature";
const IDEMPOTENCY = "i-twilio-idempotency-token";
const BODY_HASH = "bodySHA256";

function publicUrlOf(settings: SignatureSettings): string {
  if (settings.publicUrl === undefined) throw new Error("the twilio scheme needs publicUrl");
  return settings.publicUrl;
}

/** The configured URL as the log may show it: credentials in it (`https://user:pass@host`) are not. */
function shownUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, "$1***@");
}

/**
 * Most mismatches with the right token are the URL: Twilio signs the one in its console, which a proxy, another
 * host name or port, or http for https makes differ from `publicUrl`. The query is not shown (it may carry a token).
 */
function urlMismatch(publicUrl: string, rawQuery: string): string {
  const query = rawQuery === "" ? "" : " and the query as received";
  return `signature mismatch against ${shownUrl(publicUrl)}${query}; if Twilio calls another URL, set this mapping's verify.publicUrl to it exactly as in the Twilio console`;
}

function withQuery(url: string, rawQuery: string): string {
  return rawQuery === "" ? url : `${url}?${rawQuery}`;
}

/**
 * Twilio has signed the same URL with and without the default port over the years; its library tries
 * both, on the authority only so that the path and query keep the exact characters signed. Its further
 * fallbacks (the URL re-serialised by `new URL()` and by `querystring`) exist for callers that hand it
 * a rebuilt URL; here the query is the one received, so they would only add HMACs.
 */
function urlCandidates(url: string): string[] {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!match) return [url];
  const scheme = match[1]!;
  const authority = match[2]!;
  const rest = url.slice(match[0].length);
  const userInfoEnd = authority.lastIndexOf("@");
  const userInfo = authority.slice(0, userInfoEnd + 1);
  const hostAndPort = authority.slice(userInfoEnd + 1);
  // In an IPv6 literal the colons inside the brackets are not the port's.
  const portStart = hostAndPort.indexOf(":", hostAndPort.lastIndexOf("]") + 1);
  const host = portStart === -1 ? hostAndPort : hostAndPort.slice(0, portStart);
  const port =
    portStart === -1 ? (scheme.toLowerCase() === "https://" ? ":443" : ":80") : hostAndPort.slice(portStart);
  const withoutPort = scheme + userInfo + host + rest;
  const withPort = scheme + userInfo + host + port + rest;
  return withoutPort === withPort ? [withoutPort] : [withoutPort, withPort];
}

/**
 * What twilio's `getExpectedTwilioSignature` appends to the URL: names sorted (plain JS sort, UTF-16
 * code units), and a repeated name's values de-duplicated and sorted, each written as name then value.
 */
function formSuffix(body: Buffer): string {
  const values = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(body.toString("utf8"))) {
    const list = values.get(name);
    if (list === undefined) values.set(name, [value]);
    else list.push(value);
  }
  let suffix = "";
  for (const name of [...values.keys()].sort()) {
    for (const value of [...new Set(values.get(name))].sort()) suffix += name + value;
  }
  return suffix;
}

function signature(authToken: string, signedText: string): string {
  return macOf("sha1", authToken, [signedText]).toString("base64");
}

function bodyHash(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

/** A query without its `bodySHA256` parameters, the other parameters left byte for byte as they were. */
function withoutBodyHash(rawQuery: string): string[] {
  return rawQuery
    .split("&")
    .filter((part) => part !== "" && new URLSearchParams(part).keys().next().value !== BODY_HASH);
}

/** Without a content type (a caller that gives none), JSON is told by parsing, a form by its `name=value` shape. */
function looksLikeForm(text: string): boolean {
  try {
    JSON.parse(text);
    return false;
  } catch {
    return /^[!-~]+$/.test(text) && text.includes("=");
  }
}

export const twilio: SignatureScheme = {
  name: "twilio",
  signatureHeaders: [SIGNATURE],
  signsTimestamp: false,
  checkSecret: plainSecretProblem,
  verify(request, settings): SignatureVerdict {
    const sent = headerValue(request.headers, SIGNATURE);
    if (sent === undefined) return { ok: false, reason: "signature header missing" };
    const url = withQuery(publicUrlOf(settings), request.rawQuery);
    // As twilio's validateIncomingRequest: a `bodySHA256` in the query means the body is vouched for by hash.
    const claimedHash = new URLSearchParams(request.rawQuery).get(BODY_HASH);
    const form = claimedHash === null && isForm(headerValue(request.headers, "content-type"));
    // Anything else with a body must carry its hash: the URL-only signature would vouch for no byte of it.
    if (claimedHash === null && !form && request.rawBody.length > 0)
      return { ok: false, reason: "body hash mismatch" };
    const suffix = form ? formSuffix(request.rawBody) : "";
    const candidates = urlCandidates(url);
    const matches = settings.secrets.some((token) =>
      candidates.some((candidate) => equalBytes(sent, signature(token, candidate + suffix))),
    );
    if (!matches) return { ok: false, reason: urlMismatch(publicUrlOf(settings), request.rawQuery) };
    if (claimedHash !== null && !equalBytes(claimedHash, bodyHash(request.rawBody)))
      return { ok: false, reason: "body hash mismatch" };
    return { ok: true };
  },
  sign(input, settings) {
    const base = publicUrlOf(settings);
    const headers: Record<string, string> = { [IDEMPOTENCY]: input.deliveryId };
    const text = input.rawBody.toString("utf8");
    const form = input.contentType === undefined ? looksLikeForm(text) : isForm(input.contentType);
    if (input.rawBody.length === 0 || form) {
      const url = withQuery(base, input.rawQuery);
      headers[SIGNATURE] = signature(input.secret, url + formSuffix(input.rawBody));
      return { headers };
    }
    const rawQuery = [...withoutBodyHash(input.rawQuery), `${BODY_HASH}=${bodyHash(input.rawBody)}`].join(
      "&",
    );
    headers[SIGNATURE] = signature(input.secret, withQuery(base, rawQuery));
    return { headers, rawQuery };
  },
  deliveryId: (headers) => headerValue(headers, IDEMPOTENCY),
};
