/** @module What the inspector does with a stored request: a dry run on the current config, a replay through the live pipeline, a fixture file. */
import { Readable } from "node:stream";
import JSON5 from "json5";
import { CALLER_GONE, type PipelineResponse } from "../pipeline/request.js";
import type { Pipeline } from "../pipeline/run-pipeline.js";
import type { PreparedHooks } from "../prepare-hooks.js";
import { validateFixture } from "../replay/load-fixture.js";
import type { DryRunPipelines } from "./dry-run-pipelines.js";
import type { InspectorReplay } from "./inspector-source.js";
import type { StoredRequest } from "./journal-reads.js";

/** The config and request path new requests run on now. */
export interface LiveConfig {
  prepared: PreparedHooks;
  pipeline: Pipeline;
}

/** A dry run of the stored request on `prepared`, its report as the inspector shows it; secrets are the caller's to scrub. */
export async function dryRunStored(dryRuns: DryRunPipelines, prepared: PreparedHooks, stored: StoredRequest) {
  const loaded = validateFixture(stored.fixture, `journal:${stored.entry.id}`);
  const report = await dryRuns.for(prepared).replay(loaded);
  return {
    note: "A dry run of the stored request against the current config: nothing was sent or emitted.",
    status: report.status,
    body: report.body ?? null,
    mappingId: report.mappingId ?? null,
    candidates: report.candidates,
    actions: report.actions,
    events: report.events,
    logs: report.logs.map(({ level, message }) => ({ level, message })),
  };
}

/** Sends the stored request again through the live pipeline; secrets are the caller's to scrub. */
export async function replayStored(
  live: LiveConfig,
  dryRuns: DryRunPipelines,
  stored: StoredRequest,
): Promise<InspectorReplay> {
  const loaded = validateFixture(stored.fixture, `journal:${stored.entry.id}`);
  // As its sender would send it now: the token added, or signed afresh with the path's secret; its delivery id
  // kept, so a delivery the gateway still remembers is answered as a duplicate and nothing happens.
  const built = dryRuns.for(live.prepared).buildRequest(loaded);
  const headers = { ...built.headers, "content-length": String(built.rawBody.length) };
  let response: PipelineResponse | undefined;
  const exchange = await live.pipeline(
    {
      method: built.method,
      url: built.url,
      headers,
      remoteAddress: "127.0.0.1",
      body: Readable.from(built.rawBody.length > 0 ? [built.rawBody] : []),
      // The page does not wait for an agent turn (up to its timeout): a request that asks to wait gets its
      // admission answer, as a caller that hung up does, and the list shows the turn's end when it comes.
      hungUp: CALLER_GONE,
      replayOf: stored.entry.id,
    },
    {
      async respond(answer) {
        response = answer;
      },
    },
  );
  return {
    status: exchange.status,
    requestId: exchange.requestId,
    duplicate: response?.headers["Idempotent-Replay"] === "true",
    body: parsedBody(response),
  };
}

/** The stored request as a fixture file, with a comment on where it came from; secrets are the caller's to scrub. */
export function fixtureText(stored: StoredRequest): string {
  const comment = [
    `Taken from the journal (request id ${stored.entry.requestId.replace(/[^\x20-\x7e]/g, "?")}); credentials removed.`,
    "Run it: hooks test <this file>, or hooks replay <this file> (a signed path is signed afresh).",
  ];
  return `${comment.map((line) => `// ${line}\n`).join("")}${JSON5.stringify(stored.fixture, { space: 2, quote: '"' })}\n`;
}

function parsedBody(response: PipelineResponse | undefined): unknown {
  if (response?.body === undefined) return null;
  try {
    return JSON.parse(response.body);
  } catch {
    return response.body;
  }
}
