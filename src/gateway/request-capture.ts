/** @module `hooks serve --capture <dir>`: writes each authenticated request as a fixture file for `hooks replay`. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import JSON5 from "json5";
import type { CapturedRequest } from "../index.js";
import type { GatewayLogger } from "./logger.js";

/** The JSON body when it parses and says it is JSON; otherwise the exact bytes as text. */
function bodyFields(request: CapturedRequest): { body: unknown } | { rawBody: string } {
  const text = request.rawBody.toString("utf8");
  const type = request.headers["content-type"]?.toLowerCase() ?? "";
  if (text !== "" && (type === "" || type.includes("json"))) {
    try {
      return { body: JSON.parse(text) };
    } catch {
      // Kept as raw bytes: replaying it shows the same INVALID_JSON the sender got.
    }
  }
  return { rawBody: text };
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
  mkdirSync(target, { recursive: true });
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
    writeFileSync(file, `${header}${JSON5.stringify(fixture, { space: 2, quote: '"' })}\n`);
    logger.info("captured request", { requestId: request.requestId, file: path.basename(file) });
  };
}
