/** @module A host that admits agent turns itself: 202 only once it did; its refusals are 409, 502 or 503 and not accepted, so the retry runs the turn once. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentTurn, TurnAdmissionRefusal } from "../../src/index.js";
import { createHooksPlugin } from "../../src/index.js";
import { readJournal } from "../../src/journal/read-journal.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "admit-turns-token-0123456789abcdef";
let host: TestHost | undefined;
let stateDir: string | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
  if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true });
  stateDir = undefined;
});

function refusal(admission: TurnAdmissionRefusal, message: string, retryAfterSeconds?: number): Error {
  return Object.assign(new Error(message), { admission, retryAfterSeconds });
}

async function start(admit: (turn: AgentTurn) => Promise<void>, timeoutMs = 15_000): Promise<TestHost> {
  stateDir = mkdtempSync(path.join(tmpdir(), "hooks-admit-turns-"));
  host = await startTestHost(
    createHooksPlugin({ turnAdmissionTimeoutMs: timeoutMs }),
    { hooks: { enabled: true, token: TOKEN } },
    { admitAgentTurn: admit, stateDir },
  );
  return host;
}

const agent = (key: string) =>
  fetch(`${host!.url}/hooks/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ message: "rotate the keys", name: "Ops" }),
  });

async function journalStates(): Promise<Array<[number, string, string | undefined]>> {
  await host!.close();
  const entries = await readJournal(path.join(stateDir!, "hooks-journal"));
  host = undefined;
  return entries.map((entry) => [entry.status, entry.state, entry.code]);
}

describe("a host's admission of agent turns", () => {
  it.each([
    ["conflict", 409, "SESSION_CONFLICT", null],
    ["refused", 502, "TURN_REFUSED", null],
    ["unavailable", 503, "TURN_NOT_ADMITTED", "7"],
  ] as const)(
    "a %s is %i %s, nothing is emitted, and the sender's retry runs the turn once",
    async (kind, status, code, retryAfter) => {
      const asked: string[] = [];
      let refuse = true;
      await start(async (turn) => {
        asked.push(turn.runId);
        if (refuse) throw refusal(kind, `Session "hook:x" says no (${kind})`, 6.5);
      });
      const refused = await agent("delivery-1");
      expect(refused.status).toBe(status);
      expect(refused.headers.get("retry-after")).toBe(retryAfter);
      expect(await refused.json()).toMatchObject({ ok: false, code });
      expect(host!.eventsOf("session:agent-turn")).toEqual([]);

      refuse = false;
      const retried = await agent("delivery-1");
      expect(retried.status).toBe(202);
      const { runId } = (await retried.json()) as { runId: string };
      const turns = host!.eventsOf("session:agent-turn");
      expect(turns.map((turn) => turn.runId)).toEqual([runId]);
      // The host was asked about exactly the run it is then given.
      expect(asked.at(-1)).toBe(runId);
      expect(await journalStates()).toEqual([
        [status, "refused", code],
        [202, "pending", undefined],
      ]);
    },
  );

  it("no admission within the bound is 503 with Retry-After, and nothing is accepted", async () => {
    await start(() => new Promise<void>(() => undefined), 150);
    const started = performance.now();
    const late = await agent("delivery-2");
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect([late.status, late.headers.get("retry-after")]).toEqual([503, "10"]);
    expect(await late.json()).toMatchObject({ code: "TURN_NOT_ADMITTED" });
    expect(host!.eventsOf("session:agent-turn")).toEqual([]);
    expect(await journalStates()).toEqual([[503, "refused", "TURN_NOT_ADMITTED"]]);
  });

  it("a wake is not asked about: only agent turns need the host's admission", async () => {
    const asked: AgentTurn[] = [];
    await start(async (turn) => {
      asked.push(turn);
    });
    const wake = await fetch(`${host!.url}/hooks/wake`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "hello" }),
    });
    expect(wake.status).toBe(200);
    expect(asked).toEqual([]);
  });
});
