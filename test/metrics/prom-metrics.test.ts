/** @module The prom-client metrics: label values bounded by the config, the fixed sets at zero, gauges read at scrape time. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { register as globalRegistry } from "prom-client";
import { describe, expect, it } from "vitest";
import { AppendLog, nodeIo } from "../../src/journal/append-log.js";
import { FileJournal } from "../../src/journal/file-journal.js";
import { PromMetrics } from "../../src/metrics/prom-metrics.js";
import { signatureFailureOf } from "../../src/verify/signature-failure.js";
import { parseMetrics, samplesOf, sampleValue } from "../helpers/prometheus-text.js";

function metrics() {
  return new PromMetrics({ hookPaths: ["github/push", "stripe"], mappingIds: ["gh-push", "stripe-paid"] });
}

async function scrape(m: PromMetrics) {
  return parseMetrics(await m.registry.metrics());
}

describe("PromMetrics: bounded labels", () => {
  it.each([
    ["wake", "wake"],
    ["agent", "agent"],
    ["github/push", "github/push"],
    ["stripe", "stripe"],
    // What a sender chose is never a label value: an unconfigured path, a near miss, a mapping id.
    ["random-404-path", "other"],
    ["github/push/extra", "other"],
    ["gh-push", "other"],
    ["Wake", "other"],
    ["", "other"],
  ])("hook %j is labelled %j", (hook, label) => {
    expect(metrics().hookLabel(hook)).toBe(label);
  });

  it("labels the mapping with a configured id only, else empty", () => {
    const m = metrics();
    expect(m.mappingLabel("gh-push")).toBe("gh-push");
    expect(m.mappingLabel(undefined)).toBe("");
    expect(m.mappingLabel("not-configured")).toBe("");
  });

  it("counts requests by hook, mapping and status, and times them", async () => {
    const m = metrics();
    m.request("wake", undefined, 200, 0.002, 40);
    m.request("wake", undefined, 200, 0.004, 60);
    m.request("wake", undefined, 401, 0.0001, 0);
    m.request("github/push", "gh-push", 200, 0.01, 5000);
    for (let i = 0; i < 3; i++) m.request(`scan-${i}`, undefined, 404, 0.0001, 0);
    const text = await scrape(m);
    const requests = samplesOf(text, "hooks_requests_total");
    expect(requests).toEqual(
      expect.arrayContaining([
        { labels: { hook: "wake", mapping: "", status: "200" }, value: 2 },
        { labels: { hook: "wake", mapping: "", status: "401" }, value: 1 },
        { labels: { hook: "github/push", mapping: "gh-push", status: "200" }, value: 1 },
        { labels: { hook: "other", mapping: "", status: "404" }, value: 3 },
      ]),
    );
    expect(requests).toHaveLength(4);
    expect(sampleValue(text, "hooks_request_duration_seconds_count", { hook: "wake" })).toBe(3);
    expect(sampleValue(text, "hooks_request_duration_seconds_count", { hook: "other" })).toBe(3);
    expect(sampleValue(text, "hooks_request_body_bytes_sum", { hook: "wake" })).toBe(100);
    expect(sampleValue(text, "hooks_request_body_bytes_sum", { hook: "github/push" })).toBe(5000);
    // 2 ms falls in the 2.5 ms bucket, not in the 1 ms one.
    expect(sampleValue(text, "hooks_request_duration_seconds_bucket", { hook: "wake", le: "0.001" })).toBe(1);
    expect(sampleValue(text, "hooks_request_duration_seconds_bucket", { hook: "wake", le: "0.0025" })).toBe(
      2,
    );
  });

  it("starts the fixed sets at zero and bounds unknown words to other", async () => {
    const m = metrics();
    let text = await scrape(m);
    for (const reason of ["missing", "invalid", "throttled"])
      expect(sampleValue(text, "hooks_auth_failures_total", { reason })).toBe(0);
    for (const outcome of ["ok", "error", "timeout", "interrupted"])
      expect(sampleValue(text, "hooks_agent_turns_total", { outcome })).toBe(0);
    m.authFailure("invalid");
    m.authFailure("invalid");
    m.signatureFailure("github", "mismatch");
    m.signatureFailure("custom-verifier", "the moon is full");
    m.duplicate("wake");
    m.duplicate("not-a-path");
    text = await scrape(m);
    expect(sampleValue(text, "hooks_auth_failures_total", { reason: "invalid" })).toBe(2);
    expect(
      sampleValue(text, "hooks_signature_failures_total", { scheme: "github", reason: "mismatch" }),
    ).toBe(1);
    expect(sampleValue(text, "hooks_signature_failures_total", { scheme: "other", reason: "other" })).toBe(1);
    expect(sampleValue(text, "hooks_duplicates_total", { hook: "wake" })).toBe(1);
    expect(sampleValue(text, "hooks_duplicates_total", { hook: "other" })).toBe(1);
  });
});

describe("PromMetrics: turns, transforms and the journal", () => {
  it("keeps turns in flight and their outcomes", async () => {
    const m = metrics();
    let waiting = 3;
    m.agentTurnsInFlight(() => waiting);
    waiting = 1;
    m.turnFinished("ok");
    m.turnFinished("timeout");
    const text = await scrape(m);
    expect(sampleValue(text, "hooks_agent_turns_in_flight", {})).toBe(1);
    expect(sampleValue(text, "hooks_agent_turns_total", { outcome: "ok" })).toBe(1);
    expect(sampleValue(text, "hooks_agent_turns_total", { outcome: "timeout" })).toBe(1);
  });

  it("times transforms by mapping and counts outcomes and worker restarts", async () => {
    const m = metrics();
    m.transform("gh-push", "ok", 0.003);
    m.transform("gh-push", "timeout", 5);
    m.transform("gone", "error", 0.001);
    m.workerRestart("timeout");
    const text = await scrape(m);
    expect(sampleValue(text, "hooks_transform_duration_seconds_count", { mapping: "gh-push" })).toBe(2);
    expect(sampleValue(text, "hooks_transforms_total", { mapping: "gh-push", outcome: "timeout" })).toBe(1);
    expect(sampleValue(text, "hooks_transforms_total", { mapping: "", outcome: "error" })).toBe(1);
    expect(sampleValue(text, "hooks_transform_worker_restarts_total", { reason: "timeout" })).toBe(1);
  });

  it("reads the journal's backlog when scraped, and times each fsync", async () => {
    const m = metrics();
    let pending = { unfinished: 0, unsynced: 0 };
    m.journalBacklog(() => pending);
    m.journalFsync(0.0004);
    pending = { unfinished: 7, unsynced: 3 };
    const text = await scrape(m);
    expect(sampleValue(text, "hooks_journal_unfinished_records", {})).toBe(7);
    expect(sampleValue(text, "hooks_journal_unsynced_lines", {})).toBe(3);
    expect(sampleValue(text, "hooks_journal_fsync_seconds_count", {})).toBe(1);
    expect(sampleValue(text, "hooks_journal_fsync_seconds_bucket", { le: "0.0005" })).toBe(1);
  });

  it("follows a real FileJournal: a record is unfinished until done, each fsync timed", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hooks-metrics-journal-"));
    const m = metrics();
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    const journal = new FileJournal({
      dir,
      fsync: "batch",
      retainHours: 72,
      deliveryWindowMs: 60_000,
      maxDeliveries: 100,
      clock: { now: () => Date.now() },
      logger: quiet,
      metrics: m,
    });
    m.journalBacklog(() => journal.pending());
    try {
      await journal.open();
      const response = { status: 200, contentType: "application/json", body: "{}" };
      await journal.admit({ id: "r1", at: Date.now(), hook: "wake", response, events: [], runs: [] });
      const text = await scrape(m);
      expect(sampleValue(text, "hooks_journal_unfinished_records", {})).toBe(1);
      expect(sampleValue(text, "hooks_journal_unsynced_lines", {})).toBe(0);
      expect(sampleValue(text, "hooks_journal_fsync_seconds_count", {})).toBe(1);
      journal.done("r1");
      // The done marker may go out with a later batch: the backlog shows it then, not necessarily at once.
      await expect
        .poll(async () => sampleValue(await scrape(m), "hooks_journal_unfinished_records", {}))
        .toBe(0);
    } finally {
      await journal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("counts a line as unsynced from its append until its fsync", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hooks-metrics-log-"));
    const synced: number[] = [];
    const log = new AppendLog(
      "batch",
      () => undefined,
      nodeIo,
      (seconds) => synced.push(seconds),
    );
    try {
      log.openFile(1, path.join(dir, "1.jsonl"));
      const first = log.append("{}");
      const second = log.append("{}");
      expect(log.unsynced).toBe(2);
      await Promise.all([first, second]);
      expect(log.unsynced).toBe(0);
      expect(synced).toHaveLength(1);
    } finally {
      log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("two instances share nothing, and prom-client's global registry stays empty", async () => {
    const a = metrics();
    const b = metrics();
    a.request("wake", undefined, 200, 0.001, 10);
    expect(
      sampleValue(await scrape(a), "hooks_requests_total", { hook: "wake", mapping: "", status: "200" }),
    ).toBe(1);
    expect(samplesOf(await scrape(b), "hooks_requests_total")).toEqual([]);
    expect(await globalRegistry.getSingleMetric("hooks_requests_total")).toBeUndefined();
  });
});

describe("signature failures in one word", () => {
  it.each([
    ["signature header missing", "missing"],
    ["timestamp header missing", "missing"],
    ["id header missing", "missing"],
    ["signature header malformed", "malformed"],
    ["timestamp header malformed", "malformed"],
    ["timestamp is 712 s old; tolerance 300 s", "stale"],
    ["timestamp is 330 s in the future; tolerance 300 s", "stale"],
    ["signature mismatch", "mismatch"],
    [
      "signature mismatch against https://example.com/t; if Twilio calls another URL, set this mapping's verify.publicUrl to it exactly as in the Twilio console",
      "mismatch",
    ],
    ["body hash mismatch", "mismatch"],
    ["something new", "other"],
  ])("%j is %j", (reason, word) => {
    expect(signatureFailureOf(reason)).toBe(word);
  });
});
