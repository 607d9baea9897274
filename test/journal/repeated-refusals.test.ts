/** @module A sender with accepted credentials repeating a refused request (past its rate limit, an unanswerable handshake) is listed a few times a minute per hook and address, then counted, like a delivery's duplicates. */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHooksPlugin } from "../../src/index.js";
import { REPEATS_PER_MINUTE } from "../../src/journal/answered-limits.js";
import { readJournal } from "../../src/journal/read-journal.js";
import { cleanupCli, makeTempDir, runCli } from "../helpers/cli.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "repeated-refusals-test-token-0123456789";
const VERIFY_TOKEN = "meta-verify-token-repeated-0451";
const START = Date.UTC(2026, 0, 1);
const LOOP = 50;

let host: TestHost | undefined;
let plugin: ReturnType<typeof createHooksPlugin>;
let stateDir = "";
/** The plugin's clock, which the journal's minute follows: a test moves it instead of waiting. */
let now = START;
afterEach(async () => {
  await host?.close();
  host = undefined;
  now = START;
  await cleanupCli();
});

async function start(hooks: Record<string, unknown>): Promise<void> {
  plugin = createHooksPlugin({ clock: { now: () => now } });
  stateDir = makeTempDir("repeated-refusals-");
  host = await startTestHost(
    plugin,
    { hooks: { enabled: true, token: TOKEN, trustedProxies: ["loopback"], ...hooks } },
    { stateDir },
  );
}

let sent = 0;
/** Sends with a request id of its own, so the listing of that one request can be found. */
async function send(
  target: string,
  address: string,
  init: { method?: string; body?: string } = {},
): Promise<{ status: number; requestId: string }> {
  const requestId = `repeated-${++sent}`;
  const response = await fetch(`${host!.url}/hooks/${target}`, {
    method: init.method ?? "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      "x-forwarded-for": address,
      "x-request-id": requestId,
    },
    ...(init.body !== undefined && { body: init.body }),
  });
  await response.text();
  return { status: response.status, requestId };
}

/** The journal's listings of refusals with `code`, read after the host closed. */
async function listed(code: string) {
  await host!.close();
  host = undefined;
  const entries = await readJournal(path.join(stateDir, "hooks-journal"));
  return entries.filter((entry) => entry.code === code);
}

describe("repeated refusals of an accepted sender", () => {
  it("a sender retrying in a loop past its rate limit is listed a few times a minute, then once with the count left out", async () => {
    await start({
      limits: { wake: { rateLimit: { requests: 1, perSeconds: 3_600 } } },
      mappings: [
        {
          id: "alerts",
          match: { path: "alerts" },
          action: "wake",
          textTemplate: "alert",
          rateLimit: { requests: 1, perSeconds: 3_600 },
        },
      ],
    });
    const wake = JSON.stringify({ text: "ping" });
    const looping = "203.0.113.1";
    expect((await send("wake", looping, { body: wake })).status).toBe(200);
    for (let i = 0; i < LOOP; i++) expect((await send("wake", looping, { body: wake })).status).toBe(429);
    // Another address, and another limit of the same address, are listed apart.
    expect((await send("wake", "203.0.113.2", { body: wake })).status).toBe(200);
    const other = await send("wake", "203.0.113.2", { body: wake });
    expect((await send("alerts", looping, { body: "{}" })).status).toBe(200);
    const mapping = await send("alerts", looping, { body: "{}" });
    expect([other.status, mapping.status]).toEqual([429, 429]);
    now += 60_000;
    const next = await send("wake", looping, { body: wake });
    expect(next.status).toBe(429);

    const inspected = await plugin.inspector()!.detail(next.requestId);
    expect(inspected).toMatchObject({ code: "RATE_LIMITED", suppressed: LOOP - REPEATS_PER_MINUTE });
    const refused = await listed("RATE_LIMITED");
    const fromLoop = refused.filter((entry) => entry.client === looping && entry.hook === "wake");
    expect(fromLoop.map((entry) => entry.suppressed)).toEqual([
      ...Array(REPEATS_PER_MINUTE).fill(undefined),
      LOOP - REPEATS_PER_MINUTE,
    ]);
    expect(fromLoop.at(-1)!.requestId).toBe(next.requestId);
    expect(refused.map((entry) => entry.requestId)).toEqual(
      expect.arrayContaining([other.requestId, mapping.requestId]),
    );
    expect(refused).toHaveLength(REPEATS_PER_MINUTE + 3);
    const shown = await runCli([
      "journal",
      "show",
      next.requestId,
      "--dir",
      path.join(stateDir, "hooks-journal"),
    ]);
    expect(shown.stdout).toContain(`suppressed ${LOOP - REPEATS_PER_MINUTE} refused requests`);
  });

  it("a handshake with the right verify token that cannot be answered is listed as a stranger's refusal: per address, within everyone's budget", async () => {
    // The verify token travels in URLs: it makes no trusted sender of whoever has it.
    const perAddress = 5;
    await start({
      journal: { refusedPerMinute: perAddress },
      mappings: [
        {
          id: "whatsapp",
          match: { path: "whatsapp" },
          action: "wake",
          textTemplate: "message",
          verify: { scheme: "meta", secret: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", verifyToken: VERIFY_TOKEN },
        },
      ],
    });
    const query = new URLSearchParams({
      "hub.mode": "unsubscribe",
      "hub.challenge": "1",
      "hub.verify_token": VERIFY_TOKEN,
    });
    for (let i = 0; i < LOOP; i++)
      expect((await send(`whatsapp?${query}`, "203.0.113.1", { method: "GET" })).status).toBe(400);
    now += 60_000;
    const next = await send(`whatsapp?${query}`, "203.0.113.1", { method: "GET" });
    expect(next.status).toBe(400);
    const refused = await listed("INVALID_HANDSHAKE");
    expect(refused.map((entry) => entry.suppressed)).toEqual([
      ...Array(perAddress).fill(undefined),
      LOOP - perAddress,
    ]);
    expect(refused.at(-1)!.requestId).toBe(next.requestId);
  });
});
