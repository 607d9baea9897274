/**
 * @module The journal's size and the restart it costs: one real /wake through `hooks serve` (bundled demo config),
 * its two lines copied into a history of BENCH_HISTORY_WAKES finished wakes (default 200,000; new ids and times, the
 * journal's own segment size and checkpoint), then the time from spawn to a served /wake on that history, and the
 * bytes on disk per finished wake.
 *
 *   npm run build && node bench/journal-restart.mjs
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { HOOKS_BIN } from "./lib/processes.mjs";

const WAKES = Number(process.env.BENCH_HISTORY_WAKES ?? 200_000);
const PER_SEGMENT = 50_000;
const TOKEN = randomUUID();
const BODY = JSON.stringify({ text: "hi", mode: "next-heartbeat" });

/** `hooks serve` on the state directory until it prints its address; resolves with it and the time it took. */
function serve(stateDir) {
  const started = performance.now();
  const child = spawn(process.execPath, [HOOKS_BIN, "serve", "--port", "0", "--state-dir", stateDir], {
    env: { ...process.env, HOOKS_TOKEN: TOKEN },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve({ child, url, readyMs: performance.now() - started });
    });
    child.once("exit", (code) => reject(new Error(`hooks serve exited (${code}) before it listened`)));
  });
}

async function wake(url) {
  const answer = await fetch(`${url}/hooks/wake`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: BODY,
  });
  if (answer.status !== 200) throw new Error(`/wake answered ${answer.status}`);
}

async function stop({ child }) {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** The journal's own lines of one wake, as written: the admitted and the done line. */
function linesOfOneWake(journalDir) {
  const text = readdirSync(journalDir)
    .filter((name) => name.endsWith(".jsonl"))
    .map((name) => readFileSync(path.join(journalDir, name), "utf8"))
    .join("");
  const lines = text.split("\n").filter((line) => line !== "");
  if (lines.length !== 2) throw new Error(`expected the 2 lines of one wake, found ${lines.length}`);
  return lines;
}

/** Copies of the wake under new ids and times, in segments of PER_SEGMENT, with the checkpoint the journal keeps. */
function writeHistory(journalDir, [admitted, done]) {
  for (const name of readdirSync(journalDir)) rmSync(path.join(journalDir, name));
  const { id, at } = JSON.parse(admitted);
  const eventId = /"i":"([^"]+)"/.exec(admitted)[1];
  // Before the real wake: the state database's mark (its last sync, at the stop) covers the whole history.
  const now = at;
  const segments = [];
  for (let seq = 1; (seq - 1) * PER_SEGMENT < WAKES; seq++) {
    const fd = openSync(path.join(journalDir, `journal-${String(seq).padStart(8, "0")}.jsonl`), "w", 0o600);
    const chunk = [];
    let newestAt = 0;
    for (let i = (seq - 1) * PER_SEGMENT; i < Math.min(WAKES, seq * PER_SEGMENT); i++) {
      const when = now - (WAKES - i) * 10;
      const copy = (line, shift) =>
        line
          .replaceAll(id, `${id.slice(0, 24)}${String(i).padStart(12, "0")}`)
          .replaceAll(eventId, `${eventId.slice(0, 24)}${String(i).padStart(12, "0")}`)
          .replace(/"at":\d+/, `"at":${when + shift}`);
      chunk.push(`${copy(admitted, 0)}\n${copy(done, 2)}\n`);
      newestAt = when + 2;
      if (chunk.length === 2_000) writeSync(fd, chunk.splice(0).join(""));
    }
    writeSync(fd, chunk.join(""));
    closeSync(fd);
    segments.push({ seq, newestAt, holdsDeliveries: false });
  }
  const checkpoint = {
    v: 1,
    seq: segments.length + 1,
    offset: 0,
    segments,
    unfinished: [],
    deliveries: [],
    stored: [],
  };
  writeFileSync(path.join(journalDir, "checkpoint.json"), JSON.stringify(checkpoint));
  return at;
}

const dir = mkdtempSync(path.join(os.tmpdir(), "hooks-journal-restart-"));
try {
  const stateDir = path.join(dir, "state");
  const journalDir = path.join(stateDir, "hooks-journal");
  const first = await serve(stateDir);
  await wake(first.url);
  await stop(first);
  const lines = linesOfOneWake(journalDir);
  writeHistory(journalDir, lines);
  const bytes = readdirSync(journalDir)
    .filter((name) => name.endsWith(".jsonl"))
    .reduce((sum, name) => sum + statSync(path.join(journalDir, name)).size, 0);
  const spawned = performance.now();
  const again = await serve(stateDir);
  await wake(again.url);
  const servedMs = performance.now() - spawned;
  await stop(again);
  process.stdout.write(
    `journal: ${WAKES.toLocaleString("en-US")} finished wakes, ${(bytes / 2 ** 20).toFixed(1)} MiB, ${Math.round(bytes / WAKES)} bytes per finished wake (one wake's lines: ${lines.map((line) => line.length + 1).join(" + ")} bytes)\n` +
      `restart: serving /wake ${Math.round(servedMs)} ms after spawn\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
