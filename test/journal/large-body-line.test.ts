/** @module A large stored body goes into its journal line as its own bytes, in pieces: the file holds exactly the line the text path writes, read back whole. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type JournalIo, nodeIo } from "../../src/journal/append-log.js";
import { FileJournal } from "../../src/journal/file-journal.js";
import type { AdmittedRecord, Journal } from "../../src/journal/journal.js";
import { jsonStringPieces, MAX_ESCAPED_BYTES } from "../../src/journal/json-bytes.js";
import { encodeAdmitted, encodeAdmittedLine } from "../../src/journal/line-format.js";
import { createJournalStage } from "../../src/pipeline/stages/journal.js";
import { CREDENTIAL_HEADERS } from "../../src/safety/credentials.js";
import { readJournalLines } from "../helpers/journal-lines.js";
import { clockAt, prepare, resolvedContext, resolverOf } from "../pipeline/stages/context.js";

const MiB = 1024 * 1024;
let dir: string;
const opened: FileJournal[] = [];

beforeEach(() => {
  dir = path.join(mkdtempSync(path.join(tmpdir(), "large-body-")), "hooks-journal");
});
afterEach(async () => {
  for (const each of opened.splice(0)) await each.close();
  rmSync(path.dirname(dir), { recursive: true, force: true });
});

/** A file journal in `dir`, and beside it the lines the text path (`encodeAdmitted`) makes of the same records. */
function journalWithExpected(io?: JournalIo): { journal: Journal; expected: string[] } {
  const file = new FileJournal({
    ...(io ? { io } : {}),
    dir,
    fsync: "batch",
    retainHours: 72,
    deliveryWindowMs: 86_400_000,
    maxDeliveries: 1000,
    clock: { now: () => 1_800_000_000_000 },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  opened.push(file);
  const expected: string[] = [];
  const journal: Journal = Object.create(file, {
    admit: {
      value: (record: AdmittedRecord) => {
        expected.push(encodeAdmitted(record));
        return file.admit(record);
      },
    },
  });
  return { journal, expected };
}

/** Every admitted line in the journal's files, as the bytes on disk. */
function admittedOnDisk(): string[] {
  const files = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
  const text = files.map((name) => readFileSync(path.join(dir, name), "utf8")).join("");
  return text.split("\n").filter((line) => line.startsWith('{"t":"a"'));
}

const resolver = resolverOf(prepare());

async function admitBodies(bodies: unknown[]): Promise<{ expected: string[] }> {
  const { journal, expected } = journalWithExpected();
  await (journal as FileJournal).open();
  const stage = createJournalStage({
    journal,
    clock: clockAt(1_800_000_000_000),
    storePayloads: true,
    credentialHeaders: CREDENTIAL_HEADERS,
  });
  const contexts = await Promise.all(bodies.map((body) => resolvedContext(resolver, body)));
  // Admitted in one turn: one batch holds the large lines and the small ones between them. Called directly: the
  // helpers' deep comparison of each context (megabytes of Buffer, compared byte by byte) would take half a minute.
  await Promise.all(contexts.map((ctx) => stage(ctx)));
  return { expected };
}

describe("a large body in its journal line", () => {
  it("writes the bytes the text path writes, for a body kept whole and one kept around its event's text", async () => {
    const quoted = `"quoted"\n\ttabs\\back\u0001\u001f`;
    const bodies = [
      { text: "a".repeat(2 * MiB) }, // past hooks.maxTextChars: kept whole
      { text: "small" },
      { text: `${"é".repeat(600_000)}${quoted}😀${"x".repeat(300_000)}` }, // 1.5 MB, kept around its event's text
      { text: "other", extra: `${"😀".repeat(300_000)}${quoted}` },
    ];
    const { expected } = await admitBodies(bodies);
    expect(expected).toHaveLength(4);
    // Both shapes of a stored body were written: kept whole ("b") and kept around its event's text ("ba").
    expect(expected.filter((line) => line.includes(',"b":"{')).length).toBe(3);
    expect(expected.filter((line) => line.includes(',"ba":[')).length).toBe(1);
    expect(admittedOnDisk().sort()).toEqual([...expected].sort());
    const read = readJournalLines(dir).filter((line) => line.t === "admitted");
    const stored = read.map((line) => (line.t === "admitted" ? line.request?.body : undefined));
    expect(stored.sort()).toEqual(bodies.map((body) => JSON.stringify(body)).sort());
  });

  it("gives the large body's bytes as they are, not a copy: only the text around them is encoded", () => {
    const raw = Buffer.from(JSON.stringify({ text: "b".repeat(2 * MiB) }));
    const record = {
      id: "r1",
      at: 1,
      hook: "wake",
      response: { status: 200 },
      events: [],
      request: { method: "POST", url: "/hooks/wake", headers: {}, body: raw.toString(), bodyBytes: raw },
    } as unknown as AdmittedRecord;
    const pieces = encodeAdmittedLine(record);
    expect(Array.isArray(pieces)).toBe(true);
    const bytes = (pieces as (string | Buffer)[]).map((piece) =>
      typeof piece === "string" ? Buffer.from(piece) : piece,
    );
    expect(Buffer.concat(bytes).toString()).toBe(encodeAdmitted(record));
    expect(bytes.some((piece) => piece.length > MiB && piece.buffer === raw.buffer)).toBe(true);
    const base64 = { method: "POST", url: "/hooks/wake", headers: {}, bodyBase64: "AAE=", bodyBytes: raw };
    const without = { ...record, request: base64 } as unknown as AdmittedRecord;
    expect(encodeAdmittedLine(without)).toBe(encodeAdmitted(without));
  });
});

describe("a large line whose write fails part way", () => {
  it("is refused and cut off whole, pieces written before the failure too; the next line is written whole", async () => {
    let writes = 0;
    let failSecond = false;
    const io: JournalIo = {
      ...nodeIo,
      writeSync(fd, data) {
        writes++;
        if (failSecond && writes === 2) {
          nodeIo.writeSync(fd, data.subarray(0, Math.floor(data.length / 2)));
          throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
        }
        return nodeIo.writeSync(fd, data);
      },
    };
    const { journal } = journalWithExpected(io);
    await (journal as FileJournal).open();
    const raw = Buffer.from(JSON.stringify({ text: "c".repeat(2 * MiB) }));
    const large = (id: string) =>
      ({
        id,
        at: 1,
        hook: "wake",
        response: { status: 200 },
        events: [],
        runs: [],
        request: { method: "POST", url: "/hooks/wake", headers: {}, body: raw.toString(), bodyBytes: raw },
      }) as unknown as AdmittedRecord;
    writes = 0;
    failSecond = true;
    await expect(journal.admit(large("lost"))).rejects.toThrow("ENOSPC");
    expect(writes).toBeGreaterThanOrEqual(2); // the first piece reached the file before the failure
    failSecond = false;
    await journal.admit(large("kept"));
    const read = readJournalLines(dir).filter((line) => line.t === "admitted");
    expect(read.map((line) => line.id)).toEqual(["kept"]);
    expect(admittedOnDisk()).toEqual([encodeAdmitted(large("kept"))]);
  });
});

describe("jsonStringPieces", () => {
  const joined = (bytes: Buffer) => Buffer.concat(jsonStringPieces(bytes) ?? []);

  it("is JSON.stringify of the decoded text, byte for byte, whatever needs escaping", () => {
    const samples = [
      "",
      "plain",
      '"',
      "\\",
      "\u0000\u0007\b\t\n\u000b\f\r\u001f\u007f",
      "é€😀\u2028\u2029\ufeff",
    ];
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const alphabet = ["a", '"', "\\", "\n", "\u0001", "\u001f", "é", "😀", " "];
    for (let i = 0; i < 200; i++) {
      let text = "";
      for (let j = Math.floor(next() * 80); j > 0; j--)
        text += alphabet[Math.floor(next() * alphabet.length)];
      samples.push(text);
    }
    for (const text of samples) {
      expect(joined(Buffer.from(text)).toString()).toBe(JSON.stringify(text));
    }
  });

  it("leaves a body with more escapes than it collects to the text path", () => {
    expect(jsonStringPieces(Buffer.from('"'.repeat(MAX_ESCAPED_BYTES)))).toBeDefined();
    expect(jsonStringPieces(Buffer.from('"'.repeat(MAX_ESCAPED_BYTES + 1)))).toBeUndefined();
  });
});
