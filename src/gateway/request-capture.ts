/** @module `hooks serve --capture <dir>`: writes each authenticated request as a fixture file for `hooks replay`. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import JSON5 from "json5";
import type { CapturedRequest } from "../index.js";
import type { GatewayLogger } from "./logger.js";

/**
 * The exact bytes, so a replay re-signs what the sender signed: as text when they are UTF-8 that round-trips,
 * else base64. A parsed-and-reprinted JSON body would differ in whitespace or escapes from what was signed.
 */
function bodyFields(request: CapturedRequest): { rawBody: string } | { rawBodyBase64: string } {
  const text = request.rawBody.toString("utf8");
  return Buffer.from(text, "utf8").equals(request.rawBody)
    ? { rawBody: text }
    : { rawBodyBase64: request.rawBody.toString("base64") };
}

/** Headers a replay does not need and that only make fixtures noisy. */
const TRANSPORT_HEADERS = new Set([
  "host",
  "content-length",
  "connection",
  "transfer-encoding",
  "accept-encoding",
]);

export function createRequestCapture(dir: string, logger: GatewayLogger): (request: CapturedRequest) => void {
  const target = path.resolve(dir);
  // Fixtures hold payloads, as the journal does: the owner's only.
  mkdirSync(target, { recursive: true, mode: 0o700 });
  return (request) => {
    const at = new Date().toISOString();
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !TRANSPORT_HEADERS.has(name)),
    );
    const fixture = {
      name: `${request.hook} at ${at}`,
      request: {
        method: request.method,
        path: request.hook,
        headers,
        query: request.query,
        ...bodyFields(request),
      },
    };
    const slug = request.hook.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 60);
    const file = path.join(
      target,
      `${at.replace(/[:.]/g, "-")}-${slug}-${request.requestId.slice(0, 8)}.json5`,
    );
    const header = `// Captured by hooks serve --capture (request id ${request.requestId}); credentials removed.\n// Replay: hooks replay ${path.relative(process.cwd(), file)}\n`;
    writeFileSync(file, `${header}${JSON5.stringify(fixture, { space: 2, quote: '"' })}\n`, {
      mode: 0o600,
    });
    logger.info("captured request", { requestId: request.requestId, file: path.basename(file) });
  };
}
