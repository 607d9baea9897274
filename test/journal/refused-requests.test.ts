/** @module The journal keeps every refused request (reason, client, redacted headers) within per-address, all-addresses and per-delivery limits, over real HTTP through the reference gateway. */
import { createHmac } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { sign as githubSign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock.js";
import { type GatewayLogger, silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { createHooksPlugin } from "../../src/index.js";
import { AUTH, TOKEN } from "../gateway/support.js";
import { cleanupCli, makeTempDir, runCli } from "../helpers/cli.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const SECRET = "whsec_refused-requests-secret-0123456789";
const GITHUB_SECRET = "github-refused-requests-secret-0123";
/** A Standard Webhooks key whose base64 holds `+`, `/` and `=`: its URL-encoded form differs from it. */
const SW_KEY = Buffer.from("fbefbeffbf00fbefbeffbf01fbefbeffbf02aa", "hex").toString("base64");
const SW_SECRET = `whsec_${SW_KEY}`;
const WRONG_TOKEN = "not-the-token-but-still-a-credential-4242";
/**
 * The tests that send a thousand requests or more: 6 to 14 s on 2 cores shared with the rest of the suite, past the
 * default 20 s beside another CPU-bound job. The work is bounded; only the machine's speed varies.
 */
const BULK_TIMEOUT_MS = 90_000;

let gateway: GatewayHandle | undefined;
let host: TestHost | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await host?.close();
  host = undefined;
  await cleanupCli();
});

/** A clock the flood test moves a minute on; everything else reads the real time through it. */
function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance: (ms) => {
      offset += ms;
    },
  };
}

/** A gateway logger that keeps its warnings. */
function warningsLogger(): GatewayLogger & { warnings: Array<{ message: string; fields?: object }> } {
  const warnings: Array<{ message: string; fields?: object }> = [];
  return {
    ...silentGatewayLogger,
    warnings,
    warn: (message, fields) => warnings.push(fields ? { message, fields } : { message }),
  };
}

async function start(
  clock: Clock = { now: () => Date.now() },
  logger: GatewayLogger = silentGatewayLogger,
): Promise<{ stateDir: string }> {
  const dir = makeTempDir("refused-");
  const stateDir = path.join(dir, "state");
  gateway = await startGateway({
    config: {
      hooks: {
        enabled: true,
        token: TOKEN,
        trustedProxies: ["loopback"],
        authFailures: { limit: 100_000, windowSeconds: 60 },
        mappings: [
          {
            id: "stripe",
            match: { path: "stripe" },
            action: "wake",
            textTemplate: "payment {{id}}",
            verify: { scheme: "stripe", secret: SECRET },
          },
          {
            id: "github",
            match: { path: "github" },
            action: "wake",
            textTemplate: "push",
            verify: { scheme: "github", secret: GITHUB_SECRET },
          },
          {
            id: "sw",
            match: { path: "sw" },
            action: "wake",
            textTemplate: "event",
            verify: { scheme: "standard-webhooks", secret: SW_SECRET },
          },
        ],
      },
    },
    stateDir,
    port: 0,
    logger,
    plugin: createHooksPlugin({ clock }),
  });
  return { stateDir };
}

async function post(
  hook: string,
  body: string,
  headers: Record<string, string>,
  method = "POST",
): Promise<{ status: number; requestId: string }> {
  const response = await fetch(`${gateway!.url}/hooks/${hook}`, {
    method,
    headers: { "content-type": "application/json", "x-custom": "kept as sent", ...headers },
    ...(method === "POST" && { body }),
  });
  await response.text();
  return { status: response.status, requestId: response.headers.get("x-request-id")! };
}

function stripeSignature(body: string, timestamp: number, secret = SECRET): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return `t=${timestamp},v1=${mac}`;
}

function journalDir(stateDir: string): string {
  return path.join(stateDir, "hooks-journal");
}

function journalText(stateDir: string): string {
  const dir = journalDir(stateDir);
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .map((name) => readFileSync(path.join(dir, name), "utf8"))
    .join("");
}

function answeredLines(stateDir: string): Array<Record<string, any>> {
  return journalText(stateDir)
    .split("\n")
    .filter((line) => line.includes('"t":"answered"'))
    .map((line) => JSON.parse(line));
}

describe("refused requests", () => {
  it("are listed with their reason, client and redacted headers, never a credential's bytes", async () => {
    const { stateDir } = await start();
    const body = JSON.stringify({ id: "pay_1" });
    const now = Math.floor(Date.now() / 1000);
    const sent = {
      TOKEN_MISSING: await post("wake", body, {}),
      TOKEN_WRONG: await post("wake", body, { authorization: `Bearer ${WRONG_TOKEN}` }),
      SIGNATURE_MISMATCH: await post("stripe", body, {
        "stripe-signature": stripeSignature(body, now, "whsec_another-secret-entirely-000000"),
      }),
      TIMESTAMP_TOO_OLD: await post("stripe", body, {
        "stripe-signature": stripeSignature(body, now - 3600),
      }),
      NO_MAPPING: await post("nothing-here", body, AUTH),
      METHOD_NOT_ALLOWED: await post("wake", body, { authorization: `Bearer ${TOKEN}` }, "GET"),
      QUERY_TOKEN: await post(`wake?token=${WRONG_TOKEN}&source=ci`, body, {}),
    };
    expect(Object.values(sent).map((answer) => answer.status)).toEqual([401, 401, 401, 401, 404, 405, 401]);
    await gateway!.close();
    gateway = undefined;

    const lines = answeredLines(stateDir);
    const byId = new Map(lines.map((line) => [line.id, line]));
    const reasonOf = (name: keyof typeof sent) => byId.get(sent[name].requestId)?.reason;
    expect(reasonOf("TOKEN_MISSING")).toBe("TOKEN_MISSING");
    expect(reasonOf("TOKEN_WRONG")).toBe("TOKEN_WRONG");
    expect(reasonOf("SIGNATURE_MISMATCH")).toBe("SIGNATURE_MISMATCH");
    expect(reasonOf("TIMESTAMP_TOO_OLD")).toBe("TIMESTAMP_TOO_OLD");
    expect(reasonOf("NO_MAPPING")).toBe("NO_MAPPING");
    expect(reasonOf("METHOD_NOT_ALLOWED")).toBe("METHOD_NOT_ALLOWED");
    expect(reasonOf("QUERY_TOKEN")).toBe("TOKEN_WRONG");
    for (const line of lines) {
      expect(line.client).toBe("127.0.0.1");
      expect(line.headers["x-custom"]).toBe("kept as sent");
      expect(line.error).toEqual(expect.any(String));
    }
    const wrong = byId.get(sent.TOKEN_WRONG.requestId)!;
    expect(wrong).toMatchObject({ status: 401, code: "UNAUTHORIZED", method: "POST", url: "/hooks/wake" });
    expect(wrong.headers.authorization).toBe("[redacted]");
    expect(wrong.error).toBe("The hook token is not valid.");
    expect(byId.get(sent.SIGNATURE_MISMATCH.requestId)!.headers["stripe-signature"]).toBe("[redacted]");
    expect(byId.get(sent.QUERY_TOKEN.requestId)!.url).toBe("/hooks/wake?source=ci");
    expect(byId.get(sent.METHOD_NOT_ALLOWED.requestId)!.method).toBe("GET");
    // No credential's bytes anywhere in the files: not the token, not the wrong one, not the signing secret.
    const text = journalText(stateDir);
    for (const secret of [TOKEN, WRONG_TOKEN, SECRET, "whsec_another-secret"])
      expect(text).not.toContain(secret);
    // Nor the body of a refused request.
    expect(text).not.toContain("pay_1");

    const dir = journalDir(stateDir);
    const list = await runCli(["journal", "list", "--dir", dir, "--status", "4xx"]);
    expect(list.code).toBe(0);
    const listed = list.stdout.trim().split("\n");
    expect(listed).toHaveLength(7);
    expect(listed[0]).toMatch(
      new RegExp(
        `401  refused UNAUTHORIZED +wake +${sent.TOKEN_MISSING.requestId}  reason=TOKEN_MISSING  client=127\\.0\\.0\\.1$`,
      ),
    );
    expect(listed[4]).toMatch(
      /404 {2}refused NOT_FOUND +nothing-here .* reason=NO_MAPPING {2}client=127\.0\.0\.1$/,
    );
    const shown = await runCli(["journal", "show", sent.TOKEN_WRONG.requestId, "--dir", dir]);
    expect(shown.stdout).toContain("reason    TOKEN_WRONG: The hook token is not valid.");
    expect(shown.stdout).toContain("client    127.0.0.1");
    expect(shown.stdout).toContain("sent      POST /hooks/wake");
    expect(shown.stdout).toContain("  authorization: [redacted]");
    expect(shown.stdout).toContain("  x-custom: kept as sent");
    expect(shown.stdout).not.toContain(WRONG_TOKEN);
  });

  it("a flood from one address writes at most the limit and then the count; another address is still listed", {
    timeout: BULK_TIMEOUT_MS,
  }, async () => {
    const clock = movableClock();
    const { stateDir } = await start(clock);
    const body = JSON.stringify({ text: "let me in" });
    const flood = { "x-forwarded-for": "203.0.113.7" };
    const FLOOD = 1_000;
    // Twenty at a time: a flood, without a thousand sockets at once.
    for (let sent = 0; sent < FLOOD; sent += 20) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => post("wake", body, flood)));
      expect(answers.every((answer) => answer.status === 401)).toBe(true);
    }
    const other = await post("wake", body, { "x-forwarded-for": "198.51.100.9" });
    clock.advance(61_000);
    const next = await post("wake", body, flood);
    await gateway!.close();
    gateway = undefined;

    const lines = answeredLines(stateDir);
    const fromFlood = lines.filter((line) => line.client === "203.0.113.7");
    // The first minute's sixty, then one line that says how many were left out.
    expect(fromFlood).toHaveLength(61);
    expect(fromFlood.slice(0, 60).every((line) => line.suppressed === undefined)).toBe(true);
    expect(fromFlood[60]).toMatchObject({ id: next.requestId, suppressed: FLOOD - 60 });
    expect(lines.filter((line) => line.client === "198.51.100.9").map((line) => line.id)).toEqual([
      other.requestId,
    ]);
  });
  it("refusals from 2,000 addresses write at most the budget for all addresses a minute, and the count is logged", {
    timeout: BULK_TIMEOUT_MS,
  }, async () => {
    const logger = warningsLogger();
    const { stateDir } = await start(undefined, logger);
    const body = JSON.stringify({ text: "let me in" });
    const ADDRESSES = 2_000;
    // Forty at a time, each from an address of its own (behind the trusted loopback proxy).
    for (let sent = 0; sent < ADDRESSES; sent += 40) {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const n = sent + i;
          return post("wake", body, { "x-forwarded-for": `198.18.${n >> 8}.${n & 255}` });
        }),
      );
      expect(answers.every((answer) => answer.status === 401)).toBe(true);
    }
    await gateway!.close();
    gateway = undefined;

    const lines = answeredLines(stateDir);
    // 600 lines a minute for everyone (the default), each address's first; the rest counted, told once.
    expect(lines).toHaveLength(600);
    expect(new Set(lines.map((line) => line.client)).size).toBe(600);
    const told = logger.warnings.filter((line) => line.message.includes("refused requests were not listed"));
    expect(told).toHaveLength(1);
    expect(told[0]!.fields).toEqual({ suppressed: ADDRESSES - 600 });
  });

  it("a header of 100 KB of `\"` is listed within the byte budget of a stranger's refusal, every header name kept", async () => {
    const stateDir = path.join(makeTempDir("refused-header-"), "state");
    host = await startTestHost(
      createHooksPlugin(),
      { hooks: { enabled: true, token: TOKEN } },
      { stateDir, maxHeaderSize: 256 * 1024 },
    );
    const response = await fetch(`${host.url}/hooks/wake`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-quoted": '"'.repeat(100_000),
        "x-after": "still here",
      },
      body: JSON.stringify({ text: "x" }),
    });
    await response.text();
    expect(response.status).toBe(401);
    await host.close();
    host = undefined;

    const [line, ...more] = answeredLines(stateDir);
    expect(more).toHaveLength(0);
    // Counted as written: a `"` takes two bytes of JSON.
    expect(Buffer.byteLength(JSON.stringify(line!.headers))).toBeLessThanOrEqual(1_536);
    expect(Buffer.byteLength(JSON.stringify(line))).toBeLessThan(3_000);
    expect(line!.headers["x-quoted"]).toMatch(/^"+$/);
    expect(line!.headers["x-after"]).toEqual(expect.any(String));
    expect(line!.headers["content-type"]).toEqual(expect.any(String));
  });

  it("50 replays of one signed GitHub delivery list the first few a minute, then one line with the count", async () => {
    const clock = movableClock();
    const { stateDir } = await start(clock);
    const body = JSON.stringify({ ref: "refs/heads/main" });
    const headers = {
      "x-github-event": "push",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      "x-hub-signature-256": await githubSign(GITHUB_SECRET, body),
    };
    const first = await post("github", body, headers);
    expect(first.status).toBe(200);
    const REPLAYS = 50;
    for (let sent = 0; sent < REPLAYS; sent += 10) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => post("github", body, headers)));
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
    }
    clock.advance(61_000);
    const next = await post("github", body, headers);
    await gateway!.close();
    gateway = undefined;

    const duplicates = answeredLines(stateDir).filter((line) => line.code === "DUPLICATE");
    expect(duplicates).toHaveLength(4);
    expect(duplicates.slice(0, 3).every((line) => line.suppressed === undefined)).toBe(true);
    expect(duplicates[3]).toMatchObject({ id: next.requestId, suppressed: REPLAYS - 3 });
    const shown = await runCli(["journal", "show", next.requestId, "--dir", journalDir(stateDir)]);
    expect(shown.stdout).toContain("suppressed 47 more copies of this delivery left out before this one");
  });

  it("a token or a signing secret a sender put where no credential filter looks never reaches the journal", async () => {
    const { stateDir } = await start();
    const body = JSON.stringify({ text: "x" });
    const encoded = encodeURIComponent(SW_SECRET);
    expect(encoded).not.toBe(SW_SECRET);
    const lowerEscapes = encoded.replace(/%[0-9A-F]{2}/g, (percent) => percent.toLowerCase());
    const sent = {
      query: await post(`wake?code=${TOKEN}&source=ci`, body, {}),
      header: await post("wake", body, { "x-my-header": `tok=${TOKEN}` }),
      path: await post(TOKEN, body, {}),
      encodedQuery: await post(`sw?leak=${encoded}`, body, {}),
      encodedHeader: await post("sw", body, {
        referer: `https://sender.example/setup?key=${lowerEscapes}`,
        "x-bare": SW_KEY,
      }),
    };
    expect(Object.values(sent).map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401]);
    await gateway!.close();
    gateway = undefined;

    const text = journalText(stateDir);
    for (const leaked of [TOKEN, SW_SECRET, encoded, lowerEscapes, SW_KEY, encodeURIComponent(SW_KEY)])
      expect(text).not.toContain(leaked);
    const byId = new Map(answeredLines(stateDir).map((line) => [line.id, line]));
    const lineOf = (name: keyof typeof sent) => byId.get(sent[name].requestId)!;
    expect(lineOf("query").url).toBe("/hooks/wake?code=[redacted]&source=ci");
    expect(lineOf("header").headers["x-my-header"]).toBe("tok=[redacted]");
    expect(lineOf("path")).toMatchObject({ hook: "[redacted]", url: "/hooks/[redacted]" });
    expect(lineOf("encodedQuery").url).toBe("/hooks/sw?leak=[redacted]");
    expect(lineOf("encodedHeader").headers).toMatchObject({
      referer: "https://sender.example/setup?key=[redacted]",
      "x-bare": "[redacted]",
    });
  });
});
