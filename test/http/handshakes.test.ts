/** @module The senders' handshakes over real HTTP: Meta's subscription GET and signed POSTs, Slack's url_verification, and Svix's header names for Standard Webhooks. */
import { createHmac, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import type { MappingInput } from "../../src/config/mapping-schema.js";
import { createGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { createHooksPlugin } from "../../src/index.js";
import { cleanupCli, makeTempDir } from "../helpers/cli.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { flipped, sendRaw, startSignedHost, SENDERS_TOKEN as TOKEN } from "../helpers/signed-host.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

let host: TestHost | undefined;
let gateway: GatewayHandle | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
  await gateway?.close();
  gateway = undefined;
  await cleanupCli();
});

const APP_SECRET = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
const VERIFY_TOKEN = "meta-verify-token-7c1d9a0b";
/** Meta's recipe: `sha256=` + hex HMAC-SHA256 of the raw body keyed with the app secret. */
const metaSignature = (body: Buffer, key = APP_SECRET) =>
  `sha256=${createHmac("sha256", key).update(body).digest("hex")}`;

const metaMapping: MappingInput = {
  id: "whatsapp",
  match: { path: "whatsapp" },
  action: "wake",
  textTemplate: "WhatsApp from {{entry[0].changes[0].value.messages[0].from}}",
  verify: { scheme: "meta", secret: APP_SECRET, verifyToken: VERIFY_TOKEN },
};

const subscribe = (token: string | undefined, challenge = "1158201444", mode = "subscribe") => {
  const query = new URLSearchParams({ "hub.mode": mode, "hub.challenge": challenge });
  if (token !== undefined) query.set("hub.verify_token", token);
  return query.toString();
};

async function get(base: string, target: string, method = "GET") {
  const response = await fetch(`${base}/hooks/${target}`, { method });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Every file below `dir`, as bytes read as latin1 (a token is ASCII: found whatever the file's format). */
function filesBelow(dir: string): Array<{ file: string; text: string }> {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => path.join(dir, name))
    .filter((file) => statSync(file).isFile())
    .map((file) => ({ file, text: readFileSync(file).toString("latin1") }));
}

const WHATSAPP_BODY = Buffer.from(
  JSON.stringify({
    object: "whatsapp_business_account",
    entry: [{ id: "102", changes: [{ field: "messages", value: { messages: [{ from: "15555550100" }] } }] }],
  }),
);

describe("meta: the subscription GET and X-Hub-Signature-256, through the reference gateway", () => {
  it("echoes the challenge as text/plain for the verify token, refuses others, and never keeps the token", async () => {
    const dir = makeTempDir("handshakes-");
    const out = new PassThrough();
    const logged: Buffer[] = [];
    out.on("data", (chunk: Buffer) => logged.push(chunk));
    const recordFile = path.join(dir, "events.jsonl");
    gateway = await startGateway({
      config: {
        hooks: {
          enabled: true,
          token: TOKEN,
          authFailures: { limit: 100, windowSeconds: 60 },
          journal: { storePayloads: true },
          mappings: [
            metaMapping,
            {
              id: "gh",
              match: { path: "github" },
              action: "wake",
              textTemplate: "push",
              verify: { scheme: "github", secret: "github-secret-0123" },
            },
          ],
        },
      },
      configDir: REPO_ROOT,
      stateDir: path.join(dir, "state"),
      captureDir: path.join(dir, "captures"),
      recordFile,
      port: 0,
      logger: createGatewayLogger({ out, format: "json", level: "debug" }),
    });
    const base = gateway.url;

    const answered = await get(base, `whatsapp?${subscribe(VERIFY_TOKEN)}`);
    expect(answered).toMatchObject({ status: 200, text: "1158201444" });
    expect(answered.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(answered.headers.get("x-content-type-options")).toBe("nosniff");

    const wrong = await get(base, `whatsapp?${subscribe("not-the-verify-token")}`);
    expect(wrong.status).toBe(403);
    expect(JSON.parse(wrong.text)).toMatchObject({ ok: false, code: "HANDSHAKE_REFUSED" });
    expect(wrong.text).not.toContain("1158201444");
    // Without the hub parameters there is no token: the same 403.
    expect((await get(base, "whatsapp")).status).toBe(403);
    // The token right, the rest not a subscription the challenge of which can be echoed: 400.
    const unsubscribe = await get(base, `whatsapp?${subscribe(VERIFY_TOKEN, "1", "unsubscribe")}`);
    expect(unsubscribe.status).toBe(400);
    expect(JSON.parse(unsubscribe.text)).toMatchObject({ code: "INVALID_HANDSHAKE" });
    expect((await get(base, `whatsapp?${subscribe(VERIFY_TOKEN, "a b")}`)).status).toBe(400);
    expect((await get(base, `whatsapp?${subscribe(VERIFY_TOKEN, "9".repeat(257))}`)).status).toBe(400);

    // GET is taken on the meta path only; HEAD nowhere.
    const head = await get(base, `whatsapp?${subscribe(VERIFY_TOKEN)}`, "HEAD");
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("GET, POST");
    for (const other of [`github?${subscribe(VERIFY_TOKEN)}`, "wake", "agent"]) {
      const refused = await get(base, other);
      expect(refused.status, other).toBe(405);
      expect(refused.headers.get("allow"), other).toBe("POST");
    }

    // Deliveries: signed with the app secret, as Meta does; one byte changed is 401.
    const headers = {
      "content-type": "application/json",
      "x-hub-signature-256": metaSignature(WHATSAPP_BODY),
    };
    const delivered = await fetch(`${base}/hooks/whatsapp`, { method: "POST", headers, body: WHATSAPP_BODY });
    expect(delivered.status).toBe(200);
    await delivered.text();
    const tampered = await fetch(`${base}/hooks/whatsapp`, {
      method: "POST",
      headers,
      body: flipped(WHATSAPP_BODY, 5),
    });
    expect(tampered.status).toBe(401);
    await tampered.text();
    const otherKey = { ...headers, "x-hub-signature-256": metaSignature(WHATSAPP_BODY, VERIFY_TOKEN) };
    const unsigned = await fetch(`${base}/hooks/whatsapp`, {
      method: "POST",
      headers: otherKey,
      body: WHATSAPP_BODY,
    });
    expect(unsigned.status).toBe(401);
    await unsigned.text();
    // A verify token where no name says it is one is hidden by its value.
    const stray = await fetch(`${base}/hooks/whatsapp?note=${VERIFY_TOKEN}`, {
      method: "POST",
      headers: { ...headers, "x-note": `vt ${VERIFY_TOKEN}` },
      body: flipped(WHATSAPP_BODY, 7),
    });
    expect(stray.status).toBe(401);
    await stray.text();

    await gateway.close();
    gateway = undefined;
    // Only the delivery made an event; the handshakes made none.
    const recorded = readFileSync(recordFile, "utf8").trim().split("\n");
    const systemEvents = recorded.filter((line) => line.includes('"session:system-event"'));
    expect(systemEvents).toHaveLength(1);
    expect(systemEvents[0]).toContain("WhatsApp from 15555550100");

    // The refusals are listed, without the token; nothing the gateway wrote holds it, nor the log.
    const files = filesBelow(dir);
    const journal = files.filter(({ file }) => file.includes("journal")).map(({ text }) => text);
    expect(journal.join("\n")).toContain("HANDSHAKE_REFUSED");
    expect(journal.join("\n")).toContain("hub.mode=subscribe");
    expect(files.some(({ file }) => file.includes("captures"))).toBe(true);
    for (const { file, text } of files) {
      expect(text, file).not.toContain(VERIFY_TOKEN);
      expect(text, file).not.toContain("not-the-verify-token");
      expect(text, file).not.toContain(APP_SECRET);
    }
    const log = Buffer.concat(logged).toString("utf8");
    expect(log).toContain("meta verification failed: verify token wrong");
    expect(log).not.toContain(VERIFY_TOKEN);
    expect(log).not.toContain("not-the-verify-token");
  });

  /** The Meta mapping alone, with `limit` failed authentications per address before 429. */
  const startThrottledMetaHost = (limit: number) =>
    startTestHost(
      createHooksPlugin(),
      {
        hooks: {
          enabled: true,
          token: TOKEN,
          authFailures: { limit, windowSeconds: 60 },
          mappings: [metaMapping],
        },
      },
      { configDir: REPO_ROOT },
    );

  it("a wrong verify token counts as a failed authentication of the address: 429 past the limit", async () => {
    host = await startThrottledMetaHost(2);
    expect((await get(host.url, `whatsapp?${subscribe("guess-1")}`)).status).toBe(403);
    expect((await get(host.url, `whatsapp?${subscribe("guess-2")}`)).status).toBe(403);
    const throttled = await get(host.url, `whatsapp?${subscribe("guess-3")}`);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("retry-after")).toMatch(/^\d+$/);
    // Guessed hook tokens and verify tokens count together.
    const bearer = { authorization: "Bearer wrong", "content-type": "application/json" };
    expect((await sendRaw(host, "wake", '{"text":"x"}', bearer)).status).toBe(429);
    // The verify token travels in URLs: it gets no way past the limit, unlike the hook token.
    expect((await get(host.url, `whatsapp?${subscribe(VERIFY_TOKEN)}`)).status).toBe(429);
    expect(host.eventsOf("hooks:request").map((request) => [request.method, request.status])).toEqual([
      ["GET", 403],
      ["GET", 403],
      ["GET", 429],
      ["POST", 429],
      ["GET", 429],
    ]);
  });

  it("a right verify token clears no failures: guesses at the hook token stay throttled", async () => {
    host = await startThrottledMetaHost(3);
    const guess = { authorization: "Bearer wrong", "content-type": "application/json" };
    const statuses: number[] = [];
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 2; i++) statuses.push((await sendRaw(host, "wake", '{"text":"x"}', guess)).status);
      statuses.push((await get(host.url, `whatsapp?${subscribe(VERIFY_TOKEN)}`)).status);
    }
    // Two guesses, a handshake, two more: the fourth guess is over the limit of 3, the handshake did not reset it.
    expect(statuses).toEqual([401, 401, 200, 401, 429, 429]);
  });

  it("a meta mapping needs its verify token; no other scheme takes one, and it must not be the app secret", async () => {
    const mapping = (verify: Record<string, unknown>, name: string): MappingInput => ({
      match: { path: name },
      action: "wake",
      textTemplate: "x",
      verify: verify as MappingInput["verify"],
    });
    await expect(
      startSignedHost([
        mapping({ scheme: "meta", secret: APP_SECRET }, "a"),
        mapping({ scheme: "github", secret: APP_SECRET, verifyToken: VERIFY_TOKEN }, "b"),
        mapping({ scheme: "meta", secret: APP_SECRET, verifyToken: APP_SECRET }, "c"),
        mapping({ scheme: "meta", secret: "EAAGm0PX4ZCpsBAKZAc", verifyToken: VERIFY_TOKEN }, "d"),
      ]),
    ).rejects.toThrow(
      expect.objectContaining({
        message: expect.stringMatching(
          /mappings\[0\]\.verify\.verifyToken: is required for meta[\s\S]*mappings\[1\]\.verify\.verifyToken: is read by the meta scheme only[\s\S]*mappings\[2\]\.verify\.verifyToken: must differ from the app secret[\s\S]*mappings\[3\]\.verify\.secret: looks like an access token/,
        ),
      }),
    );
    await expect(
      startSignedHost([mapping({ scheme: "meta", secret: APP_SECRET, verifyToken: APP_SECRET }, "c")]),
    ).rejects.not.toThrow(APP_SECRET);
  });
});

describe("slack: url_verification is answered after the signature, before any mapping", () => {
  const SECRET = "slack-signing-secret-0123456789";
  /** https://api.slack.com/authentication/verifying-requests-from-slack: HMAC-SHA256 of `v0:<ts>:<body>`. */
  const slackHeaders = (body: Buffer, secret = SECRET) => {
    const timestamp = Math.floor(Date.now() / 1000);
    return {
      "content-type": "application/json",
      "x-slack-request-timestamp": String(timestamp),
      "x-slack-signature": `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:`).update(body).digest("hex")}`,
    };
  };
  const CHALLENGE = "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P";
  const verification = Buffer.from(
    JSON.stringify({ token: "Jhj5dZrVaK7ZwHHjRyZWjbDl", challenge: CHALLENGE, type: "url_verification" }),
  );

  it("echoes the challenge as text/plain though no mapping matches it; a bad signature gets 401 and no challenge", async () => {
    host = await startSignedHost([
      {
        id: "slack-events",
        match: { path: "slack/events", payload: { type: "event_callback" } },
        action: "wake",
        textTemplate: "{{event.text}}",
        verify: { scheme: "slack", secret: SECRET },
      },
    ]);
    const answered = await sendRaw(host, "slack/events", verification, slackHeaders(verification));
    expect(answered).toMatchObject({ status: 200, text: CHALLENGE });
    expect(answered.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const forged = await sendRaw(
      host,
      "slack/events",
      verification,
      slackHeaders(verification, "another-secret"),
    );
    expect(forged.status).toBe(401);
    expect(forged.text).not.toContain(CHALLENGE);
    const odd = Buffer.from(JSON.stringify({ type: "url_verification", challenge: "<a b>" }));
    expect((await sendRaw(host, "slack/events", odd, slackHeaders(odd))).status).toBe(400);
    // Another body on the path goes to the mappings as before.
    const other = Buffer.from(JSON.stringify({ type: "block_actions" }));
    expect((await sendRaw(host, "slack/events", other, slackHeaders(other))).status).toBe(404);
    expect(host.eventsOf("session:system-event")).toHaveLength(0);
    expect(host.eventsOf("hooks:request").map((request) => request.status)).toEqual([200, 401, 400, 404]);
  });
});

describe("standard-webhooks: Svix's header names", () => {
  it("accepts what the standardwebhooks library signs sent as svix-*, and a replayed svix-id is a duplicate", async () => {
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    host = await startSignedHost([
      {
        id: "clerk",
        match: { path: "clerk" },
        action: "wake",
        textTemplate: "{{type}}",
        verify: { scheme: "standard-webhooks", secret, tokenAlso: false },
      },
    ]);
    const id = `msg_${randomBytes(8).toString("hex")}`;
    const date = new Date();
    const body = JSON.stringify({ type: "user.created", data: { id: "user_1" } });
    const signature = new Webhook(secret).sign(id, date, body);
    const svix = {
      "content-type": "application/json",
      "svix-id": id,
      "svix-timestamp": String(Math.floor(date.getTime() / 1000)),
      "svix-signature": signature,
    };
    const first = await sendRaw(host, "clerk", body, svix);
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replay")).toBeNull();
    const again = await sendRaw(host, "clerk", body, svix);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replay")).toBe("true");
    const events = host.eventsOf("session:system-event");
    expect(events).toHaveLength(1);
    expect(events[0]!.text).toContain("user.created");
    expect((await sendRaw(host, "clerk", flipped(Buffer.from(body), 4), svix)).status).toBe(401);
  });
});
