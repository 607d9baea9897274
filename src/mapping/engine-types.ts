/** @module The mapping engine as the request pipeline sees it: claim a hook name, then run the claimed mappings. */
import type { HookAction } from "../actions/validate-action.js";
import type { HookError } from "../errors.js";
import type { ExternalSource } from "../safety/wrap-external.js";

/** Everything a mapping may look at; no socket, no response, no credentials. */
export interface MappedRequest {
  /** The hook name: the path below `hooks.path`, outer slashes trimmed (`github/push`). */
  hook: string;
  /** Path and query as received, without credential parameters. */
  url: string;
  /** Request headers without credentials, names lower-cased. */
  headers: Record<string, string>;
  /** Query parameters, last value wins, without credential parameters. */
  query: Record<string, string>;
  body: unknown;
  /** The body exactly as received (transforms that check a signature themselves, or read a non-JSON body). */
  rawBody: Buffer;
  /** Size of the body as received, checked against the winning mapping's own limit. */
  bodyBytes: number;
  requestId: string;
}

/** Proof that some mapping may own a hook name; obtained before the body is read. */
export interface MappingClaim {
  hook: string;
  /** The largest body any candidate mapping accepts. */
  maxBodyBytes: number;
}

export interface MappedAction {
  action: HookAction;
  allowUnsafe: boolean;
  contentSource: ExternalSource;
  /** The mapping's `instructions`: config text, placed before the wrapped content. */
  instructions: string | undefined;
}

/** Why a mapping before the winner did not match, and what the winner produced: replay prints this. */
export interface MappingTrace {
  candidates: Array<{ id: string; matched: boolean; reason: string }>;
  mappingId?: string;
  /** Rendered template fields, one record per action (per forEach item). */
  rendered: Array<Record<string, string | undefined>>;
  /** What the transform returned, per item (`undefined` when no transform ran). */
  transformOutput: unknown[];
  /** Items dropped beyond the fan-out limit. */
  dropped?: number;
}

/** A mapping's fixed success answer, rendered for one request. */
export interface RenderedResponse {
  status: 200 | 202 | 204;
  contentType: string;
  /** Undefined for 204. */
  body: string | undefined;
}

export type MappingResult =
  | {
      ok: true;
      mappingId: string | undefined;
      actions: MappedAction[];
      trace: MappingTrace;
      response?: RenderedResponse;
      /** The mapping answers an agent action with the turn's outcome (`response: "completion"`). */
      waitForCompletion: boolean;
    }
  | { ok: false; mappingId: string | undefined; error: HookError; trace: MappingTrace };
