/**
 * @module What the inspector's feed adds to each request, in isolation: a journal admit + done and the
 * `hooks:request` event, on the null journal, without and with the feed (the pass-through journal and the ring's
 * bus listener). Alternated A/B rounds, medians; the figure is in bench/PROFILE.md.
 *
 *   npm run build && node bench/inspector-feed.mjs
 */
import { EventEmitter } from "eventemitter3";
import { listenForRequests, recordingJournal } from "../dist/inspector/ring-records.js";
import { SummaryRing } from "../dist/inspector/summary-ring.js";
import { NULL_JOURNAL } from "../dist/journal/null-journal.js";

const N = Number(process.env.BENCH_FEED_REQUESTS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_FEED_ROUNDS ?? 7);
const clock = { now: () => Date.now() };

function setup(withFeed) {
  const bus = new EventEmitter();
  // The gateway's own listener (its request log line) is there either way.
  bus.on("hooks:request", () => undefined);
  if (!withFeed) return { journal: NULL_JOURNAL, bus };
  const ring = new SummaryRing();
  listenForRequests(bus, ring, clock);
  return { journal: recordingJournal(NULL_JOURNAL, ring), bus };
}

async function run({ journal, bus }) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) {
    const id = `req-${i}`;
    await journal.admit({ id, at: i, hook: "wake", response: { status: 200 }, events: [] });
    journal.done(id);
    bus.emit("hooks:request", {
      source: { hook: "wake", requestId: id },
      method: "POST",
      hook: "wake",
      status: 200,
      durationMs: 0.1,
    });
  }
  return Number(process.hrtime.bigint() - started) / N;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const without = [];
const withFeed = [];
await run(setup(false));
await run(setup(true));
for (let round = 0; round < ROUNDS; round++) {
  // Turned each round, so that neither side is always measured first.
  if (round % 2 === 0) {
    without.push(await run(setup(false)));
    withFeed.push(await run(setup(true)));
  } else {
    withFeed.push(await run(setup(true)));
    without.push(await run(setup(false)));
  }
}
const a = median(without);
const b = median(withFeed);
console.log(
  `per request: without the feed ${a.toFixed(0)} ns, with it ${b.toFixed(0)} ns, added ${(b - a).toFixed(0)} ns`,
);
