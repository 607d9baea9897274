/** @module `hooks serve --capture <dir>`: writes each authenticated request as a fixture file for `hooks replay`. */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { type CapturedRequest, fixtureFromRequest, writeFixtureFile } from "../index.js";
import { shellQuote } from "./endpoints.js";
import { hooksCommand } from "./hooks-command.js";
import type { GatewayLogger } from "./logger.js";

/** Where `hooks serve --capture` writes when it is given no directory (git-ignored in this repository). */
export const DEFAULT_CAPTURE_DIR = "captures";

export function createRequestCapture(dir: string, logger: GatewayLogger): (request: CapturedRequest) => void {
  const target = path.resolve(dir);
  // Fixtures hold payloads, as the journal does: the owner's only.
  mkdirSync(target, { recursive: true, mode: 0o700 });
  // Spelled for where `serve` runs, as the fixture's path is: a bare `npx hooks` elsewhere fetches another package.
  const replay = `${hooksCommand()} replay`;
  return (request) => {
    const at = new Date().toISOString();
    const fixture = fixtureFromRequest({
      name: `${request.hook} at ${at}`,
      description: `request ${request.requestId}, captured by hooks serve --capture`,
      method: request.method,
      hook: request.hook,
      headers: request.headers,
      query: request.query,
      rawBody: request.rawBody,
    });
    const slug = request.hook.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 60);
    const file = path.join(
      target,
      `${at.replace(/[:.]/g, "-")}-${slug}-${request.requestId.slice(0, 8)}.json5`,
    );
    writeFixtureFile(file, fixture, [
      `Captured by hooks serve --capture (request id ${request.requestId}); credentials removed.`,
      `Replay: ${replay} ${shellQuote(path.relative(process.cwd(), file))}`,
    ]);
    logger.info("captured request", { requestId: request.requestId, file: path.basename(file) });
  };
}
