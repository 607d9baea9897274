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
  startServe,
} from "../helpers/spawn-cli.js";

const TOKEN = "crash-test-token-0123456789abcdef";
const ROUNDS = 4;
const LOAD = path.join(ROOT, "test/helpers/crash-load.mjs");

interface Ack {
  kind: "wake" | "agent";
  requestId: string;
  eventId?: string;
  runId?: string;
}

afterEach(cleanupCli);

/** Starts the load process against `url`; resolves its acknowledgements once it has stopped. */
function startLoad(url: string): { acks: () => Ack[]; stop: () => Promise<Ack[]>; finished: Promise<Ack[]> } {
  const child = spawn(process.execPath, [LOAD, url, "/hooks", TOKEN, "8"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let text = "";
  child.stdout.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  const parse = () =>
    text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Ack);
  const finished = new Promise<Ack[]>((resolve) => child.once("close", () => resolve(parse())));
  return {
    acks: parse,
    finished,
    stop: () => {
      child.kill("SIGTERM");
      return finished;
    },
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
    // A turn takes 300 ms: a kill often lands while some are running.
    writeFileSync(
      config,
      JSON.stringify({
        hooks: { enabled: true, token: TOKEN },
        heartbeat: { everySeconds: 0 },
        runner: {
          kind: "command",
          command: process.execPath,
          args: ["-e", "setTimeout(() => process.stdout.write('finished'), 300)"],
        },
      }),
    );
    const serve = () =>
      startServe(["--config", config, "--state-dir", stateDir], { env: { HOOKS_LOG_LEVEL: "info" } });

    const acks: Ack[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const gateway = await serve();
      const load = startLoad(gateway.url);
      // A random moment: after 30 to 230 acknowledged requests of this round.
      const killAfter = 30 + Math.floor(Math.random() * 200);
      await pollFor(() => (load.acks().length >= killAfter ? true : undefined), "load", 20_000);
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
      const finished = outcomes.filter((text) => /^Job \d+: /.test(text));
      expect(interrupted.length + finished.length).toBe(turns.length);
      console.info(
        `crash test: ${ROUNDS} kills, ${wakes.length} wakes and ${turns.length} turns acknowledged; ` +
          `${finished.length} turns finished, ${interrupted.length} reported interrupted`,
      );
    } finally {
      db.close();
    }
  }, 180_000);
});
