/** @module The content-type stage: JSON or a form, and a declared length over the hook's limit refused, before a byte is read. */

import { need, type Stage } from "../stage.js";
import { classifyContentType } from "./parse.js";
import { checkDeclaredLength } from "./read-body.js";
import type { Resolver } from "./resolve.js";

export function createContentTypeStage(resolver: Resolver): Stage {
  return function contentType(ctx) {
    if (ctx.raw !== undefined) return ctx; // a signed body, read and judged by the authentication stage
    const { headers } = ctx.request;
    const bodyKind = classifyContentType(headers["content-type"]);
    const maxBytes = resolver.bodyLimit(need(ctx.route, "the route"));
    checkDeclaredLength(headers, maxBytes);
    return { ...ctx, bodyKind, maxBytes };
  };
}
