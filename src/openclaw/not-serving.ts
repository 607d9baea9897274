/** @module The route a non-serving registration shows OpenClaw: listed by `plugins inspect`, answering 503 if ever reached. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { HookError } from "../index.js";

const RETRY_AFTER_SECONDS = "5";

/**
 * Discovery and inspection loads list the plugin's route like the serving load does, so `openclaw plugins inspect`
 * shows it. Nothing runs the effects of such a registration, so a request that reached it must not be accepted:
 * it is refused like any moment the intake cannot take work, and the sender retries.
 */
export async function notServing(_req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const error = new HookError("UNAVAILABLE", "the webhook intake is not running in this OpenClaw process", {
    headers: { "Retry-After": RETRY_AFTER_SECONDS },
  });
  res.writeHead(error.status, { "Content-Type": "application/json; charset=utf-8", ...error.headers });
  res.end(JSON.stringify(error.toJSON()));
  return true;
}
