/** @module Stages 1 and 2: is the path ours (and which hook does it name), and is the method POST (or a sender's handshake GET). */
import { HookError } from "../errors.js";

/** A request target (`/hooks/wake?x=1`): its path, its parsed query, and its query as sent. */
export interface RequestTarget {
  pathname: string;
  query: URLSearchParams | undefined;
  rawQuery: string;
}

export function splitTarget(url: string): RequestTarget {
  const queryStart = url.indexOf("?");
  if (queryStart === -1) return { pathname: url, query: undefined, rawQuery: "" };
  const rawQuery = url.slice(queryStart + 1);
  return { pathname: url.slice(0, queryStart), query: new URLSearchParams(rawQuery), rawQuery };
}

/**
 * Stage 1: the hook name below the base path with outer slashes trimmed, or undefined when the path is not ours
 * (the route does not claim it). The name is matched as sent, never percent-decoded: `/hooks/wak%65` is not
 * `wake`, and a mapping on `github/push` is not reached by `github%2Fpush`.
 */
export function hookName(pathname: string, basePath: string): string | undefined {
  if (!pathname.startsWith(basePath)) return undefined;
  const rest = pathname.slice(basePath.length);
  if (rest !== "" && rest[0] !== "/") return undefined;
  return rest.replace(/^\/+|\/+$/g, "");
}

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

export function notFound(): HookError {
  return new HookError("NOT_FOUND", "No hook is configured at this path.");
}
