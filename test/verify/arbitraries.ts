/** @module Random inputs shared by the signature-scheme property tests: bodies of every kind, secrets, clocks, one-byte tampering. */
import type { IncomingHttpHeaders } from "node:http";
import fc from "fast-check";
import type { SignedParts, SignedRequest } from "../../src/verify/signature-scheme.js";

export const RUNS = { numRuns: 100 };

/** Text without lone surrogates: every signer encodes it to the same UTF-8 bytes. */
export const text = (constraints: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({ unit: "grapheme", maxLength: 40, ...constraints });

export const formText = fc
  .array(fc.tuple(text(), text()), { maxLength: 8 })
  .map((pairs) => new URLSearchParams(pairs).toString());

export const jsonText = fc.json({ maxDepth: 3 });

/** Bodies a sender signs as text: JSON, form, anything. */
export const textBody = fc.oneof(jsonText, formText, text({ maxLength: 200 }));

/** Bodies as raw bytes, not necessarily UTF-8. */
export const bytesBody = fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes));

export const secret = text({ minLength: 1 });

/** Two secrets that differ. */
export const secretPair = fc.tuple(secret, secret).filter(([a, b]) => a !== b);

export const unixSeconds = fc.integer({ min: 1_000_000_000, max: 4_000_000_000 });
export const tolerance = fc.integer({ min: 1, max: 3600 });

/** A signing time and a "now" inside the window around it. */
export const clock = fc
  .tuple(unixSeconds, tolerance, fc.double({ min: -1, max: 1, noNaN: true }))
  .map(([signedAt, toleranceSeconds, where]) => ({
    signedAt,
    toleranceSeconds,
    now: signedAt + Math.trunc(where * toleranceSeconds),
  }));

/** A signing time and a "now" outside the window, late or early by `beyond` seconds past the tolerance. */
export const staleClock = fc
  .tuple(unixSeconds, tolerance, fc.integer({ min: 1, max: 100_000 }), fc.boolean())
  .map(([signedAt, toleranceSeconds, beyond, late]) => ({
    signedAt,
    toleranceSeconds,
    beyond,
    late,
    now: late ? signedAt + toleranceSeconds + beyond : signedAt - toleranceSeconds - beyond,
  }));

export function windowReason(clocked: { late: boolean; beyond: number; toleranceSeconds: number }): string {
  const off = clocked.toleranceSeconds + clocked.beyond;
  return clocked.late
    ? `timestamp is ${off} s old; tolerance ${clocked.toleranceSeconds} s`
    : `timestamp is ${off} s in the future; tolerance ${clocked.toleranceSeconds} s`;
}

/** A non-empty body with one byte changed (xor with a non-zero mask). */
export const tamperedBody = (body: fc.Arbitrary<Buffer>) =>
  body
    .filter((bytes) => bytes.length > 0)
    .chain((bytes) =>
      fc.tuple(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 })).map(([at, mask]) => {
        const changed = Buffer.from(bytes);
        changed[at] = changed[at]! ^ mask;
        return { body: bytes, changed };
      }),
    );

export function request(
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
  nowSeconds: number,
  rawQuery = "",
): SignedRequest {
  return { headers, rawBody, rawQuery, nowSeconds };
}

/** The request a scheme's own `sign` describes. */
export function requestFrom(
  signed: SignedParts,
  rawBody: Buffer,
  nowSeconds: number,
  rawQuery = "",
): SignedRequest {
  return { headers: { ...signed.headers }, rawBody, rawQuery: signed.rawQuery ?? rawQuery, nowSeconds };
}

/**
 * Every reason a scheme may log: none of them can carry a secret, a signature or body bytes. The one URL a reason
 * names is the configured `publicUrl` (twilio), never the request's query.
 */
export const REASON =
  /^(signature header missing|signature header malformed|signature mismatch|timestamp header missing|timestamp header malformed|timestamp is \d+ s old; tolerance \d+ s|timestamp is \d+ s in the future; tolerance \d+ s|body hash mismatch|id header missing|signature mismatch against https:\/\/hooks\.example\.com\/t( and the query as received)?; if Twilio calls another URL, set this mapping's verify\.publicUrl to it exactly as in the Twilio console)$/;
