/** @module The assistant's inspector tools on a stand-in reader: their shape as OpenClaw takes it, what they pass on, how they fail. */
import { toJsonSchema } from "@valibot/to-json-schema";
import { describe, expect, it } from "vitest";
import type { InspectorDetail, InspectorFilter, InspectorSummary } from "../../src/index.js";
import {
  INSPECTOR_TOOL_NAMES,
  RECENT_REQUESTS_PARAMETERS,
  REQUEST_ID_PARAMETERS,
  RecentRequestsParamsSchema,
  RequestIdParamsSchema,
} from "../../src/openclaw/inspector-tool-params.js";
import { createInspectorTools, type InspectorReader } from "../../src/openclaw/inspector-tools.js";
import type { OpenClawTool } from "../../src/openclaw/openclaw-api.js";

const SUMMARY: InspectorSummary = {
  id: "req-1",
  requestId: "req-1",
  at: 1,
  hook: "deploy",
  status: 200,
  state: "done",
};
const DETAIL: InspectorDetail = {
  ...SUMMARY,
  headers: { authorization: "[redacted]" },
  body: { kind: "json", value: { a: 1 } },
};

/** A reader that records the filters it was given and knows one request. */
function fakeReader(journaling = true) {
  const filters: InspectorFilter[] = [];
  const reader: InspectorReader = {
    journaling,
    list: async (filter) => {
      filters.push(filter);
      return [SUMMARY];
    },
    detail: async (id) => (id === SUMMARY.id ? DETAIL : undefined),
    dryRun: async (id) =>
      id === SUMMARY.id ? { mapping: "deploy", events: ["session:system-event"] } : undefined,
  };
  return { reader, filters };
}

function tool(tools: OpenClawTool[], name: string): OpenClawTool {
  const found = tools.find((each) => each.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

const { $schema: _recentDraft, ...recentJson } = toJsonSchema(RecentRequestsParamsSchema);
const { $schema: _idDraft, ...idJson } = toJsonSchema(RequestIdParamsSchema);

describe("the inspector tools", () => {
  it("are three read-only tools with names, labels, descriptions and JSON Schema parameters", () => {
    const tools = createInspectorTools(() => fakeReader().reader);
    expect(tools.map((each) => each.name)).toEqual(Object.values(INSPECTOR_TOOL_NAMES));
    for (const each of tools) {
      expect(each.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(each.label).not.toBe("");
      expect(each.description.length).toBeGreaterThan(40);
      expect(each.parameters).toMatchObject({ type: "object", additionalProperties: false });
      // Webhook payloads are written by outsiders: OpenClaw taints what the model writes from them.
      expect(each.resultContentSource).toBe("network");
    }
    expect(tools.map((each) => each.description).join(" ")).not.toMatch(/\breplay\b(?! without)/i);
  });

  it("show the model the JSON Schema of the valibot schemas they parse with", () => {
    expect(RECENT_REQUESTS_PARAMETERS).toEqual(recentJson);
    expect(REQUEST_ID_PARAMETERS).toEqual(idJson);
  });

  it("recent requests: passes the filters on, 20 by default, and answers text and details alike", async () => {
    const { reader, filters } = fakeReader();
    const recent = tool(
      createInspectorTools(() => reader),
      INSPECTOR_TOOL_NAMES.recent,
    );
    const answer = await recent.execute("call-1", {});
    expect(answer.details).toEqual({ requests: [SUMMARY] });
    expect(answer.content).toEqual([{ type: "text", text: JSON.stringify(answer.details, null, 2) }]);
    await recent.execute("call-2", { status: "4xx", hook: "deploy", text: "TOKEN", limit: 5 });
    expect(filters).toEqual([{ limit: 20 }, { status: "4xx", hook: "deploy", text: "TOKEN", limit: 5 }]);
  });

  it.each([
    [{ limit: 0 }, /limit/],
    [{ limit: 101 }, /limit/],
    [{ limit: 2.5 }, /limit/],
    [{ status: 401 }, /status/],
    [{ anything: "else" }, /anything/],
  ])("recent requests: refuses %j", async (params, message) => {
    const recent = tool(
      createInspectorTools(() => fakeReader().reader),
      INSPECTOR_TOOL_NAMES.recent,
    );
    await expect(recent.execute("call", params)).rejects.toThrow(message);
  });

  it("recent requests without the journal: the list comes with how to turn it on", async () => {
    const recent = tool(
      createInspectorTools(() => fakeReader(false).reader),
      INSPECTOR_TOOL_NAMES.recent,
    );
    const answer = await recent.execute("call", {});
    expect(answer.details).toEqual({
      note: expect.stringContaining("plugins.entries.hooks-intake.config.journal.enabled"),
      requests: [SUMMARY],
    });
  });

  it("one request: its redacted detail as the reader gives it; an unknown id is an error", async () => {
    const detail = tool(
      createInspectorTools(() => fakeReader().reader),
      INSPECTOR_TOOL_NAMES.detail,
    );
    expect((await detail.execute("call", { id: "req-1" })).details).toEqual(DETAIL);
    await expect(detail.execute("call", { id: "nope" })).rejects.toThrow(/no request "nope"/);
    await expect(detail.execute("call", {})).rejects.toThrow(/id/);
  });

  it("dry run: the reader's report; an unknown id is an error", async () => {
    const dryRun = tool(
      createInspectorTools(() => fakeReader().reader),
      INSPECTOR_TOOL_NAMES.dryRun,
    );
    expect((await dryRun.execute("call", { id: "req-1" })).details).toEqual({
      mapping: "deploy",
      events: ["session:system-event"],
    });
    await expect(dryRun.execute("call", { id: "nope" })).rejects.toThrow(/no request "nope"/);
  });

  it("say so when the intake is not running (no reader yet, or no longer)", async () => {
    for (const each of createInspectorTools(() => undefined)) {
      const params = each.name === INSPECTOR_TOOL_NAMES.recent ? {} : { id: "req-1" };
      await expect(each.execute("call", params)).rejects.toThrow(/not running/);
    }
  });
});
