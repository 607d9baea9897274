/** @module What one client address (an IPv6 /64) may hold of the gateway's connections, and who gives way when all of them are held: connections open, requests still arriving (headers or body), connections waiting for headers. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { clientGroup, lingerAfterAnswer } from "../index.js";
import { ConnectionTally } from "./connection-tally.js";
import { sendGatewayError } from "./router.js";

/**
 * How long a connection refused as it arrived may take to hand its answer to the kernel. It is cut as soon as it
 * has, so it never keeps a slot of `maxConnections`; this only bounds a write that cannot leave.
 */
const REFUSED_FLUSH_MS = 100;
/** Seconds a refused client is asked to wait: a slot frees as soon as one of its requests ends. */
const RETRY_AFTER_SECONDS = 1;

const CLIENT_BUSY_MESSAGE = "This address holds too many connections or unfinished requests; retry later.";
const SERVER_BUSY_MESSAGE =
  "The gateway holds every connection it takes, none of them idle enough to give way; retry later.";

/** An answer written before any request was read, so as raw bytes: the connection closes after it. */
function rawAnswer(statusLine: string, code: string, message: string): string {
  const body = JSON.stringify({ ok: false, error: message, code });
  return [
    `HTTP/1.1 ${statusLine}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `Retry-After: ${RETRY_AFTER_SECONDS}`,
    "Connection: close",
    "",
    body,
  ].join("\r\n");
}
const CLIENT_BUSY = rawAnswer("429 Too Many Requests", "CLIENT_BUSY", CLIENT_BUSY_MESSAGE);
const SERVER_BUSY = rawAnswer("503 Service Unavailable", "SERVER_BUSY", SERVER_BUSY_MESSAGE);

export interface AddressCapsOptions {
  /** Connections the gateway holds at once, all addresses together. */
  maxConnections: number;
  /** Connections one address may hold, whatever they are doing. */
  maxConnectionsPerAddress: number;
  /** Of those, how many may be sending a request (its headers or its body) at once. */
  maxPendingPerAddress: number;
  /**
   * Peers the per-address caps do not apply to: trusted proxies, which speak for many clients from one address.
   * They count towards `maxConnections`; the plugin's budgets still count each client they forward.
   */
  exempt?: ((address: string) => boolean) | undefined;
}

export interface AddressCaps {
  /** On a new connection: false when it was refused (answered 429 or 503 and closing). */
  connected(socket: Socket): boolean;
  /** On a request's headers: false when it was refused (answered 429, the connection closing). */
  requested(req: IncomingMessage, res: ServerResponse): boolean;
  /**
   * On the close of the answer to a request `requested` let through (the server's one listener per request calls
   * it, rather than one more of the caps' own).
   */
  answered(req: IncomingMessage): void;
  /** Clients (an IPv4 address, an IPv6 /64) that hold something now (tests: the map is as large as what is open). */
  readonly addresses: number;
  /** Connections held now, exempt peers' included. */
  readonly open: number;
}

/**
 * Cut once the answer is flushed: a client that ignores the FIN would otherwise keep the connection, and a loop
 * of such connections from one address would keep the server at its cap, refusing everyone at accept.
 */
function refuse(socket: Socket, answer: string): void {
  socket.end(answer, () => socket.destroy());
  setTimeout(() => socket.destroy(), REFUSED_FLUSH_MS).unref();
}

/** A kept-alive connection's next request, refused: the connection closes once the client could read why. */
function refuseRequest(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  res.setHeader("Retry-After", String(RETRY_AFTER_SECONDS));
  res.setHeader("Connection", "close");
  res.once("finish", () => lingerAfterAnswer(res.req.socket));
  sendGatewayError(res, 429, "CLIENT_BUSY", CLIENT_BUSY_MESSAGE);
}

/**
 * Per address: the connections it holds, and how many of them are sending a request (`ConnectionTally`). When the
 * gateway holds `maxConnections`, a new connection takes the place of the longest-waiting one (waiting for a
 * request's headers) of the address with the most waiting, if that address holds at least two more connections than
 * the newcomer's: an address may hold more than the others only while nobody else needs a place.
 */
export function createAddressCaps(options: AddressCapsOptions): AddressCaps {
  const tally = new ConnectionTally();
  const refused = new WeakSet<Socket>();

  const refusedWith = (socket: Socket, answer: string): false => {
    refused.add(socket);
    refuse(socket, answer);
    return false;
  };
  /** At the cap, room for a newcomer of an address holding `holds`, if someone gives way. */
  const roomFor = (holds: number) => tally.open < options.maxConnections || tally.makeRoom(holds);

  return {
    connected(socket) {
      const peer = socket.remoteAddress ?? "unknown";
      // proxy-addr matches `::ffff:10.0.0.1` against `10.0.0.1` itself, and clientGroup folds the two into one.
      if (options.exempt?.(peer)) {
        if (!roomFor(0)) return refusedWith(socket, SERVER_BUSY);
        tally.admit(socket, undefined);
        return true;
      }
      // IPv6 counted by its /64, as the plugin counts its own budgets.
      const address = clientGroup(peer);
      const held = tally.of(address);
      const holds = held?.connections ?? 0;
      if (holds >= options.maxConnectionsPerAddress || (held?.pending ?? 0) >= options.maxPendingPerAddress) {
        return refusedWith(socket, CLIENT_BUSY);
      }
      if (!roomFor(holds)) return refusedWith(socket, SERVER_BUSY);
      tally.admit(socket, address);
      return true;
    },

    requested(req, res) {
      const socket = req.socket;
      if (refused.has(socket)) {
        socket.destroy();
        return false;
      }
      const state = tally.stateOf(socket);
      const held = state?.held;
      if (state === undefined || held === undefined) return true; // an exempt peer
      // A kept-alive connection starting its next request while its address has every pending slot.
      if (!state.pending && held.pending >= options.maxPendingPerAddress) {
        refuseRequest(res);
        return false;
      }
      tally.requested(state, held);
      // The body has arrived once it ended; a body nobody reads ends its phase when the answer has gone.
      if (req.complete) tally.settle(state);
      else req.once("end", () => tally.settle(state));
      return true;
    },

    answered(req) {
      const state = tally.stateOf(req.socket);
      if (state?.held === undefined) return;
      // A body nobody read ends its phase when the answer has gone (a read one ended it as it did).
      if (!req.complete) tally.settle(state);
      tally.answered(state);
    },

    get addresses() {
      return tally.addresses;
    },
    get open() {
      return tally.open;
    },
  };
}
