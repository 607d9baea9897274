/**
 * @module The crash test: real gateway processes under load from a second process, killed with SIGKILL at a random
 * moment and restarted on the same state directory, again and again. Every 2xx answer must have its effect in the
 * end (the wake queued or drained, the turn's summary published, `interrupted` for a turn that was running), and
 * nothing may be emitted twice or under a new id.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanupCli,
  makeTempDir,
  pollFor,
  ROOT,
  type ServeProcess,
  startServeProcess,
} from "../helpers/cli.js";

const TOKEN = "crash-test-token-0123456789abcdef";
const ROUNDS = 3;
const LOAD = path.join(ROOT, "test/helpers/crash-load.mjs");

interface Ack {
  kind: "wake" | "agent";
  requestId: string;
  eventId?: string;
  runId?: string;
}

afterEach(cleanupCli);

/** Starts the load process against `url`; `finished` resolves its acknowledgements once it has stopped. */
function startLoad(url: string): {
  acknowledged: (count: number) => Promise<void>;
  finished: Promise<Ack[]>;
} {
  const child = spawn(process.execPath, [LOAD, url, "/hooks", TOKEN, "8"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let text = "";
  let lines = 0;
  const waiting = new Set<{ count: number; resolve: () => void }>();
  child.stdout.on("data", (chunk: Buffer) => {
    const added = chunk.toString();
    text += added;
    lines += added.split("\n").length - 1;
    for (const wait of waiting) {
      if (lines < wait.count) continue;
      waiting.delete(wait);
      wait.resolve();
    }
  });
  const parse = () =>
    text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Ack);
  const finished = new Promise<Ack[]>((resolve) => child.once("close", () => resolve(parse())));
  return {
    acknowledged: (count) =>
      new Promise<void>((resolve, reject) => {
        if (lines >= count) return resolve();
        waiting.add({ count, resolve });
        void finished.then(() => reject(new Error(`the load stopped after ${lines} of ${count} answers`)));
      }),
    finished,
  };
}

/** SIGKILL, as a crash: no stop handler runs, nothing is flushed by the process. */
async function crash(gateway: ServeProcess): Promise<void> {
  gateway.signal("SIGKILL");
  await gateway.exited;
}

describe("kill -9 under load, restart on the same state directory", () => {
  it("every acknowledged wake and turn has its effect exactly once", async () => {
    const dir = makeTempDir("crash-");
    const stateDir = path.join(dir, "state");
    const config = path.join(dir, "gateway.json5");
    // A turn takes 50 ms: each kill lands while some are running and after others finished. A shell, not node:
    // a turn costs its wait, not a runtime's start-up.
    writeFileSync(
      config,
      JSON.stringify({
        hooks: { enabled: true, token: TOKEN },
        heartbeat: { everySeconds: 0 },
        runner: { kind: "command", command: "/bin/sh", args: ["-c", "sleep 0.05; printf finished"] },
      }),
    );
    // A killed gateway cannot remove the temp dirs of the turns it was running: they go with the test's dir.
    const serve = () =>
      startServeProcess(["--config", config, "--state-dir", stateDir], {
        env: { HOOKS_LOG_LEVEL: "info", TMPDIR: dir },
      });

    const acks: Ack[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const gateway = await serve();
      const load = startLoad(gateway.url);
      // A random moment: after 40 to 160 acknowledged requests of this round.
      await load.acknowledged(40 + Math.floor(Math.random() * 120));
      await crash(gateway);
      acks.push(...(await load.finished));
    }

    // The last start finishes what the last crash left, then runs until every turn has ended.
    const gateway = await serve();
    const wakes = acks.filter((ack) => ack.kind === "wake");
    const turns = acks.filter((ack) => ack.kind === "agent");
    expect(wakes.length).toBeGreaterThan(50);
    expect(turns.length).toBeGreaterThan(20);
    const db = new Database(path.join(stateDir, "state.sqlite"), { readonly: true, fileMustExist: true });
    try {
      const summaries = db.prepare(
        "SELECT event_id, text FROM queue WHERE event_id LIKE '%:summary' UNION ALL SELECT event_id, text FROM transcript WHERE event_id LIKE '%:summary'",
      );
      const unpublished = () => {
        const published = new Set(
          (summaries.all() as Array<{ event_id: string }>).map((row) => row.event_id),
        );
        return turns.filter((turn) => !published.has(`${turn.runId}:summary`));
      };
      try {
        await pollFor(() => (unpublished().length === 0 ? true : undefined), "every turn's summary", 30_000);
      } catch {
        const missing = unpublished();
        throw new Error(
          `${missing.length} of ${turns.length} acknowledged turns have no summary, e.g. ${JSON.stringify(missing.slice(0, 3))}\n` +
            gateway
              .stdout()
              .split("\n")
              .filter((line) => line.includes("journal"))
              .join("\n"),
        );
      }
      gateway.signal("SIGTERM");
      expect((await gateway.exited).code).toBe(0);

      const events = db
        .prepare(
          "SELECT event_id, request_id, text FROM queue UNION ALL SELECT event_id, request_id, text FROM transcript WHERE kind = 'system-event'",
        )
        .all() as Array<{ event_id: string; request_id: string; text: string }>;
      const byEventId = new Map(events.map((row) => [row.event_id, row]));
      // Every acknowledged wake is queued or drained, under the id its answer gave.
      expect(wakes.filter((wake) => !byEventId.has(wake.eventId!))).toEqual([]);
      // None twice, none under a new id: one wake event per wake request, one summary per run.
      expect(events.length).toBe(byEventId.size);
      const perRequest = new Map<string, number>();
      for (const row of events) {
        if (row.event_id.endsWith(":summary")) continue;
        perRequest.set(row.request_id, (perRequest.get(row.request_id) ?? 0) + 1);
      }
      expect([...perRequest.values()].filter((count) => count > 1)).toEqual([]);
      // A turn ran at most once: one user message per run id.
      const runsTwice = db
        .prepare("SELECT run_id FROM messages WHERE role = 'user' GROUP BY run_id HAVING COUNT(*) > 1")
        .all();
      expect(runsTwice).toEqual([]);
      const outcomes = turns.map((turn) => byEventId.get(`${turn.runId}:summary`)!.text);
      const interrupted = outcomes.filter((text) => text.includes("(error): interrupted by a restart"));
      // Each summary line stands inside the wrapper, its run's name included.
      const finished = outcomes.filter((text) => /\nJob \d+: /.test(text));
      expect(interrupted.length + finished.length).toBe(turns.length);
      // The kills did land mid-turn, and between turns: both outcomes were put to the test.
      expect(interrupted.length).toBeGreaterThan(0);
      expect(finished.length).toBeGreaterThan(0);
      console.info(
        `crash test: ${ROUNDS} kills, ${wakes.length} wakes and ${turns.length} turns acknowledged; ` +
          `${finished.length} turns finished, ${interrupted.length} reported interrupted`,
      );
    } finally {
      db.close();
    }
  }, 180_000);
});
