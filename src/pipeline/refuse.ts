/** @module A refused request's answer: the error's status and message, its delivery id and turn slots given back. */

import { toHookError } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import { logFailure } from "./log-failure.js";
import type { Refuse } from "./stage.js";
import { answer } from "./stage.js";
import { errorResponse } from "./stages/respond.js";

export function createRefuse(logger: HostLogger): Refuse {
  return async (thrown, ctx) => {
    const error = toHookError(thrown);
    logFailure(logger, error, ctx, "hook request failed");
    // The delivery id is free again for the sender's retry.
    await ctx.ticket?.settle(undefined);
    // Not accepted: the slots its turns held are free again.
    ctx.pass?.cancel();
    return answer(ctx, errorResponse(error, ctx.requestId, ctx.extra), {
      refusal: {
        code: error.code,
        reason: error.reason ?? (error.code === "NOT_FOUND" ? "NO_MAPPING" : error.code),
        error: error.message,
      },
    });
  };
}
