/** @module The gateway's HTTP server over real loopback sockets: slow headers are cut, connections are capped (per client: an IPv6 /64 is one). */
import { EventEmitter, once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
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

  it("answers 503 to a connection beyond the cap that nothing gives way to, and keeps serving the ones it holds", async () => {
    const { port } = await listen({ maxConnections: 2 });
    const first = await connect(port);
    const second = await connect(port);
    // Of the same address as the two it holds: none of them gives way to it.
    const third = await connect(port);
    await third.closed;
    expect(third.received()).toMatch(
      /^HTTP\/1\.1 503 [\s\S]*\r\nRetry-After: 1\r\n[\s\S]*"code":"SERVER_BUSY"/,
    );
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
      written: "",
      destroyed: false,
      end(data: string, done?: () => void) {
        socket.written = data;
        done?.();
      },
      destroy() {
        if (socket.destroyed) return;
        socket.destroyed = true;
        socket.emit("close");
      },
    });
    return socket;
  }
  type Peer = ReturnType<typeof peer>;

  /** Caps over fake peers: `connect` returns the peer, and whether it was let in. */
  function fakeCaps(options: { maxConnections: number; perAddress: number }) {
    const caps = createAddressCaps({
      maxConnections: options.maxConnections,
      maxConnectionsPerAddress: options.perAddress,
      maxPendingPerAddress: options.perAddress,
    });
    const connect = (address: string) => {
      const socket = peer(address);
      return { socket, admitted: caps.connected(socket as unknown as net.Socket) };
    };
    /** A request on `socket` whose headers and body are in; the returned response closes when called. */
    const request = (socket: Peer) => {
      const res = new EventEmitter();
      const req = { socket, complete: true, once: () => undefined };
      expect(caps.requested(req as unknown as IncomingMessage, res as unknown as ServerResponse)).toBe(true);
      // What the server's one listener on the answer's close does.
      return () => caps.answered(req as unknown as IncomingMessage);
    };
    return { caps, connect, request };
  }

  it("count every address of one IPv6 /64 as one client, and each IPv4 address apart", () => {
    const { caps, connect } = fakeCaps({ maxConnections: 1024, perAddress: 2 });
    expect(connect("2001:db8:1:2::1").admitted).toBe(true);
    expect(connect("2001:db8:1:2::2").admitted).toBe(true);
    expect(connect("2001:db8:1:2:ffff::3").admitted).toBe(false);
    expect(connect("2001:db8:1:3::1").admitted).toBe(true);
    expect(connect("10.0.0.1").admitted).toBe(true);
    expect(connect("10.0.0.2").admitted).toBe(true);
    expect(connect("::ffff:10.0.0.1").admitted).toBe(true);
    expect(connect("10.0.0.1").admitted).toBe(false);
    expect(caps.addresses).toBe(4);
  });

  it("at the cap, cut the longest-waiting connection of the /64 that holds the most for a client that holds fewer", () => {
    const { caps, connect } = fakeCaps({ maxConnections: 4, perAddress: 4 });
    // Three addresses of one /64 and one other client fill the gateway, all waiting for headers.
    const sixtyFour = ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"].map(connect);
    connect("10.0.0.1");
    expect(caps.open).toBe(4);
    // Another address of the same /64 holds as many as the busiest: refused, nothing cut.
    const same = connect("2001:db8:1:2::9");
    expect(same.admitted).toBe(false);
    expect(same.socket.written).toMatch(/^HTTP\/1\.1 503 [\s\S]*"code":"SERVER_BUSY"/);
    expect(sixtyFour.map(({ socket }) => socket.destroyed)).toEqual([false, false, false]);
    // Another /64 and another IPv4 address each take the place of the /64's oldest.
    expect(connect("2001:db8:1:3::1").admitted).toBe(true);
    expect(connect("10.0.0.2").admitted).toBe(true);
    expect(sixtyFour.map(({ socket }) => socket.destroyed)).toEqual([true, true, false]);
    expect(caps.open).toBe(4);
    // Four clients with one connection each: nobody gives way to a fifth.
    expect(connect("10.0.0.3").admitted).toBe(false);
    expect(caps.open).toBe(4);
  });

  it("never cut a connection whose request is under way, only one that waits for headers", () => {
    const { caps, connect, request } = fakeCaps({ maxConnections: 3, perAddress: 3 });
    const busy = [connect("10.0.0.1"), connect("10.0.0.1"), connect("10.0.0.1")];
    const answer = busy.map(({ socket }) => request(socket));
    expect(connect("10.0.0.9").admitted).toBe(false);
    // Answered and kept alive, the second waits for its next request's headers: it gives way.
    answer[1]!();
    expect(connect("10.0.0.9").admitted).toBe(true);
    expect(busy.map(({ socket }) => socket.destroyed)).toEqual([false, true, false]);
    expect(caps.open).toBe(3);
  });
});
