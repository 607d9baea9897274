/** @module A large body is kept once in its journal line (not as body, raw text and wrapped copy), and read back whole. */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compactBody, compactEvents, expandLine } from "../../src/journal/compact-line.js";
import { parseJournalLine } from "../../src/journal/records.js";
import { AUTH, baseConfig, postJson, writeConfig } from "../gateway/support.js";
import { cleanupCli, makeTempDir, startServe } from "../helpers/cli.js";

afterEach(cleanupCli);

const WRAP = (raw: string) => `NOTICE\n<<<BEGIN id="x">>>\n${raw}\n<<<END id="x">>>`;

describe("a journal line keeps a large payload once", () => {
  it.each([
    ["plain text", "a".repeat(100_000)],
    ["text JSON must escape", `line "one"\n\\ two \u0001 ${"é😀".repeat(30_000)}`],
  ])("%s: compacted and expanded, the line reads back equal", (_name, raw) => {
    const events = [
      { event: "session:system-event", payload: { text: WRAP(raw), raw, untrusted: true } },
      { event: "heartbeat:request", payload: { reason: "hook:wake" } },
    ];
    const body = JSON.stringify({ mode: "now", text: raw });
    const line = { events: compactEvents(events), request: compactBody(body, events) };
    const stored = JSON.stringify(line);
    expect(stored.length).toBeLessThan(JSON.stringify(raw).length * 1.2);
    // The planned events themselves stay whole: they are emitted after the line is written.
    expect(events[0]!.payload.text).toBe(WRAP(raw));
    const read = JSON.parse(stored);
    expandLine(read);
    expect(read).toEqual({ events, request: { body } });
  });

  it("leaves small payloads, and texts that do not hold their raw text (neutralised markers), as they are", () => {
    const small = [{ event: "session:system-event", payload: { text: WRAP("hi"), raw: "hi" } }];
    expect(compactEvents(small)).toEqual(small);
    const raw = "b".repeat(100_000);
    const changed = [
      { event: "session:system-event", payload: { text: WRAP(`${raw}!`).replace(raw, "c"), raw } },
    ];
    expect(compactEvents(changed)).toEqual(changed);
    expect(compactBody("form=b", changed)).toEqual({ body: "form=b" });
  });

  it("through hooks serve: a 900 KB wake adds about its size to the journal, and the record reads back whole", async () => {
    const dir = makeTempDir();
    const hooks = { maxBodyBytes: 4 * 1024 * 1024 };
    const config = writeConfig(dir, baseConfig({}, hooks));
    const stateDir = path.join(dir, "state");
    const gateway = await startServe(["--config", config, "--state-dir", stateDir]);
    // Under hooks.maxTextChars (1,000,000): the text is kept whole, so the line refers to it instead of repeating it.
    const text = "x".repeat(900_000);
    const answer = await postJson(`${gateway.url}/hooks/wake`, { text, mode: "next-heartbeat" }, AUTH);
    expect(answer.status).toBe(200);
    const lines = admittedLines(path.join(stateDir, "hooks-journal"));
    expect(lines).toHaveLength(1);
    // Before: body, raw text and wrapped text made 3x the body.
    expect(lines[0]!.length).toBeLessThan(text.length * 1.1);
    const record = parseJournalLine(lines[0]!);
    expect(record?.t).toBe("admitted");
    if (record?.t !== "admitted") return;
    expect(JSON.parse(record.request!.body!)).toEqual({ text, mode: "next-heartbeat" });
    const event = record.events[0]!;
    expect(event.event).toBe("session:system-event");
    expect((event.payload as { text: string }).text).toContain(text);
    expect((event.payload as { raw: string }).raw).toBe(text);

    // Over it: the body is kept whole and the cut text beside it, so the line is bounded by the body and the cap.
    const long = "y".repeat(2 * 1024 * 1024);
    expect((await postJson(`${gateway.url}/hooks/wake`, { text: long }, AUTH)).status).toBe(200);
    const both = admittedLines(path.join(stateDir, "hooks-journal"));
    expect(both).toHaveLength(2);
    expect(both[1]!.length).toBeLessThan((long.length + 1_000_000) * 1.05);
    const cut = parseJournalLine(both[1]!);
    if (cut?.t !== "admitted") throw new Error("not an admitted line");
    expect(JSON.parse(cut.request!.body!)).toEqual({ text: long });
    expect((cut.events[0]!.payload as { raw: string }).raw).toMatch(
      /^y{1000000}\n\[1097152 more characters cut/,
    );
  }, 20_000);
});

/** The admitted lines of a journal directory, oldest first. */
function admittedLines(journalDir: string): string[] {
  return readdirSync(journalDir)
    .sort()
    .flatMap((file) => readFileSync(path.join(journalDir, file), "utf8").split("\n"))
    .filter((line) => line.startsWith('{"t":"a",'));
}
