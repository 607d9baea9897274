/** @module The claim stage: wake, agent, or a mapping that claims the hook name; nothing claims it: 404, before the body is read. */

import { HookError } from "../../errors.js";
import type { Stage } from "../stage.js";
import type { Resolver } from "./resolve.js";

export function createClaimStage(resolver: Resolver): Stage {
  return function claim(ctx) {
    if (ctx.route !== undefined) return ctx; // claimed already, to read a signed body
    const route = resolver.route(ctx.hook);
    if (route === undefined) throw notFound();
    return { ...ctx, route };
  };
}

export function notFound(): HookError {
  return new HookError("NOT_FOUND", "No hook is configured at this path.");
}
