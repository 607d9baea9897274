/** @module Hostile load on a real `hooks serve`: slow headers, unverified bodies and waiting callers from one address do not lock out the others. */
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanupCli,
  makeTempDir,
  pollFor,
  type Serve,
  startServe,
  startServeProcess,
} from "../helpers/cli.js";
import { procStatusKb } from "../helpers/proc-status.js";
import { parseMetrics, samplesOf } from "../helpers/prometheus-text.js";
import { AUTH, baseConfig, readRecord, serveArgs, writeConfig } from "./support.js";

/** A signed path (GitHub's scheme) that also takes the hook token, as every signed path does by default. */
const SIGNED_GITHUB = {
  match: { path: "github" },
  action: "wake",
  textTemplate: "push",
  verify: { scheme: "github", secret: "hostile-load-secret" },
};

const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await cleanupCli();
});

/** The address that misbehaves, and another client: Linux answers the whole 127.0.0.0/8 on loopback. */
const ATTACKER = "127.0.0.1";
const OTHER = "127.0.0.2";

interface Answer {
  status: number;
  body: any;
}

/** A POST from a chosen local address, on a connection of its own. */
function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  localAddress: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: "POST",
        agent: false,
        localAddress,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...headers,
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : {} }),
        );
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** A raw socket from `localAddress`: what it received so far, and a promise of its close. */
async function open(url: string, localAddress: string, allowHalfOpen = false) {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port), localAddress, allowHalfOpen });
  sockets.push(socket);
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("latin1");
  });
  socket.on("error", () => undefined);
  // Not events.once: that rejects on the EPIPE of a socket the server refused mid-body.
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await once(socket, "connect");
  return { socket, received: () => received, closed };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const WAKE = JSON.stringify({ text: "still here", mode: "next-heartbeat" });

describe("slow headers from one address", () => {
  it("keep other addresses answered: the excess sockets get 429 and are closed, /wake from elsewhere gets 200", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig({
        server: {
          maxConnections: 40,
          maxConnectionsPerAddress: 8,
          maxPendingPerAddress: 4,
          headersTimeoutMs: 5_000,
        },
      }),
    );
    const gateway = await startServe(["--config", config, "--state-dir", path.join(dir, "state")]);
    // More slow-header sockets than the whole server takes, all from one address, each stalled mid-headers.
    const attackers = await Promise.all(Array.from({ length: 60 }, () => open(gateway.url, ATTACKER)));
    for (const attacker of attackers) attacker.socket.write("POST /hooks/wake HTTP/1.1\r\nHost: x\r\n");

    for (let i = 0; i < 10; i++) {
      const answer = await post(`${gateway.url}/hooks/wake`, WAKE, AUTH, OTHER);
      expect(answer.status).toBe(200);
    }
    // The address keeps its share (4 requests still arriving); every other socket was answered and closed.
    const refused = attackers.filter((attacker) => attacker.received().startsWith("HTTP/1.1 429 "));
    expect(refused).toHaveLength(56);
    await Promise.all(refused.map((attacker) => attacker.closed));
    expect(refused[0]!.received()).toMatch(/\r\nRetry-After: 1\r\n/);
  }, 20_000);
});

/** A POST as `post` sends it; 0 when no answer came (the connection was closed or reset first). */
const statusOrNone = (...args: Parameters<typeof post>) =>
  post(...args).then(
    (answer) => answer.status,
    () => 0,
  );

/**
 * Slow-header sockets: `perAddress` from each of `addresses`, each stalled in its request line and reopened a moment
 * after the server closes it, as an attacker keeps its sockets up. `closed` counts the closes so far.
 */
function slowHeaders(url: string, addresses: readonly string[], perAddress: number) {
  const { hostname, port } = new URL(url);
  let attacking = true;
  let closed = 0;
  const loops = addresses.flatMap((localAddress) =>
    Array.from({ length: perAddress }, async () => {
      while (attacking) {
        const socket = net.connect({ host: hostname, port: Number(port), localAddress });
        sockets.push(socket);
        socket.on("error", () => undefined);
        // Reads what it is sent, so it sees the server's end; a socket reset before it is up closes all the same.
        socket.resume();
        socket.write("POST /hooks/wake HTTP/1.1\r\nHost: x\r\nX-Slow: ");
        await new Promise((resolve) => socket.once("close", resolve));
        closed++;
        if (attacking) await sleep(250);
      }
    }),
  );
  return {
    closed: () => closed,
    async stop() {
      attacking = false;
      for (const socket of sockets) socket.destroy();
      await Promise.all(loops);
    },
  };
}

describe("slow headers from five addresses", () => {
  const ATTACKERS = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"];
  const SIXTH = "127.0.0.7";

  it.each([
    { scale: "small caps", server: { maxConnections: 100, maxConnectionsPerAddress: 25 }, perAddress: 30 },
    { scale: "the defaults", server: {}, perAddress: 260 },
  ])(
    "that together hold more than the server takes ($scale) leave a sixth address's /wake answered",
    async ({ server, perAddress }) => {
      const dir = makeTempDir();
      const config = writeConfig(dir, baseConfig({ server: { ...server, headersTimeoutMs: 30_000 } }));
      // A process of its own: the attack's sockets do not share the gateway's event loop.
      const gateway = await startServeProcess(["--config", config, "--state-dir", path.join(dir, "state")]);
      // Each address may hold a quarter of the server's connections: five hold more than all of them.
      const maxConnections = (server as { maxConnections?: number }).maxConnections ?? 1024;
      const attack = slowHeaders(gateway.url, ATTACKERS, perAddress);
      try {
        // The server is full once the sockets past its cap were closed (refused, or cut to make room).
        const excess = ATTACKERS.length * perAddress - maxConnections;
        await pollFor(() => (attack.closed() >= excess ? true : undefined), "the server full", 20_000);
        const statuses = [];
        for (let i = 0; i < 40; i++) {
          statuses.push(await statusOrNone(`${gateway.url}/hooks/wake`, WAKE, AUTH, SIXTH));
        }
        const answered = statuses.filter((status) => status === 200).length;
        expect(answered, `answered ${answered}/40: ${statuses.join(",")}`).toBeGreaterThanOrEqual(38);
      } finally {
        await attack.stop();
      }
    },
    60_000,
  );
});

/** The status of the answer a raw socket received, 0 when none came. */
const statusOf = (received: string) => Number(/^HTTP\/1\.1 (\d+)/.exec(received)?.[1] ?? 0);

/** A whole `POST /hooks/wake`, as a raw socket writes it. */
const wakeRequest = (connection: "close" | "keep-alive") =>
  `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nConnection: ${connection}\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(WAKE)}\r\n\r\n${WAKE}`;

describe("the per-address caps", () => {
  it.each([
    { peer: "a trusted proxy", outcome: "all served", trusted: true, statuses: Array(8).fill(200) },
    {
      peer: "any other address",
      outcome: "the 4 past the cap get 429",
      trusted: false,
      statuses: [...Array(4).fill(200), ...Array(4).fill(429)],
    },
  ])(
    "8 connections at once from $peer against a cap of 4: $outcome",
    async ({ trusted, statuses }) => {
      const dir = makeTempDir();
      const config = writeConfig(
        dir,
        baseConfig(
          { server: { maxConnectionsPerAddress: 4, maxPendingPerAddress: 4 } },
          trusted ? { trustedProxies: [ATTACKER] } : {},
        ),
      );
      const gateway = await startServe(["--config", config, "--state-dir", path.join(dir, "state")]);
      // All open before any sends: a proxy holds many clients' connections at once.
      const clients = [];
      for (let i = 0; i < 8; i++) clients.push(await open(gateway.url, ATTACKER));
      for (const client of clients) client.socket.write(wakeRequest("close"));
      await Promise.all(clients.map((client) => client.closed));
      expect(clients.map((client) => statusOf(client.received()))).toEqual(statuses);
      if (!trusted) expect(clients.at(-1)!.received()).toContain('"code":"CLIENT_BUSY"');
    },
    20_000,
  );

  it("a kept-alive connection that starts a request while its address holds every pending slot gets 429 and is closed", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig({ server: { maxConnectionsPerAddress: 8, maxPendingPerAddress: 2 } }),
    );
    const gateway = await startServe(["--config", config, "--state-dir", path.join(dir, "state")]);
    const kept = await open(gateway.url, ATTACKER);
    kept.socket.write(wakeRequest("keep-alive"));
    while (!kept.received().includes('"ok":true')) await once(kept.socket, "data");
    expect(statusOf(kept.received())).toBe(200);

    await takePendingSlots(gateway.url);

    const before = kept.received().length;
    kept.socket.write(wakeRequest("keep-alive"));
    await kept.closed;
    const second = kept.received().slice(before);
    expect(statusOf(second)).toBe(429);
    expect(second).toMatch(/\r\nRetry-After: 1\r\n/);
    expect(second).toContain('"code":"CLIENT_BUSY"');
  }, 20_000);
});

describe("connections refused as they arrive", () => {
  it("hold no slot: a loop of connections from one address that never reads nor closes leaves /wake from another answered", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig({ server: { maxConnections: 24, maxConnectionsPerAddress: 4, maxPendingPerAddress: 4 } }),
    );
    // A process of its own, so the loop below does not share the gateway's event loop.
    const gateway = await startServeProcess(["--config", config, "--state-dir", path.join(dir, "state")]);
    const { hostname, port } = new URL(gateway.url);
    let flooding = true;
    let opened = 0;
    const flood = (async () => {
      while (flooding) {
        for (let i = 0; i < 20; i++) {
          // Never reads, and ignores the server's FIN: only the server can free the connection. Each is dropped
          // after longer than a refused connection used to linger.
          const socket = net.connect({
            host: hostname,
            port: Number(port),
            localAddress: ATTACKER,
            allowHalfOpen: true,
          });
          socket.pause();
          socket.on("error", () => undefined);
          sockets.push(socket);
          setTimeout(() => socket.destroy(), 1_500);
          opened++;
        }
        await sleep(10);
      }
    })();
    try {
      await sleep(500);
      for (let i = 0; i < 20; i++) {
        const answer = await post(`${gateway.url}/hooks/wake`, WAKE, AUTH, OTHER);
        expect(answer.status).toBe(200);
        await sleep(50);
      }
    } finally {
      flooding = false;
      await flood;
    }
    // The loop did run at a rate that would have filled the server many times over.
    expect(opened).toBeGreaterThan(500);
  }, 30_000);
});

/** Writes `size` bytes of body on a client's socket, as fast as it takes them, until they are sent or it closes. */
async function sendBody(client: Awaited<ReturnType<typeof open>>, size: number): Promise<void> {
  const chunk = Buffer.alloc(1024 * 1024, "a");
  for (let sent = 0; sent < size && !client.socket.destroyed; sent += chunk.length) {
    if (!client.socket.write(chunk)) {
      await Promise.race([new Promise((resolve) => client.socket.once("drain", resolve)), client.closed]);
    }
  }
}

/** Polls `read` until it returns a value, for state that has no event to wait on (what a scrape counts). */
async function pollAsync<T>(read: () => Promise<T | undefined>, what: string, waitMs = 10_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The server process's memory, from /proc (MiB). */
function memoryOf(pid: number): { rss: number; peak: number } {
  return { rss: procStatusKb(pid, "VmRSS") / 1024, peak: procStatusKb(pid, "VmHWM") / 1024 };
}

describe("unverified bodies on a signed path", () => {
  it("are bounded together, and a throttled address gets 429 before a byte of its body is read", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          authFailures: { limit: 3, windowSeconds: 60 },
          admission: {
            unverifiedBytesPerAddress: 8 * 1024 * 1024,
            unverifiedBytes: 16 * 1024 * 1024,
            // The first body below is sent only once the others were refused: more time than a busy machine needs.
            unverifiedBodyTimeoutMs: 60_000,
          },
          mappings: [{ ...SIGNED_GITHUB, id: "gh", maxBodyBytes: 32 * 1024 * 1024 }],
        },
      ),
    );
    // A real process: its memory is read from /proc.
    const gateway = await startServeProcess(["--config", config, "--state-dir", path.join(dir, "state")]);
    const pid = gateway.child.pid!;
    const before = memoryOf(pid);
    const size = 24 * 1024 * 1024;
    const head = `POST /hooks/github HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nX-Hub-Signature-256: sha256=${"0".repeat(64)}\r\nContent-Length: ${size}\r\n\r\n`;

    // Room is taken on the headers alone. 24 requests from 8 addresses each declare 24 MiB, more than either bound:
    // the first to arrive takes it all (one body larger than the bounds is still read alone), and each of the others
    // is refused at once, its body never read: 429 for the two others of its address, 503 for the 21 of the rest.
    const addressOf = (i: number) => `127.0.1.${1 + (i % 8)}`;
    const declared = await Promise.all(Array.from({ length: 24 }, (_, i) => open(gateway.url, addressOf(i))));
    const closed = new Set<number>();
    await new Promise<void>((resolve) => {
      declared.forEach((client, i) => {
        void client.closed.then(() => {
          closed.add(i);
          if (closed.size === declared.length - 1) resolve();
        });
        client.socket.write(head);
      });
    });
    const held = declared.flatMap((_, i) => (closed.has(i) ? [] : [i]));
    expect(held).toHaveLength(1);
    const holder = declared[held[0]!]!;
    const refusals = [...closed].map((i) => ({
      own: addressOf(i) === addressOf(held[0]!),
      status: statusOf(declared[i]!.received()),
      code: /"code":"(\w+)"/.exec(declared[i]!.received())?.[1],
    }));
    expect(refusals.filter(({ own }) => own)).toEqual(
      Array(2).fill({ own: true, status: 429, code: "CLIENT_BUSY" }),
    );
    expect(refusals.filter(({ own }) => !own)).toEqual(
      Array(21).fill({ own: false, status: 503, code: "SERVER_BUSY" }),
    );
    // The one let in is read to its end, and refused for its signature.
    await sendBody(holder, size);
    await holder.closed;
    expect(statusOf(holder.received())).toBe(401);

    // A flood: 24 sockets from 8 other addresses each send their 24 MiB with a made-up signature at once, 576 MiB
    // if all were read. The ones read are refused for their signature (401), the others before their body is read
    // (429 or 503), or the address is over its failure limit by then (429); each client reads its answer while it
    // is still sending. How many are read depends on when each one's headers arrive: the bounds show in the
    // gateway's memory.
    const statuses = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const client = await open(gateway.url, `127.0.2.${1 + (i % 8)}`);
        client.socket.write(head);
        await sendBody(client, size);
        await client.closed;
        return statusOf(client.received());
      }),
    );
    const after = memoryOf(pid);
    expect(statuses.filter((status) => status === 401).length).toBeGreaterThan(0);
    expect(statuses.filter((status) => ![401, 429, 503].includes(status))).toEqual([]);
    expect(after.peak - before.rss).toBeLessThan(200);
    // The gateway answered each of the 48 (the metrics count a request once its answer is written).
    const answered = await pollAsync(async () => {
      const scrape = parseMetrics(await (await fetch(`${gateway.url}/metrics`)).text());
      const github = samplesOf(scrape, "hooks_requests_total").filter(
        ({ labels }) => labels.hook === "github",
      );
      const count = github.reduce((sum, { value }) => sum + value, 0);
      return count >= 48 ? github : undefined;
    }, "48 answers counted");
    expect(answered.filter(({ labels }) => !["401", "429", "503"].includes(labels.status!))).toEqual([]);
    expect(answered.reduce((sum, { value }) => sum + value, 0)).toBe(48);

    // An address over its failure limit: refused on its headers alone, the declared body never sent.
    const bad = JSON.stringify({ zen: "x" });
    for (let i = 0; i < 4; i++) {
      await post(
        `${gateway.url}/hooks/github`,
        bad,
        { "x-hub-signature-256": `sha256=${"1".repeat(64)}` },
        OTHER,
      );
    }
    const throttled = await open(gateway.url, OTHER);
    throttled.socket.write(
      `POST /hooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Hub-Signature-256: sha256=${"1".repeat(64)}\r\nContent-Length: 1048576\r\n\r\n`,
    );
    await throttled.closed;
    expect(throttled.received()).toMatch(/^HTTP\/1\.1 429 [\s\S]*"code":"AUTH_THROTTLED"/);
  }, 30_000);

  it("do not stand between a throttled address and its correct token, where the path takes the token too", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          authFailures: { limit: 2, windowSeconds: 60 },
          mappings: [SIGNED_GITHUB],
        },
      ),
    );
    const gateway = await startServe(["--config", config, "--state-dir", path.join(dir, "state")]);
    const url = `${gateway.url}/hooks/github`;
    const body = JSON.stringify({ zen: "x" });
    const forged = { "x-hub-signature-256": `sha256=${"1".repeat(64)}` };
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(url, body, forged, OTHER)).status);
    expect(statuses).toEqual([401, 401, 429, 429]);
    // The correct token, by either header it may come in, with or without a signature beside it.
    expect((await post(url, body, AUTH, OTHER)).status).toBe(200);
    for (let i = 0; i < 3; i++) await post(url, body, forged, OTHER);
    expect((await post(url, body, { ...AUTH, ...forged }, OTHER)).status).toBe(200);
    for (let i = 0; i < 3; i++) await post(url, body, forged, OTHER);
    expect((await post(url, body, { "x-service-token": AUTH.authorization.slice(7) }, OTHER)).status).toBe(
      200,
    );
    // It cleared the address's failures; a wrong token is still a failure, counted as one.
    expect((await post(url, body, { authorization: "Bearer wrong" }, OTHER)).status).toBe(401);
  }, 20_000);

  it("get a shorter deadline than bodies whose token was checked first", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          bodyTimeoutMs: 20_000,
          admission: { unverifiedBodyTimeoutMs: 300 },
          mappings: [SIGNED_GITHUB],
        },
      ),
    );
    const gateway = await startServe(["--config", config, "--state-dir", path.join(dir, "state")]);
    const client = await open(gateway.url, OTHER);
    const started = performance.now();
    client.socket.write(
      `POST /hooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Hub-Signature-256: sha256=${"0".repeat(64)}\r\nContent-Length: 100\r\n\r\n{"a":`,
    );
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(performance.now() - started).toBeLessThan(5_000);
  }, 20_000);
});

/** The answer in what a raw socket received, when all of it came (its body as long as its Content-Length). */
function wholeAnswer(received: string): { status: number; code: string | undefined } | undefined {
  const split = received.indexOf("\r\n\r\n");
  const length = /\r\nContent-Length: (\d+)\r\n/i.exec(received.slice(0, split))?.[1];
  if (split === -1 || length === undefined) return undefined;
  const body = received.slice(split + 4);
  if (Buffer.byteLength(body, "latin1") !== Number(length)) return undefined;
  return { status: statusOf(received), code: /"code":"(\w+)"/.exec(body)?.[1] };
}

/**
 * Two connections of the attacker stall mid-headers, taking its two pending slots. A third is refused as it
 * arrives; connections are accepted in order, so by its answer the two before it are counted.
 */
async function takePendingSlots(url: string): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const stalled = await open(url, ATTACKER);
    stalled.socket.write("POST /hooks/wake HTTP/1.1\r\nHost: x\r\n");
  }
  const arriving = await open(url, ATTACKER);
  await arriving.closed;
  expect(statusOf(arriving.received())).toBe(429);
}

/**
 * Sends `head` and keeps sending a 64 MiB body, as an uploader does that does not look for an early answer: the
 * client's socket is open with `allowHalfOpen`, so the gateway's end does not stop it either.
 */
async function uploadRefused(client: Awaited<ReturnType<typeof open>>, head: string) {
  const size = 64 * 1024 * 1024;
  client.socket.write(head.replace("{length}", String(size)));
  await sendBody(client, size);
  // A body sent whole (the gateway may drop all of it in less than its check): the uploader ends its side then, as
  // any does. Half-open, it would wait for a close the gateway's own, already sent and read, cannot give again.
  if (!client.socket.destroyed) client.socket.end();
  await client.closed;
  return wholeAnswer(client.received());
}

describe("a sender refused before its body is read", () => {
  it("reads the whole answer while it is still sending, instead of a reset", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        { server: { maxConnectionsPerAddress: 8, maxPendingPerAddress: 2 } },
        { authFailures: { limit: 1, windowSeconds: 60 }, mappings: [SIGNED_GITHUB] },
      ),
    );
    const gateway = await startServeProcess(["--config", config, "--state-dir", path.join(dir, "state")]);
    const forged = { "x-hub-signature-256": `sha256=${"1".repeat(64)}` };
    for (let i = 0; i < 2; i++) await post(`${gateway.url}/hooks/github`, "{}", forged, OTHER);
    // An address over its failure limit, on a signed path: refused on its headers.
    const throttled = [];
    for (let i = 0; i < 5; i++) {
      const client = await open(gateway.url, OTHER, true);
      throttled.push(
        await uploadRefused(
          client,
          `POST /hooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Hub-Signature-256: ${forged["x-hub-signature-256"]}\r\nContent-Length: {length}\r\n\r\n`,
        ),
      );
    }
    expect(throttled).toEqual(Array(5).fill({ status: 429, code: "AUTH_THROTTLED" }));

    // Kept-alive connections that start a request while their address holds every pending slot. Each is
    // connected and done with a first request before two others of the address stall mid-headers.
    const kept = [];
    for (let i = 0; i < 3; i++) {
      const client = await open(gateway.url, ATTACKER, true);
      client.socket.write(wakeRequest("keep-alive"));
      const gone = client.closed.then(() => {
        throw new Error(`closed before its answer: ${client.received().slice(0, 200)}`);
      });
      while (!client.received().includes('"ok":true'))
        await Promise.race([once(client.socket, "data"), gone]);
      kept.push(client);
    }
    await takePendingSlots(gateway.url);
    const busy = [];
    for (const client of kept) {
      const before = client.received().length;
      await uploadRefused(
        client,
        `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n`,
      );
      busy.push(wholeAnswer(client.received().slice(before)));
    }
    expect(busy).toEqual(Array(3).fill({ status: 429, code: "CLIENT_BUSY" }));
  }, 60_000);
});

/** Events of one kind in the gateway's event record (`serveArgs`) so far. */
function recorded(dir: string, event: string): number {
  return readRecord(path.join(dir, "events.jsonl")).filter((line) => line.event === event).length;
}

/** Agent turns emitted so far. */
const turnsStarted = (dir: string) => recorded(dir, "session:agent-turn");
/** Agent turns that ran to their end so far. */
const turnsFinished = (dir: string) => recorded(dir, "session:agent-turn-finished");

/** A stand-in agent that holds its turn until a file "go" appears in its working directory. */
const HOLDING_AGENT = `
import { existsSync } from "node:fs";
for await (const _ of process.stdin);
while (!existsSync("go")) await new Promise((resolve) => setTimeout(resolve, 20));
process.stdout.write("released\\n");
`;

/** A gateway whose agent turns hold until released, with the given bounds on waiting callers. */
async function startHolding(admission: { waitersPerAddress: number; waiters: number }) {
  const dir = makeTempDir();
  writeFileSync(path.join(dir, "agent.mjs"), HOLDING_AGENT);
  const config = writeConfig(
    dir,
    baseConfig(
      { runner: { kind: "command", command: process.execPath, args: ["agent.mjs"] } },
      // Every held turn runs at once: these tests count waiting callers, not turns waiting for a slot.
      { admission, limits: { agent: { maxConcurrentTurns: 16 } } },
    ),
  );
  const gateway: Serve = await startServe(serveArgs(dir, config).args, { cwd: dir });
  return { dir, gateway };
}

describe("callers waiting for their turn", () => {
  it("are bounded per address and in all; the excess gets the admission answer and its turn still runs", async () => {
    const { dir, gateway } = await startHolding({ waitersPerAddress: 2, waiters: 3 });
    const waitFor = (localAddress: string) =>
      post(
        `${gateway.url}/hooks/agent`,
        JSON.stringify({ message: "hold", waitForCompletion: true, timeoutSeconds: 30 }),
        AUTH,
        localAddress,
      );
    const answers: Array<{ from: string; answer: Answer }> = [];
    let threeAnswered!: () => void;
    const three = new Promise<void>((resolve) => {
      threeAnswered = resolve;
    });
    const send = (from: string) =>
      waitFor(from).then((answer) => {
        if (answers.push({ from, answer }) === 3) threeAnswered();
      });
    // The bounds are counted in arrival order: each of the first five is in (waiting, or answered and its turn
    // emitted, which a turn in the record shows either way) before the next is sent.
    const pending: Array<Promise<void>> = [];
    for (const [i, from] of [ATTACKER, ATTACKER, ATTACKER, ATTACKER, OTHER].entries()) {
      pending.push(send(from));
      await pollFor(() => (turnsStarted(dir) === i + 1 ? true : undefined), `turn ${i + 1} emitted`);
    }
    pending.push(send("127.0.0.3"));
    // Two of the first address's four wait, one of OTHER's, none of the third's: three answered at admission.
    await three;
    const admitted = [...answers];
    expect(admitted.map((entry) => entry.answer.status)).toEqual([202, 202, 202]);
    expect(admitted.map((entry) => entry.from).sort()).toEqual([ATTACKER, ATTACKER, "127.0.0.3"]);
    expect(admitted[0]!.answer.body).toEqual({
      ok: true,
      runId: expect.any(String),
      sessionKey: expect.any(String),
    });
    // A /wake from yet another address is answered meanwhile.
    expect((await post(`${gateway.url}/hooks/wake`, WAKE, AUTH, "127.0.0.4")).status).toBe(200);

    writeFileSync(path.join(dir, "go"), "");
    await Promise.all(pending);
    const waited = answers.slice(3).map((entry) => entry.answer);
    expect(waited.map((answer) => [answer.status, answer.body.status])).toEqual([
      [200, "ok"],
      [200, "ok"],
      [200, "ok"],
    ]);
    // Every turn ran, the refused waiters' included (theirs may end just after the last waiter's answer).
    await pollFor(() => (turnsFinished(dir) === 6 ? true : undefined), "six finished turns");
  }, 30_000);

  it("that hang up give their place back at once, not when their turn ends", async () => {
    const { dir, gateway } = await startHolding({ waitersPerAddress: 2, waiters: 2 });
    const hold = JSON.stringify({ message: "hold", waitForCompletion: true, timeoutSeconds: 30 });
    const waitFor = (localAddress: string) => post(`${gateway.url}/hooks/agent`, hold, AUTH, localAddress);
    // Two callers from one address take every place, then hang up while their turns still run.
    const callers = [];
    for (let i = 0; i < 2; i++) {
      const caller = await open(gateway.url, ATTACKER);
      caller.socket.write(
        `POST /hooks/agent HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(hold)}\r\n\r\n${hold}`,
      );
      await pollFor(() => (turnsStarted(dir) === i + 1 ? true : undefined), `turn ${i + 1} emitted`);
      callers.push(caller);
    }
    const meanwhile = await waitFor(OTHER);
    expect(meanwhile.status).toBe(202);
    for (const caller of callers) caller.socket.destroy();
    await Promise.all(callers.map((caller) => caller.closed));
    // A request through the gateway's event loop: by its answer, the hang-ups were seen.
    expect((await post(`${gateway.url}/hooks/wake`, WAKE, AUTH, "127.0.0.4")).status).toBe(200);

    const waiting = waitFor(OTHER);
    await pollFor(() => (turnsStarted(dir) === 4 ? true : undefined), "the fourth turn emitted");
    writeFileSync(path.join(dir, "go"), "");
    const answer = await waiting;
    expect([answer.status, answer.body.status]).toEqual([200, "ok"]);
    // Their callers gone, the first two turns ran to their end all the same.
    await pollFor(() => (turnsFinished(dir) === 4 ? true : undefined), "four finished turns");
  }, 30_000);
});
