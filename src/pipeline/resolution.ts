/** @module What a request resolves to, as data: its route (wake, agent, a mapping's claim), its answer and the plans of the events it causes, and what resolving learnt on the way. */
import type { ActionPlan, PendingRun } from "../actions/plan-action.js";
import type { MappingClaim, MappingTrace, RenderedResponse } from "../mapping/engine-types.js";

/** Which handler a hook name has: wake, agent, or the mappings that claim it. */
export type HookRoute = { kind: "wake" } | { kind: "agent" } | { kind: "mapped"; claim: MappingClaim };

/** What a request resolved to: the answer and, as data, the events it causes. */
export interface Resolution {
  status: number;
  /** Response body; undefined for 204. */
  body: Record<string, unknown> | undefined;
  mappingId?: string | undefined;
  /** What to emit and track, in order. */
  plans: ActionPlan[];
  /** The mapping's fixed answer, which replaces the JSON body (and its status). */
  reply?: RenderedResponse | undefined;
  /** The run whose outcome the answer waits for (`waitForCompletion`), if any. */
  awaitRun?: PendingRun | undefined;
}

/** What resolving learnt about the request even when it fails: the owning mapping and its trace. */
export interface ResolutionNotes {
  mappingId?: string | undefined;
  trace?: MappingTrace | undefined;
}
