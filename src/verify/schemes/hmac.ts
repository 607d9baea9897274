/** @module The generic `hmac` scheme: a sender described by its mapping (header, algorithm, encoding, prefix, what is signed). */
import type { HmacOptions, SignatureScheme, SignatureSettings } from "../signature-scheme.js";
import { equalBytes, headerValue, macOf, plainSecretProblem, timestampProblem } from "./compare.js";

const PLACEHOLDER = /(\{body\}|\{timestamp\}|\{id\})/;

/** Each placeholder in use needs the header that fills it, and the body must be signed at all. */
function hmacOptionsProblem(options: HmacOptions): string | undefined {
  if (!options.signedContent.includes("{body}")) return "signedContent must include {body}";
  if (options.signedContent.includes("{timestamp}") && options.timestampHeader === undefined)
    return "signedContent uses {timestamp} but no timestampHeader is set";
  if (options.signedContent.includes("{id}") && options.idHeader === undefined)
    return "signedContent uses {id} but no idHeader is set";
  return undefined;
}

/** The config check should have refused these at startup; reaching one here is a bug, not a bad delivery. */
function optionsOf(settings: SignatureSettings): HmacOptions {
  if (settings.hmac === undefined) throw new Error("the hmac scheme needs its hmac options");
  const problem = hmacOptionsProblem(settings.hmac);
  if (problem !== undefined) throw new Error(`hmac options: ${problem}`);
  return settings.hmac;
}

/** The template's text around the exact body bytes; the body is never decoded into it. */
function signedParts(template: string, body: Buffer, timestamp: string, id: string): Array<string | Buffer> {
  return template
    .split(PLACEHOLDER)
    .filter((part) => part !== "")
    .map((part) =>
      part === "{body}" ? body : part === "{timestamp}" ? timestamp : part === "{id}" ? id : part,
    );
}

function digest(options: HmacOptions, secret: string, parts: ReadonlyArray<string | Buffer>): string {
  return macOf(options.algorithm, secret, parts).toString(options.encoding);
}

export const hmac: SignatureScheme = {
  name: "hmac",
  // The header is per mapping: the caller adds `hmac.header` to the credentials it hides.
  signatureHeaders: [],
  // Per mapping: a timestamp (and an id) are signed only where `signedContent` names them.
  signsTimestamp: false,
  checkSecret: plainSecretProblem,
  verify(request, settings) {
    const options = optionsOf(settings);
    const sent = headerValue(request.headers, options.header);
    if (sent === undefined) return { ok: false, reason: "signature header missing" };
    if (!sent.startsWith(options.prefix)) return { ok: false, reason: "signature header malformed" };
    let timestamp = "";
    if (options.timestampHeader !== undefined) {
      const value = headerValue(request.headers, options.timestampHeader);
      if (value === undefined) return { ok: false, reason: "timestamp header missing" };
      const late = timestampProblem(value, request.nowSeconds, settings.toleranceSeconds);
      if (late !== undefined) return { ok: false, reason: late };
      timestamp = value;
    }
    let id = "";
    if (options.idHeader !== undefined && options.signedContent.includes("{id}")) {
      const value = headerValue(request.headers, options.idHeader);
      if (value === undefined) return { ok: false, reason: "id header missing" };
      id = value;
    }
    const parts = signedParts(options.signedContent, request.rawBody, timestamp, id);
    // Hex is case-insensitive: senders that print it upper-case sign the same bytes.
    const given = sent.slice(options.prefix.length);
    const signature = options.encoding === "hex" ? given.toLowerCase() : given;
    const matches = settings.secrets.some((secret) => equalBytes(signature, digest(options, secret, parts)));
    return matches ? { ok: true } : { ok: false, reason: "signature mismatch" };
  },
  sign(input, settings) {
    const options = optionsOf(settings);
    const timestamp = String(input.timestampSeconds);
    const parts = signedParts(options.signedContent, input.rawBody, timestamp, input.deliveryId);
    const headers: Record<string, string> = {
      [options.header]: options.prefix + digest(options, input.secret, parts),
    };
    if (options.timestampHeader !== undefined) headers[options.timestampHeader] = timestamp;
    if (options.idHeader !== undefined) headers[options.idHeader] = input.deliveryId;
    return { headers };
  },
  deliveryId: (headers, _body, settings) => {
    const name = settings.hmac?.idHeader;
    return name === undefined ? undefined : headerValue(headers, name);
  },
};
