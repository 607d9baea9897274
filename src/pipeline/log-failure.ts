/** @module How a request's server-side failure is logged: 5xx with their cause; mapping failures were logged by the engine, with the module. */
import { type HookError, toHookError } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import type { RequestContext } from "./stage.js";

export function logFailure(logger: HostLogger, thrown: unknown, ctx: RequestContext, what: string): void {
  const error: HookError = toHookError(thrown);
  if (error.status < 500 || error.code === "MAPPING_FAILED") return;
  const cause =
    error.cause instanceof Error
      ? error.cause.message
      : error.cause === undefined
        ? undefined
        : String(error.cause);
  logger.error(`${what}: ${error.code}${cause ? `: ${cause}` : ""}`, {
    requestId: ctx.requestId,
    hook: ctx.hook,
    mappingId: ctx.notes?.mappingId,
  });
}
