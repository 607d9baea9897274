/** @module The method stage: POST, or GET on a path whose sender subscribes with one (Meta's handshake). */
import { HookError } from "../../errors.js";
import type { RequestContext, Stage } from "../stage.js";

export const method: Stage = (ctx: RequestContext) => {
  checkMethod(ctx.request.method, ctx.verifier.handshake !== undefined);
  return ctx;
};

/**
 * POST, and GET on a path whose sender subscribes with one (Meta's handshake). HEAD is refused there too: no sender
 * sends it, and answering it would be a second way to try verify tokens.
 */
export function checkMethod(method: string, takesHandshake: boolean): void {
  if (method === "POST" || (method === "GET" && takesHandshake)) return;
  if (takesHandshake) {
    throw new HookError(
      "METHOD_NOT_ALLOWED",
      "This hook accepts POST, and GET for its sender's subscription.",
      {
        headers: { Allow: "GET, POST" },
      },
    );
  }
  throw new HookError("METHOD_NOT_ALLOWED", "Hooks accept POST only.", { headers: { Allow: "POST" } });
}
