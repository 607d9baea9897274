/** @module The allow-list stage (`allowFrom`): a request from a source address its hook does not accept is refused 403, before its credential or body is looked at. */
import { HookError } from "../../errors.js";
import type { AllowLists } from "../allow-lists.js";
import { need, type Stage } from "../stage.js";

/**
 * Runs once the client's address is known (admit) and before authentication and the body: a source that is not
 * allowed costs no credential check, counts no failed authentication against its address and has no byte of its
 * body read. `allowFor` is `createAllowLists(prepared)` of the config in force.
 */
export function createAllowFromStage(allowFor: AllowLists): Stage {
  return function allowFrom(ctx) {
    const allows = allowFor(ctx.hook);
    if (allows === undefined) return ctx;
    // The exact address, never its /64: a list names the addresses it means. An unknown one ("unknown") is not on it.
    if (allows(need(ctx.address, "the client address"))) return ctx;
    throw new HookError("SOURCE_NOT_ALLOWED", "This hook does not accept requests from this address.");
  };
}
