/**
 * @module The baselines: the least any intake must do. Bare (default): read the body, check a bearer token in
 * constant time, parse JSON, answer JSON. Durable (BENCH_BASELINE_JOURNAL=<file>): the same, plus one JSON line
 * per request appended to that file, and the answers sent only after one fdatasync that covers every line of that
 * event-loop turn (group commit, as the plugin's journal with `fsync: "batch"` does it): the lines of one turn
 * are collected, written in one write at the end of the turn (setImmediate), synced once, then all their
 * answers go out; lines that arrive during a sync form the next batch as soon as it completes.
 *
 * The token is compared against a buffer prepared once at start: the presented token is copied into a scratch
 * buffer of the expected length (truncated or zero-padded), compared with `timingSafeEqual`, and its byte length
 * checked afterwards, so the comparison takes the same time whatever the presented token shares with the secret
 * and whatever its length (nothing is hashed per request).
 *
 * The journal file rolls over (closed, removed, a new one opened) between batches once it passes
 * BENCH_BASELINE_ROLL_BYTES (64 MiB): a run of minutes does not fill the disk, and a roll costs one open per
 * 64 MiB. On SIGTERM a durable baseline prints `{"msg":"baseline closed","fsyncs":..,"lines":..}`.
 */
import { closeSync, fdatasync, openSync, unlinkSync, writeSync } from "node:fs";
import { createServer } from "node:http";
import { createTokenCheck, send } from "./lib/lean-http.mjs";

const token = process.env.BENCH_BASELINE_TOKEN;
if (!token) {
  process.stderr.write("baseline: BENCH_BASELINE_TOKEN is not set\n");
  process.exit(2);
}
const maxBytes = Number(process.env.BENCH_BASELINE_MAX_BYTES ?? 262_144);
const journalFile = process.env.BENCH_BASELINE_JOURNAL || undefined;
const rollBytes = Number(process.env.BENCH_BASELINE_ROLL_BYTES ?? 64 * 1024 * 1024);

const tokenMatches = createTokenCheck(token);

/** The group commit: lines of this turn, their answers, one write and one fdatasync per batch. */
function groupCommit(file) {
  let fd = openSync(file, "a", 0o600);
  let size = 0;
  let queue = [];
  let scheduled = false;
  let syncing = false;
  let fsyncs = 0;
  let lines = 0;

  function flush() {
    if (syncing || queue.length === 0) return;
    if (size > rollBytes) {
      closeSync(fd);
      unlinkSync(file);
      fd = openSync(file, "a", 0o600);
      size = 0;
    }
    const batch = queue;
    queue = [];
    let text = "";
    for (const entry of batch) text += entry.line;
    const bytes = Buffer.from(text, "utf8");
    writeSync(fd, bytes);
    size += bytes.length;
    syncing = true;
    fsyncs++;
    fdatasync(fd, (error) => {
      syncing = false;
      if (error) {
        for (const entry of batch) send(entry.res, 503, { ok: false });
      } else {
        lines += batch.length;
        for (const entry of batch) send(entry.res, 200, entry.answer);
      }
      // What arrived during the sync has waited one sync already: it goes at once.
      flush();
    });
  }

  return {
    append(line, res, answer) {
      queue.push({ line, res, answer });
      if (scheduled || syncing) return;
      scheduled = true;
      // End of this event-loop turn: every request parsed in this turn joins the batch.
      setImmediate(() => {
        scheduled = false;
        flush();
      });
    },
    close() {
      closeSync(fd);
      return { fsyncs, lines };
    },
  };
}

const journal = journalFile ? groupCommit(journalFile) : undefined;
const startedAt = Date.now();
let sequence = 0;
const LINE_BREAKS = /[\r\n]/g;

const server = createServer((req, res) => {
  if (req.method !== "POST") return send(res, 405, { ok: false });
  const header = req.headers.authorization ?? "";
  const presented = header.startsWith("Bearer ") ? header.slice(7) : "";
  if (!tokenMatches(presented)) return send(res, 401, { ok: false });
  if (Number(req.headers["content-length"] ?? 0) > maxBytes) {
    res.shouldKeepAlive = false;
    return send(res, 413, { ok: false });
  }
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > maxBytes) {
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on("end", () => {
    const text = Buffer.concat(chunks, size).toString("utf8");
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      return send(res, 400, { ok: false });
    }
    const answer = { ok: true, keys: body && typeof body === "object" ? Object.keys(body).length : 0 };
    if (!journal) return send(res, 200, answer);
    // The raw body as received (valid JSON: a line break in it can only be whitespace between tokens).
    const raw = text.includes("\n") || text.includes("\r") ? text.replace(LINE_BREAKS, " ") : text;
    const id = `${startedAt}-${++sequence}`;
    journal.append(
      `{"id":"${id}","at":${Date.now()},"path":${JSON.stringify(req.url)},"body":${raw}}\n`,
      res,
      answer,
    );
  });
});

server.listen(0, "127.0.0.1", () => {
  const kind = journal ? "durable baseline" : "baseline";
  process.stdout.write(`${kind} listening on http://127.0.0.1:${server.address().port}\n`);
});
const stop = () => {
  server.close(() => {
    if (journal) process.stdout.write(`${JSON.stringify({ msg: "baseline closed", ...journal.close() })}\n`);
    process.exit(0);
  });
  server.closeAllConnections();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
