/** @module The types a transform author imports, and `defineTransform` so a `.ts` transform type-checks. */
import type { IncomingHttpHeaders } from "node:http";
import type { HookActionOverride } from "../actions/action-schemas.js";

export type { HookActionOverride };

/** What a transform receives. */
export interface TransformContext<Payload = unknown> {
  payload: Payload;
  headers: IncomingHttpHeaders;
  query: Record<string, string>;
  /** The hook name (`github/push`). */
  path: string;
  /** Path and query of the request as received. */
  url: string;
  /** The body exactly as received: check a signature the intake does not know, or read a non-JSON body. */
  rawBody: Buffer;
  mapping: { id: string };
  /** ISO-8601 UTC time of the request. */
  now: string;
}

/**
 * `null` skips the request (204); `undefined` keeps the mapping's templated action; an object is merged over it.
 */
export type TransformResult = HookActionOverride | null | undefined;

export type HookTransform<Payload = unknown> = (
  context: TransformContext<Payload>,
) => TransformResult | Promise<TransformResult>;

/** Identity at run time; gives the author's editor the context and result types. */
export function defineTransform<Payload = unknown>(
  transform: HookTransform<Payload>,
): HookTransform<Payload> {
  return transform;
}

/** Where a mapping's transform lives: the configured module, its resolved file, the export to call. */
export interface TransformRef {
  file: string;
  module: string;
  exportName?: string | undefined;
  /** `worker` (the default) runs it in the pool of worker threads, `inline` in the gateway's own thread. */
  isolate: "worker" | "inline";
}
