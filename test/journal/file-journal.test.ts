/** @module The file journal on its own: group commit, durability policies, failed writes cut back, recovery, retention. */

import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { planAction } from "../../src/actions/plan-action.js";
import { randomIds } from "../../src/clock.js";
import type { HostLogger, LogFields } from "../../src/host/contract.js";
import { type JournalIo, nodeIo } from "../../src/journal/append-log.js";
import { compactSegment } from "../../src/journal/compact-segment.js";
import { FileJournal, type FileJournalSettings } from "../../src/journal/file-journal.js";
import type { AdmittedRecord } from "../../src/journal/journal.js";
import { readJournal } from "../../src/journal/read-journal.js";
import { admit } from "../../src/pipeline/stages/journal.js";
import { pollFor } from "../helpers/cli.js";
import { readJournalLines } from "../helpers/journal-lines.js";

const HOUR = 3_600_000;
let dir: string;
let now: number;
const warnings: string[] = [];
/** What each start said it read (`journal: read`). */
const reads: LogFields[] = [];
const logger: HostLogger = {
  debug: (message, fields) => {
    if (message === "journal: read" && fields) reads.push(fields);
  },
  info() {},
  warn: (message) => warnings.push(message),
  error: (message) => warnings.push(message),
};
const opened: FileJournal[] = [];

function journal(settings: Partial<FileJournalSettings> = {}): FileJournal {
  const created = new FileJournal({
    dir,
    fsync: "batch",
    retainHours: 72,
    deliveryWindowMs: 24 * HOUR,
    maxDeliveries: 1000,
    clock: { now: () => now },
    logger,
    ...settings,
  });
  opened.push(created);
  return created;
}

/**
 * Compaction passes until `done()` holds, or a deadline. A pass waits for the rewrite the pass before started, and a
 * rewrite covers only the segments before the last checkpoint written, a write that lands in the background: two
 * passes were enough on an idle machine, not beside other CPU-bound jobs.
 */
async function compactUntil(j: FileJournal, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    await j.compact();
    if (done() || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function record(id: string, extra: Partial<AdmittedRecord> = {}): AdmittedRecord {
  return {
    id,
    at: now,
    hook: "wake",
    response: { status: 200, contentType: "application/json", body: `{"ok":true,"id":"${id}"}` },
    events: [
      {
        event: "session:system-event",
        payload: {
          source: { hook: "wake", requestId: id },
          sessionKey: "main",
          text: `text of ${id}`,
          raw: `text of ${id}`,
          untrusted: true,
          eventId: `event-${id}`,
        },
      },
    ],
    runs: [],
    ...extra,
  };
}

/** Bytes of every segment together. */
function segmentBytes(): number {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .reduce((sum, name) => sum + statSync(path.join(dir, name)).size, 0);
}

/** Every non-empty line of every segment, parsed, in order. */
function lines(): Array<Record<string, unknown>> {
  return readJournalLines(dir);
}

beforeEach(() => {
  dir = path.join(mkdtempSync(path.join(tmpdir(), "journal-")), "hooks-journal");
  now = 1_800_000_000_000;
  warnings.length = 0;
  reads.length = 0;
});

afterEach(async () => {
  for (const each of opened.splice(0)) await each.close();
  rmSync(path.dirname(dir), { recursive: true, force: true });
});

describe("admission", () => {
  it("writes each record as one line in a 0600 file inside a 0700 directory", async () => {
    const j = journal();
    await j.open();
    await j.admit(record("a"));
    expect(lines()).toEqual([expect.objectContaining({ t: "admitted", id: "a", hook: "wake" })]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const [file] = readdirSync(dir);
    expect(statSync(path.join(dir, file!)).mode & 0o777).toBe(0o600);
  });

  it.each([
    ["batch", 1],
    ["always", 40],
    ["off", 0],
  ] as const)("fsync %s: 40 records admitted in one turn take %i fsync(s)", async (fsync, fsyncs) => {
    const j = journal({ fsync });
    await j.open();
    await Promise.all(Array.from({ length: 40 }, (_, i) => j.admit(record(`r${i}`))));
    expect(j.stats.fsyncs).toBe(fsyncs);
    expect(lines().filter((line) => line.t === "admitted")).toHaveLength(40);
  });

  it("records that arrive while an fsync runs share the next one", async () => {
    const syncs: Array<() => void> = [];
    const io: JournalIo = {
      ...nodeIo,
      // Each sync completes only when the test says so: the second wave provably arrives during the first sync.
      fdatasync: (fd, callback) => syncs.push(() => nodeIo.fdatasync(fd, callback)),
    };
    const j = journal({ io });
    await j.open();
    const first = j.admit(record("first"));
    await vi.waitUntil(() => syncs.length === 1);
    const later = Array.from({ length: 10 }, (_, i) => j.admit(record(`later${i}`)));
    syncs.shift()!();
    await first;
    await vi.waitUntil(() => syncs.length === 1);
    syncs.shift()!();
    await Promise.all(later);
    expect(j.stats.fsyncs).toBe(2);
  });
});

describe("a write that fails", () => {
  it("rejects the batch, leaves no partial line, and the next batch is written whole", async () => {
    let failWrites = false;
    const io: JournalIo = {
      ...nodeIo,
      writeSync(fd, data) {
        if (!failWrites) return nodeIo.writeSync(fd, data);
        // Half the batch reaches the disk, then it is full.
        nodeIo.writeSync(fd, data.subarray(0, Math.floor(data.length / 2)));
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      },
    };
    const j = journal({ io });
    await j.open();
    await j.admit(record("before"));
    failWrites = true;
    await expect(j.admit(record("lost"))).rejects.toThrow("ENOSPC");
    failWrites = false;
    await j.admit(record("after"));
    expect(lines().map((line) => line.id)).toEqual(["before", "after"]);
  });

  it("cuts off a batch whose fsync failed, so a restart does not act on a refused request", async () => {
    let failSync = false;
    const io: JournalIo = {
      ...nodeIo,
      fdatasync: (fd, callback) =>
        failSync
          ? callback(Object.assign(new Error("EIO: i/o error"), { code: "EIO" }))
          : nodeIo.fdatasync(fd, callback),
    };
    const j = journal({ io });
    await j.open();
    failSync = true;
    await expect(j.admit(record("unsynced"))).rejects.toThrow("EIO");
    failSync = false;
    await j.admit(record("synced"));
    await j.close();
    const { unfinished } = await journal().open();
    expect(unfinished.map((u) => u.record.id)).toEqual(["synced"]);
  });
});

describe("what a restart finds", () => {
  it("records not done, with whether their turns were handed over; done records are finished", async () => {
    const j = journal();
    await j.open();
    await j.admit(record("done"));
    await j.admit(record("emitted-not-done"));
    await j.admit(record("turn-handed"));
    await j.admit(record("turn-not-handed"));
    j.done("done");
    j.handed("turn-handed");
    await j.close();

    const { unfinished } = await journal().open();
    expect(unfinished.map(({ record, handed }) => [record.id, handed])).toEqual([
      ["emitted-not-done", false],
      ["turn-handed", true],
      ["turn-not-handed", false],
    ]);
    expect(unfinished[0]!.record.events[0]).toEqual(record("emitted-not-done").events[0]);
  });

  it.each(["a crash", "a clean stop (its checkpoint)", "a carry-forward past retainHours"])(
    "names the turns of a record handed one by one after %s",
    async (how) => {
      const j = journal({ retainHours: 1 });
      await j.open();
      await j.admit(record("fan-out"));
      await j.admit(record("whole"));
      j.handed("fan-out", ["run-1"]);
      j.handed("fan-out", ["run-2"]);
      j.handed("whole");
      if (how.startsWith("a carry-forward")) {
        now += 3 * HOUR;
        await j.admit(record("later"));
        await j.compact();
      }
      if (!how.startsWith("a crash")) await j.close();
      const { unfinished } = await journal({ retainHours: 1 }).open();
      expect(
        unfinished
          .filter(({ record }) => record.id !== "later")
          .map(({ record, handed, handedRuns }) => [record.id, handed, handedRuns]),
      ).toEqual([
        ["fan-out", false, ["run-1", "run-2"]],
        ["whole", true, undefined],
      ]);
    },
  );

  it("skips a torn last line (a crash mid-write) and says so", async () => {
    const j = journal();
    await j.open();
    await j.admit(record("whole"));
    await j.close();
    const [file] = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
    appendFileSync(path.join(dir, file!), '{"t":"admitted","id":"torn","at":1,"hook":"wa');
    const { unfinished } = await journal().open();
    expect(unfinished.map((u) => u.record.id)).toEqual(["whole"]);
    expect(warnings.some((w) => w.includes("unreadable"))).toBe(true);
  });

  it("hands back the delivery ids still within their window, newest kept when there are too many", async () => {
    const j = journal();
    await j.open();
    await j.admit(record("old", { delivery: "delivery:github:old", at: now - 25 * HOUR }));
    for (const n of [1, 2, 3]) await j.admit(record(`d${n}`, { delivery: `delivery:github:${n}` }));
    await j.close();
    const { deliveries } = await journal({ maxDeliveries: 2 }).open();
    expect(deliveries.map((d) => d.key)).toEqual(["delivery:github:2", "delivery:github:3"]);
    expect(deliveries[1]!.response.body).toBe('{"ok":true,"id":"d3"}');
  });
});

describe("the checkpoint", () => {
  it("a start after a crash finds what was unfinished at the checkpoint and what came after it, nothing finished", async () => {
    // A segment per batch: each rollover writes a checkpoint, so the crash lands after one.
    const j = journal({ segmentBytes: 1 });
    await j.open();
    await j.admit(record("finished"));
    await j.admit(record("unfinished-before", { delivery: "delivery:github:1" }));
    j.handed("unfinished-before");
    j.done("finished");
    await j.admit(record("rolls-over"));
    j.done("rolls-over");
    // The rollover writes its checkpoint in the background.
    await pollFor(
      () => readdirSync(dir).includes("checkpoint.json") || undefined,
      "the rollover's checkpoint",
    );
    await j.admit(record("unfinished-after"));
    // No close: the process died here.
    const backlog = await journal().open();
    expect(backlog.unfinished.map(({ record, handed }) => [record.id, handed])).toEqual([
      ["unfinished-before", true],
      ["unfinished-after", false],
    ]);
    expect(backlog.deliveries.map((delivery) => delivery.key)).toEqual(["delivery:github:1"]);
    expect(backlog.stored?.map((event) => event.eventId)).toEqual(["event-finished", "event-rolls-over"]);
  });

  it("a clean stop leaves a checkpoint at the end: the next start reads no segment line", async () => {
    const j = journal();
    await j.open();
    for (let i = 0; i < 5; i++) {
      await j.admit(record(`r${i}`));
      if (i !== 3) j.done(`r${i}`);
    }
    await j.close();
    // Lines the next start would trip over if it read them again (same length, so the checkpoint still fits).
    const [segment] = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
    const file = path.join(dir, segment!);
    writeFileSync(file, readFileSync(file, "utf8").replaceAll('"t":"admitted"', '"t":"xdmitted"'));
    warnings.length = 0;
    const { unfinished } = await journal().open();
    expect(unfinished.map((u) => u.record.id)).toEqual(["r3"]);
    expect(warnings.filter((w) => w.includes("unreadable"))).toEqual([]);
  });

  it("is used by the next start while a large record (its payload kept once in the line) is unfinished", async () => {
    const j = journal();
    await j.open();
    const text = "x".repeat(70_000);
    const plan = planAction(
      { kind: "wake", text, mode: "now", agentId: "main" },
      {
        source: { hook: "wake", requestId: "large" },
        mainSessionKey: "main",
        allowUnsafe: false,
        contentSource: "Webhook",
        maxTextChars: 1_000_000,
        ids: randomIds,
      },
    );
    // The journal stage, as the pipeline runs it: the wrapped text is stored as what surrounds the raw text.
    await admit(j, {
      key: { id: "large" },
      at: now,
      hook: "wake",
      mappingId: undefined,
      response: { status: 200, headers: { "Content-Type": "application/json" }, body: '{"ok":true}' },
      delivery: undefined,
      plans: [plan],
      replayOf: undefined,
    });
    await j.close();
    // Twice: the second start's checkpoint holds the record it recovered, the payload still kept once.
    for (const start of [1, 2]) {
      reads.length = 0;
      const next = journal();
      const { unfinished } = await next.open();
      expect(reads, `start ${start}`).toEqual([expect.objectContaining({ checkpoint: true, bytesRead: 0 })]);
      expect(unfinished.map((u) => u.record.id)).toEqual(["large"]);
      expect(unfinished[0]!.record.events).toEqual(plan.events);
      await next.close();
      expect(statSync(path.join(dir, "checkpoint.json")).size).toBeLessThan(text.length * 1.2);
    }
  });

  it("one that does not fit the files (a segment cut shorter) is not trusted: everything is read", async () => {
    const j = journal();
    await j.open();
    await j.admit(record("a"));
    await j.admit(record("b"));
    j.done("a");
    await j.close();
    writeFileSync(
      path.join(dir, "checkpoint.json"),
      JSON.stringify({
        v: 1,
        seq: 1,
        offset: 10_000_000,
        segments: [],
        unfinished: [],
        deliveries: [],
        stored: [],
      }),
    );
    const { unfinished } = await journal().open();
    expect(unfinished.map((u) => u.record.id)).toEqual(["b"]);
  });
});

describe("finished records", () => {
  it("are rewritten to one small line each once their segment is closed; listing, replay and duplicates still work", async () => {
    const j = journal({ segmentBytes: 1 });
    await j.open();
    const request = {
      method: "POST",
      url: "/hooks/wake",
      headers: { "content-type": "application/json" },
      body: "{}",
    };
    await j.admit(record("plain"));
    await j.admit(record("stored", { request }));
    await j.admit(record("delivered", { delivery: "delivery:github:7" }));
    for (const id of ["plain", "stored", "delivered"]) j.done(id);
    await j.admit(record("later"));
    j.done("later");
    // Done lines are appended in the background: measure once all four are on disk.
    await pollFor(
      () => lines().filter((line) => line.t === "done").length >= 4 || undefined,
      "the done lines",
    );
    const before = segmentBytes();
    await compactUntil(j, () => lines().filter((line) => line.t === "finished").length >= 3);
    const finished = lines().filter((line) => line.t === "finished");
    expect(finished.map((line) => line.id)).toEqual(expect.arrayContaining(["plain", "stored", "delivered"]));
    expect(finished.every((line) => line.events === undefined)).toBe(true);
    expect(lines().filter((line) => line.t === "admitted" && line.id !== "later")).toEqual([]);
    expect(segmentBytes()).toBeLessThan(before);
    const entries = await readJournal(dir, { keepRecord: (id) => id === "stored" });
    expect(entries.filter((entry) => entry.id !== "later").map((entry) => [entry.id, entry.state])).toEqual([
      ["plain", "done"],
      ["stored", "done"],
      ["delivered", "done"],
    ]);
    expect(entries.find((entry) => entry.id === "stored")?.record?.request).toEqual(request);
    await j.close();
    // Read in full (no checkpoint): the compacted lines still give the delivery id back.
    rmSync(path.join(dir, "checkpoint.json"));
    const backlog = await journal().open();
    expect(backlog.unfinished).toEqual([]);
    expect(backlog.deliveries.map((delivery) => delivery.key)).toEqual(["delivery:github:7"]);
  });
});

describe("an answer told after admission (a wake's eventOutcome)", () => {
  const told = { status: 200, contentType: "application/json", body: '{"ok":true,"eventOutcome":"queued"}' };
  const tell = (j: FileJournal) => j.responded("w", 200, { key: "delivery:wake:1", response: told, at: now });

  it("is what the delivery's duplicates get after a restart: from the checkpoint, and from the lines", async () => {
    const j = journal();
    await j.open();
    await j.admit(record("w", { delivery: "delivery:wake:1" }));
    j.done("w");
    tell(j);
    await j.close();
    const fromCheckpoint = journal();
    expect((await fromCheckpoint.open()).deliveries.map((d) => d.response)).toEqual([told]);
    await fromCheckpoint.close();
    // Read in full, without the checkpoint: the `responded` line says it.
    rmSync(path.join(dir, "checkpoint.json"));
    expect((await journal().open()).deliveries.map((d) => d.response)).toEqual([told]);
  });

  it("survives compaction: merged into the record's finished line, or kept as its own line in a later segment", async () => {
    const j = journal({ segmentBytes: 1 });
    await j.open();
    await j.admit(record("w", { delivery: "delivery:wake:1" }));
    await j.admit(record("next"));
    for (const id of ["w", "next"]) j.done(id);
    tell(j);
    await j.admit(record("later"));
    j.done("later");
    await pollFor(
      () => lines().filter((line) => line.t === "done").length >= 3 || undefined,
      "the done lines",
    );
    await compactUntil(j, () => lines().some((line) => line.t === "finished" && line.id === "w"));
    expect(lines().some((line) => line.t === "finished" && line.id === "w")).toBe(true);
    await j.close();
    rmSync(path.join(dir, "checkpoint.json"));
    expect((await journal().open()).deliveries.map((d) => d.response)).toEqual([told]);

    // The same lines in one segment: the finished line keeps the answer told, not the admitted one.
    const file = path.join(dir, "one-segment.jsonl");
    const admitted = { t: "admitted", ...record("w", { delivery: "delivery:wake:1" }) };
    const responded = {
      t: "responded",
      id: "w",
      at: now,
      status: 200,
      delivery: "delivery:wake:1",
      response: told,
    };
    const done = { t: "done", id: "w", at: now };
    writeFileSync(file, [admitted, done, responded].map((line) => `${JSON.stringify(line)}\n`).join(""));
    await compactSegment(file);
    const rewritten = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rewritten).toEqual([expect.objectContaining({ t: "finished", id: "w", response: told })]);
  });
});

describe("done waits for the host", () => {
  it("writes a done line only once the host says what the events caused is stored", async () => {
    let store!: () => void;
    const hostPersisted = () => new Promise<void>((resolve) => (store = resolve));
    const j = journal({ host: { persisted: hostPersisted } });
    await j.open();
    await j.admit(record("r"));
    j.done("r");
    await j.compact();
    expect(lines().some((line) => line.t === "done")).toBe(false);
    store();
    await j.close();
    expect(
      lines()
        .filter((line) => line.t === "done")
        .map((line) => line.id),
    ).toEqual(["r"]);
  });

  it("leaves the record unfinished when the host could not store it, so the next start emits it again", async () => {
    const j = journal({ host: { persisted: () => Promise.reject(new Error("SQLITE_FULL")) } });
    await j.open();
    await j.admit(record("r"));
    j.done("r");
    await j.close();
    const { unfinished } = await journal().open();
    expect(unfinished.map((u) => u.record.id)).toEqual(["r"]);
    expect(warnings.some((w) => w.includes("SQLITE_FULL"))).toBe(true);
  });
});

describe("retention", () => {
  it("starts a new segment each hour and drops done segments past retainHours, oldest first, refusals with them", async () => {
    const j = journal({ retainHours: 2 });
    await j.open();
    const start = now;
    for (let hour = 0; hour < 5; hour++) {
      now = start + hour * HOUR;
      await j.admit(record(`h${hour}`));
      j.done(`h${hour}`);
      const refusal = { id: `refused${hour}`, at: now, hook: "wake", status: 401, code: "UNAUTHORIZED" };
      j.answered({ ...refusal, reason: "TOKEN_MISSING", client: "203.0.113.9" }, { perClient: true });
    }
    now = start + 4.5 * HOUR;
    await j.compact();
    // Segments of hours 0–2 ended more than two hours ago.
    const kept = (kind: string) =>
      lines()
        .filter((line) => line.t === kind)
        .map((line) => line.id);
    expect(kept("admitted")).toEqual(["h3", "h4"]);
    // A refusal is written with the next batch, so it may land in the next hour's segment: it goes with that one.
    expect(kept("answered")).not.toContain("refused0");
    expect(kept("answered")).not.toContain("refused1");
    expect(kept("answered")).toContain("refused4");
  });

  it("carries an unfinished record forward instead of dropping it with its segment", async () => {
    const j = journal({ retainHours: 1 });
    await j.open();
    await j.admit(record("running"));
    j.handed("running");
    now += 3 * HOUR;
    await j.admit(record("later"));
    await j.compact();
    await j.close();
    const { unfinished } = await journal({ retainHours: 1 }).open();
    // Oldest first, whichever segment the copy now lives in.
    expect(unfinished.map(({ record, handed }) => [record.id, handed])).toEqual([
      ["running", true],
      ["later", false],
    ]);
  });

  it("keeps a segment with delivery ids for the dedupe window even past retainHours", async () => {
    const j = journal({ retainHours: 1, deliveryWindowMs: 24 * HOUR });
    await j.open();
    await j.admit(record("remembered", { delivery: "delivery:github:abc" }));
    j.done("remembered");
    now += 3 * HOUR;
    await j.admit(record("next"));
    await j.compact();
    await j.close();
    const { deliveries } = await journal({ retainHours: 1 }).open();
    expect(deliveries.map((d) => d.key)).toEqual(["delivery:github:abc"]);
  });
});
