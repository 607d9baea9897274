/** @module The gateway's HTTP server over real loopback sockets: slow headers are cut, connections are capped (per client: an IPv6 /64 is one). */
import { EventEmitter, once } from "node:events";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createAddressCaps } from "../../src/gateway/address-caps.js";
import { type GatewayServer, listenGatewayServer } from "../../src/gateway/http-server.js";

let server: GatewayServer | undefined;
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.close(0);
  server = undefined;
});

async function listen(options: {
  headersTimeoutMs?: number;
  maxConnections?: number;
}): Promise<GatewayServer> {
  server = await listenGatewayServer((_req, res) => res.end("ok"), {
    host: "127.0.0.1",
    port: 0,
    ...options,
  });
  return server;
}

/** A raw client socket: what it received, and a promise of its close. */
async function connect(
  port: number,
): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
  const socket = net.connect(port, "127.0.0.1");
  sockets.push(socket);
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString();
  });
  socket.on("error", () => undefined);
  const closed = once(socket, "close").then(() => undefined);
  await once(socket, "connect");
  return { socket, received: () => received, closed };
}

describe("gateway HTTP server", () => {
  it("closes a connection that sends half a request line and stalls, once the header timeout passes", async () => {
    const { port } = await listen({ headersTimeoutMs: 300 });
    const client = await connect(port);
    const started = performance.now();
    client.socket.write("POST /hooks/wa");
    await client.closed;
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    // Node's defaults would hold it for about a minute.
    expect(elapsed).toBeLessThan(3_000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
  }, 10_000);

  it("still serves a client that sends its request in time", async () => {
    const { port } = await listen({ headersTimeoutMs: 300 });
    const client = await connect(port);
    client.socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nok$/);
  });

  it("closes connections beyond the cap as they arrive and keeps serving the ones it holds", async () => {
    const { port } = await listen({ maxConnections: 2 });
    const first = await connect(port);
    const second = await connect(port);
    const third = await connect(port);
    await third.closed;
    expect(third.received()).toBe("");
    // The two held connections are still open and answer.
    for (const client of [first, second]) {
      client.socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      await client.closed;
      expect(client.received()).toMatch(/\r\n\r\nok$/);
    }
  }, 10_000);
});

describe("per-address connection caps", () => {
  /** A peer from an address this machine cannot bind: only what the caps look at. */
  function peer(remoteAddress: string) {
    const socket = Object.assign(new EventEmitter(), {
      remoteAddress,
      ended: false,
      end(_data: string, done?: () => void) {
        socket.ended = true;
        done?.();
      },
      destroy() {
        socket.emit("close");
      },
    });
    return socket;
  }

  it("count every address of one IPv6 /64 as one client, and each IPv4 address apart", () => {
    const caps = createAddressCaps({ maxConnectionsPerAddress: 2, maxPendingPerAddress: 2 });
    const connect = (address: string) => caps.connected(peer(address) as unknown as net.Socket);
    expect(connect("2001:db8:1:2::1")).toBe(true);
    expect(connect("2001:db8:1:2::2")).toBe(true);
    expect(connect("2001:db8:1:2:ffff::3")).toBe(false);
    expect(connect("2001:db8:1:3::1")).toBe(true);
    expect(connect("10.0.0.1")).toBe(true);
    expect(connect("10.0.0.2")).toBe(true);
    expect(connect("::ffff:10.0.0.1")).toBe(true);
    expect(connect("10.0.0.1")).toBe(false);
    expect(caps.addresses).toBe(4);
  });
});
