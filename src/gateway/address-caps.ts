/** @module What one client address (an IPv6 /64) may hold of the gateway's connections: connections open, and requests still arriving (headers or body). */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { clientGroup } from "../index.js";
import { sendGatewayError } from "./router.js";

/** How long a refused connection may linger after its answer before it is cut. */
const REFUSED_LINGER_MS = 1_000;
/**
 * How long a connection refused as it arrived may take to hand its answer to the kernel. It is cut as soon as it
 * has, so it never keeps a slot of `maxConnections`; this only bounds a write that cannot leave.
 */
const REFUSED_FLUSH_MS = 100;
/** Seconds a refused client is asked to wait: a slot frees as soon as one of its requests ends. */
const RETRY_AFTER_SECONDS = 1;

const REFUSAL_MESSAGE = "This address holds too many connections or unfinished requests; retry later.";
const REFUSAL_BODY = JSON.stringify({ ok: false, error: REFUSAL_MESSAGE, code: "CLIENT_BUSY" });
/** Written before any request was read, so it is raw bytes: the connection closes after it. */
const REFUSAL = [
  "HTTP/1.1 429 Too Many Requests",
  "Content-Type: application/json; charset=utf-8",
  `Content-Length: ${Buffer.byteLength(REFUSAL_BODY)}`,
  `Retry-After: ${RETRY_AFTER_SECONDS}`,
  "Connection: close",
  "",
  REFUSAL_BODY,
].join("\r\n");

export interface AddressCapsOptions {
  /** Connections one address may hold, whatever they are doing. */
  maxConnectionsPerAddress: number;
  /** Of those, how many may be sending a request (its headers or its body) at once. */
  maxPendingPerAddress: number;
  /**
   * Peers the caps do not apply to: trusted proxies, which speak for many clients from one address. They are
   * bounded by the server's own connection cap; the plugin's budgets still count each client they forward.
   */
  exempt?: ((address: string) => boolean) | undefined;
}

export interface AddressCaps {
  /** On a new connection: false when it was refused (answered 429 and closing). */
  connected(socket: Socket): boolean;
  /** On a request's headers: false when it was refused (answered 429, the connection closing). */
  requested(req: IncomingMessage, res: ServerResponse): boolean;
  /** Clients (an IPv4 address, an IPv6 /64) that hold something now (tests: the map is as large as what is open). */
  readonly addresses: number;
}

interface Held {
  connections: number;
  pending: number;
}

/** A connection's own state: whether its current request is still arriving. */
interface ConnectionState {
  held: Held;
  address: string;
  pending: boolean;
}

/**
 * Cut once the answer is flushed: a client that ignores the FIN would otherwise keep the connection, and a loop
 * of such connections from one address would keep the server at `maxConnections`, refusing everyone at accept.
 */
function refuse(socket: Socket): void {
  socket.end(REFUSAL, () => socket.destroy());
  setTimeout(() => socket.destroy(), REFUSED_FLUSH_MS).unref();
}

/**
 * A connection is pending from its arrival until its first request's body has arrived (or its answer left), and
 * again from each later request's headers: a client that sends its headers or body slowly holds one of these,
 * an idle kept-alive connection does not.
 */
export function createAddressCaps(options: AddressCapsOptions): AddressCaps {
  const held = new Map<string, Held>();
  const states = new WeakMap<Socket, ConnectionState>();
  const refused = new WeakSet<Socket>();

  const settle = (state: ConnectionState) => {
    if (!state.pending) return;
    state.pending = false;
    state.held.pending--;
  };

  return {
    connected(socket) {
      const peer = socket.remoteAddress ?? "unknown";
      // proxy-addr matches `::ffff:10.0.0.1` against `10.0.0.1` itself, and clientGroup folds the two into one.
      if (options.exempt?.(peer)) return true;
      // IPv6 counted by its /64, as the plugin counts its own budgets.
      const address = clientGroup(peer);
      let entry = held.get(address);
      if (entry === undefined) {
        entry = { connections: 0, pending: 0 };
        held.set(address, entry);
      }
      if (
        entry.connections >= options.maxConnectionsPerAddress ||
        entry.pending >= options.maxPendingPerAddress
      ) {
        if (entry.connections === 0) held.delete(address);
        refused.add(socket);
        refuse(socket);
        return false;
      }
      entry.connections++;
      entry.pending++;
      const state: ConnectionState = { held: entry, address, pending: true };
      states.set(socket, state);
      socket.once("close", () => {
        settle(state);
        state.held.connections--;
        if (state.held.connections === 0) held.delete(state.address);
      });
      return true;
    },

    requested(req, res) {
      const socket = req.socket;
      if (refused.has(socket)) {
        socket.destroy();
        return false;
      }
      const state = states.get(socket);
      if (state === undefined) return true; // an exempt peer
      if (!state.pending) {
        // A kept-alive connection starting its next request.
        if (state.held.pending >= options.maxPendingPerAddress) {
          res.shouldKeepAlive = false;
          res.setHeader("Retry-After", String(RETRY_AFTER_SECONDS));
          res.setHeader("Connection", "close");
          sendGatewayError(res, 429, "CLIENT_BUSY", REFUSAL_MESSAGE);
          setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
          return false;
        }
        state.pending = true;
        state.held.pending++;
      }
      // The body has arrived once it ended; a body nobody reads ends its phase when the answer has gone.
      const done = () => settle(state);
      if (req.complete) done();
      else {
        req.once("end", done);
        res.once("close", done);
      }
      return true;
    },

    get addresses() {
      return held.size;
    },
  };
}
