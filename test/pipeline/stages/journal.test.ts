/** @module The journal stage: the admitted answer built (JSON, 204 or a mapping's fixed reply) and the request recorded with it, credentials removed, before the context passes on; a journal that cannot record is 503. */
import { describe, expect, it } from "vitest";
import type { AdmittedRecord, Journal } from "../../../src/journal/journal.js";
import { createNullJournal, NULL_JOURNAL } from "../../../src/journal/null-journal.js";
import type { RequestContext } from "../../../src/pipeline/stage.js";
import { checkDuplicate } from "../../../src/pipeline/stages/dedupe.js";
import { createJournalStage } from "../../../src/pipeline/stages/journal.js";
import { CREDENTIAL_HEADERS } from "../../../src/safety/credentials.js";
import { MemoryStore } from "../../../src/store/memory.js";
import {
  type ContextInit,
  clockAt,
  nextOf,
  prepare,
  quiet,
  refusalOf,
  resolvedContext,
  resolverOf,
  TOKEN,
} from "./context.js";

const resolver = resolverOf(
  prepare({
    mappings: [
      {
        id: "slash",
        match: { path: "slash" },
        action: "wake",
        textTemplate: "{{text}}",
        response: { body: "On it: {{text}}" },
      },
    ],
  }),
);
const clock = clockAt(1_700_000_000_000);

/** The stage on a journal that records nothing but tells what it was given. */
function journaled(storePayloads = false, journal: Journal = createNullJournal()) {
  const records: AdmittedRecord[] = [];
  journal.observe?.({ admitted: (record) => void records.push(record) });
  const stage = createJournalStage({ journal, clock, storePayloads, credentialHeaders: CREDENTIAL_HEADERS });
  return { journal: stage, records };
}

const wake = (init: ContextInit = {}): Promise<RequestContext> =>
  resolvedContext(resolver, { text: "Deploy finished" }, init);

describe("the journal stage", () => {
  it("admits the request with its answer, and passes the answer and the time on a new context", async () => {
    const { journal, records } = journaled();
    const ctx = await wake({ journalKey: { id: "rec-1", requestId: "caller-id" } });
    const next = await nextOf(journal, ctx);
    const body = ctx.resolution!.body!;
    const text = JSON.stringify(body);
    expect(next.admitted).toEqual({
      status: 200,
      headers: {
        "Content-Type": "application/json; charset=utf-8",
        "Content-Length": String(Buffer.byteLength(text)),
        "X-Request-Id": "req-1",
      },
      body: text,
    });
    expect(next.admittedAt).toBe(clock.now());
    expect(next).toEqual({ ...ctx, admitted: next.admitted, admittedAt: clock.now() });
    expect(records).toEqual([
      expect.objectContaining({
        id: "rec-1",
        requestId: "caller-id",
        at: clock.now(),
        hook: "wake",
        mappingId: undefined,
        response: { status: 200, contentType: "application/json; charset=utf-8", body: text },
        delivery: undefined,
        runs: [],
        request: undefined,
      }),
    ]);
    expect(records[0]!.events.map((planned) => planned.event)).toEqual([
      "session:system-event",
      "heartbeat:request",
    ]);
  });

  it("records the delivery's key, and carries the exchange's extra headers on the answer", async () => {
    const { journal, records } = journaled();
    const verdict = await checkDuplicate(
      { store: new MemoryStore(), keepMs: 60_000, logger: quiet },
      "wake",
      "d-1",
    );
    if (verdict.kind !== "first") throw new Error("expected a first delivery");
    const next = await nextOf(
      journal,
      await wake({ ticket: verdict.ticket, extra: { Deprecation: "true" } }),
    );
    expect(records[0]!.delivery).toBe("delivery:wake:d-1");
    expect(next.admitted?.headers["Deprecation"]).toBe("true");
  });

  it("keeps the request itself with storePayloads, its credentials removed", async () => {
    const { journal, records } = journaled(true);
    await nextOf(
      journal,
      await wake({
        method: "POST",
        url: `/hooks/wake?token=${TOKEN}&from=ci`,
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "x-trace": "t-1" },
      }),
    );
    expect(records[0]!.request).toMatchObject({
      method: "POST",
      url: "/hooks/wake?from=ci",
      headers: { "content-type": "application/json", "x-trace": "t-1" },
    });
    expect(JSON.stringify(records[0])).not.toContain(TOKEN);
  });

  it("answers a mapping's fixed reply as it is, under its mapping", async () => {
    const { journal, records } = journaled();
    const next = await nextOf(
      journal,
      await resolvedContext(resolver, { text: "deploy" }, { url: "/hooks/slash" }),
    );
    expect(next.admitted).toEqual({
      status: 200,
      headers: {
        "Content-Type": "text/plain; charset=utf-8",
        "Content-Length": "13",
        "X-Request-Id": "req-1",
      },
      body: "On it: deploy",
    });
    expect(records[0]).toMatchObject({
      mappingId: "slash",
      response: { status: 200, body: "On it: deploy" },
    });
  });

  it("answers 204 with no body when the resolution has none", async () => {
    const { journal } = journaled();
    const ctx = await wake();
    const empty = Object.freeze({ ...ctx, resolution: { status: 204, body: undefined, plans: [] } });
    const next = await nextOf(journal, empty);
    expect(next.admitted).toEqual({ status: 204, headers: { "X-Request-Id": "req-1" }, body: undefined });
  });

  it("refuses 503 UNAVAILABLE with Retry-After when the journal cannot record, nothing passed on", async () => {
    const failure = new Error("ENOSPC: no space left on device");
    const { journal } = journaled(false, {
      ...NULL_JOURNAL,
      admit: async () => {
        throw failure;
      },
    });
    const refused = await refusalOf(journal, await wake());
    expect([refused.code, refused.status, refused.headers]).toEqual([
      "UNAVAILABLE",
      503,
      { "Retry-After": "5" },
    ]);
    expect(refused.cause).toBe(failure);
    expect(refused.message).not.toContain("ENOSPC");
  });
});
