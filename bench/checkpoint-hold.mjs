/**
 * @module How long writing one journal checkpoint holds the event loop: a checkpoint of N remembered delivery ids
 * (100,000 by default, about 23 MB) written R times by the journal's CheckpointWriter, while a 1 ms timer notes
 * the longest stretch it could not run. Usage: `node bench/checkpoint-hold.mjs [<build root>] [ids] [rounds]`
 * (the build root defaults to this checkout; build it first with `npx tsc -p tsconfig.build.json`).
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, ".."));
const ids = Number(process.argv[3] ?? 100_000);
const rounds = Number(process.argv[4] ?? 10);
const { CheckpointWriter } = await import(pathToFileURL(path.join(root, "dist/journal/checkpoint.js")).href);

const at = 1_800_000_000_000;
const deliveries = Array.from({ length: ids }, (_, i) => {
  const id = `${String(i).padStart(8, "0")}-0000-4000-8000-000000000000`;
  return {
    key: `delivery:github:${id}`,
    // A wake's first answer, as a duplicate gets it again.
    response: {
      status: 200,
      contentType: "application/json",
      body: JSON.stringify({ ok: true, eventId: id, mode: "next-heartbeat" }),
    },
    at: at + i,
  };
});
const checkpoint = (seq) => ({ v: 1, seq, offset: 0, segments: [], unfinished: [], deliveries, stored: [] });

/** The longest gap between 1 ms timer ticks while `work` runs, beyond the 1 ms asked for. */
async function longestHold(work) {
  let longest = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 1);
    last = now;
    if (running) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  await work();
  // One more tick: a stretch that ran to the end of `work` is seen only by the tick after it.
  await new Promise((resolve) => setTimeout(resolve, 2));
  running = false;
  return longest;
}

const dir = mkdtempSync(path.join(tmpdir(), "checkpoint-hold-"));
const logger = { debug() {}, info() {}, warn: console.warn, error: console.error };
const writer = new CheckpointWriter(dir, logger);
const holds = [];
const totals = [];
try {
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    holds.push(
      await longestHold(async () => {
        writer.write(`point-${round}`, () => checkpoint(round));
        await writer.settled();
      }),
    );
    totals.push(performance.now() - started);
  }
  const bytes = statSync(path.join(dir, "checkpoint.json")).size;
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const ms = (value) => value.toFixed(1);
  console.log(
    `${root}: ${ids} ids, ${(bytes / 1e6).toFixed(1)} MB, ${rounds} writes: longest hold median ${ms(median(holds))} ms, ` +
      `max ${ms(Math.max(...holds))} ms (each: ${holds.map(ms).join(" ")}); write to settled median ${ms(median(totals))} ms`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
