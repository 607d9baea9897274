/** @module Read-only tools for OpenClaw's assistant over the inspector: recent requests, one request, a dry-run replay. */
import * as v from "valibot";
import type { InspectorFilter, InspectorSource } from "../index.js";
import { CONFIG_KEY } from "./gateway-config.js";
import {
  INSPECTOR_TOOL_NAMES,
  RECENT_REQUESTS_PARAMETERS,
  REQUEST_ID_PARAMETERS,
  RecentRequestsParamsSchema,
  RequestIdParamsSchema,
} from "./inspector-tool-params.js";
import type { OpenClawTool, OpenClawToolResult } from "./openclaw-api.js";

/**
 * What the tools may use of the inspector: reading only, never a replay. Everything it returns is redacted already
 * (credential headers `[redacted]`, credential query parameters removed); the tools pass it on as it is.
 */
export type InspectorReader = Pick<InspectorSource, "journaling" | "list" | "detail" | "dryRun">;

const NOT_RUNNING = "the webhook intake is not running in this OpenClaw process";
/** Without the journal the inspector knows only the requests since the start, in memory, without bodies. */
const JOURNAL_OFF = `the request journal is off: only recent requests since the start are known, without their bodies (set ${CONFIG_KEY}.journal.enabled to true to keep them)`;
const notFound = (id: string) =>
  new Error(
    `no request ${JSON.stringify(id)} is known: it is older than the journal keeps, or the id is wrong`,
  );

/** Throws what OpenClaw hands back to the model as the tool's error (its contract: fail by throwing). */
function parse<const S extends v.GenericSchema>(schema: S, params: unknown): v.InferOutput<S> {
  const parsed = v.safeParse(schema, params ?? {});
  if (!parsed.success) throw new Error(`invalid parameters: ${v.summarize(parsed.issues)}`);
  return parsed.output;
}

/** The model reads the text; `details` keeps the same data as structured JSON for OpenClaw's UI and code mode. */
function result<T>(details: T): OpenClawToolResult<T> {
  return { content: [{ type: "text", text: JSON.stringify(details, null, 2) }], details };
}

/**
 * The tools only read: the reader offers no replay. `reader()` is asked at each call, since the inspector exists
 * only while the plugin's service runs. Webhook payloads in the results are written by outsiders, so the results
 * are marked as external content and OpenClaw treats what the model writes from them accordingly.
 */
export function createInspectorTools(reader: () => InspectorReader | undefined): OpenClawTool[] {
  const open = (): InspectorReader => {
    const current = reader();
    if (!current) throw new Error(NOT_RUNNING);
    return current;
  };
  return [
    {
      name: INSPECTOR_TOOL_NAMES.recent,
      label: "Webhook requests",
      description:
        "Lists the webhook requests the hooks-intake plugin received, newest first: time, hook, matched mapping, " +
        "HTTP status, state, refusal reason. Refused requests (401, 404, …) are listed too. Read-only.",
      parameters: RECENT_REQUESTS_PARAMETERS,
      resultContentSource: "network",
      async execute(_toolCallId, params) {
        const { status, hook, text, limit } = parse(RecentRequestsParamsSchema, params);
        const source = open();
        const filter: InspectorFilter = {
          limit,
          ...(status === undefined ? {} : { status }),
          ...(hook === undefined ? {} : { hook }),
          ...(text === undefined ? {} : { text }),
        };
        const requests = await source.list(filter);
        return result(source.journaling ? { requests } : { note: JOURNAL_OFF, requests });
      },
    },
    {
      name: INSPECTOR_TOOL_NAMES.detail,
      label: "Webhook request",
      description:
        "One webhook request in detail: headers (credentials redacted), query, body, verification result, the " +
        "mapping's decision, the planned events and what became of each (queued, sent, failed), agent runs. Read-only.",
      parameters: REQUEST_ID_PARAMETERS,
      resultContentSource: "network",
      async execute(_toolCallId, params) {
        const { id } = parse(RequestIdParamsSchema, params);
        const detail = await open().detail(id);
        if (!detail) throw notFound(id);
        return result(detail);
      },
    },
    {
      name: INSPECTOR_TOOL_NAMES.dryRun,
      label: "Webhook dry run",
      description:
        "Runs a recorded webhook request through the current mappings without emitting anything: shows which " +
        "mapping would match and the events it would plan. Sends nothing, wakes nothing.",
      parameters: REQUEST_ID_PARAMETERS,
      resultContentSource: "network",
      async execute(_toolCallId, params) {
        const { id } = parse(RequestIdParamsSchema, params);
        const report = await open().dryRun(id);
        if (report === undefined) throw notFound(id);
        return result(report);
      },
    },
  ];
}
