/** @module What the baselines and the OpenClaw floor share: the lean token check and the JSON answer. */
import { timingSafeEqual } from "node:crypto";

/**
 * A check of the presented token against `token`: a buffer prepared once, the presented token copied into a scratch
 * buffer of its length, `timingSafeEqual`, the length checked after. Constant time in the secret and in the presented
 * length, nothing hashed per request: what a lean intake does, and what the plugin's hook-token check does.
 */
export function createTokenCheck(token) {
  const expected = Buffer.from(token, "utf8");
  const scratch = Buffer.alloc(expected.length);
  return (presented) => {
    const written = scratch.write(presented, 0, "utf8");
    scratch.fill(0, written);
    const same = timingSafeEqual(scratch, expected);
    return same && Buffer.byteLength(presented, "utf8") === expected.length;
  };
}

/** A JSON answer with its length. */
export function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}
