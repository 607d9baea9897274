/** @module Thousands of first-time strangers with wrong tokens on a real `hooks serve`: a throttled address stays throttled and a hook-wide rate limit stays spent. */
import { once } from "node:events";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupCli, makeTempDir, startServeProcess } from "../helpers/cli.js";
import { AUTH, baseConfig, writeConfig } from "./support.js";

afterEach(cleanupCli);

/** More strangers than the memory store's 10,000 counters. */
const STRANGERS = 10_500;
const WRONG = { authorization: "Bearer not-the-token-0123456789abcdef" };
const WAKE = JSON.stringify({ text: "ping" });

interface Answer {
  status: number;
  code: string | undefined;
}

/** A POST on a connection of its own, its client named by the trusted loopback proxy. */
async function post(url: string, headers: Record<string, string>, forwardedFor: string): Promise<Answer> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": forwardedFor, ...headers },
    body: WAKE,
  });
  const text = await response.text();
  return { status: response.status, code: text ? (JSON.parse(text) as { code?: string }).code : undefined };
}

/** The i-th stranger's address: every one distinct, none of them the test's own clients. */
const strangerAt = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

/**
 * Sends the strangers' wrong tokens over `connections` kept-alive sockets, `batch` requests written at once on each
 * (pipelined: the test spends next to nothing per request, the gateway all of it), and counts the statuses. No
 * body: a refused request's unread body would close its connection.
 */
async function flood(url: string, connections: number, batch: number): Promise<Record<string, number>> {
  const { hostname, port } = new URL(url);
  const statuses: Record<string, number> = {};
  let next = 0;
  const sender = async () => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    await once(socket, "connect");
    let received = "";
    let answered = 0;
    let wanted = 0;
    let wake: (() => void) | undefined;
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
      let seen = 0;
      for (const match of received.matchAll(/HTTP\/1\.1 (\d{3}) /g)) {
        statuses[match[1]!] = (statuses[match[1]!] ?? 0) + 1;
        answered++;
        seen = match.index + match[0].length;
      }
      // What follows the last status line may hold the start of the next, cut in two.
      received = received.slice(seen);
      if (answered >= wanted) wake?.();
    });
    try {
      while (next < STRANGERS) {
        const count = Math.min(batch, STRANGERS - next);
        let requests = "";
        for (let i = next; i < next + count; i++) {
          requests += `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: ${WRONG.authorization}\r\nX-Forwarded-For: ${strangerAt(i)}\r\nContent-Length: 0\r\n\r\n`;
        }
        next += count;
        wanted += count;
        const done = new Promise<void>((resolve) => {
          wake = resolve;
        });
        socket.write(requests);
        await Promise.race([done, once(socket, "close").then(() => Promise.reject(new Error("closed")))]);
      }
    } finally {
      socket.destroy();
    }
  };
  await Promise.all(Array.from({ length: connections }, sender));
  return statuses;
}

describe("wrong tokens from thousands of first-time addresses", () => {
  it("leave a throttled address throttled and a hook-wide rate limit spent", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        {},
        {
          trustedProxies: ["loopback"],
          authFailures: { limit: 3, windowSeconds: 600 },
          mappings: [
            {
              id: "shared-budget",
              match: { path: "shared" },
              action: "wake",
              textTemplate: "{{text}}",
              rateLimit: { requests: 2, perSeconds: 600, per: "hook" },
            },
          ],
        },
      ),
    );
    // A process of its own: the test's side of the flood does not take the gateway's turns of the event loop.
    const gateway = await startServeProcess(["--config", config, "--state-dir", path.join(dir, "state")]);
    const wake = `${gateway.url}/hooks/wake`;
    const shared = `${gateway.url}/hooks/shared`;
    const THROTTLED = "198.51.100.7";
    const tries: number[] = [];
    for (let i = 0; i < 4; i++) tries.push((await post(wake, WRONG, THROTTLED)).status);
    expect(tries).toEqual([401, 401, 401, 429]);
    const spent: number[] = [];
    for (let i = 0; i < 3; i++) spent.push((await post(shared, AUTH, `192.0.2.${i + 1}`)).status);
    expect(spent).toEqual([200, 200, 429]);

    expect(await flood(gateway.url, 4, 250)).toEqual({ 401: STRANGERS });

    expect({
      throttled: await post(wake, WRONG, THROTTLED),
      spent: await post(shared, AUTH, "192.0.2.9"),
    }).toEqual({
      throttled: { status: 429, code: "AUTH_THROTTLED" },
      spent: { status: 429, code: "RATE_LIMITED" },
    });
  }, 60_000);
});
