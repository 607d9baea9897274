/** @module The gateway's node:http server: listens, bounds slow clients and connections, stops without cutting requests off. */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createAddressCaps } from "./address-caps.js";
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  DEFAULT_MAX_PENDING_PER_ADDRESS,
  REQUEST_TIMEOUT_MS,
} from "./gateway-config.js";

/** Node's own default, kept: an idle kept-alive connection is closed after this. */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

export interface GatewayServerOptions {
  host: string;
  port: number;
  /** Time to send the request line and headers (`server.headersTimeoutMs`); default 10 s. */
  headersTimeoutMs?: number;
  /** Time to send the whole request; default 60 s, above the plugin's own body deadline. */
  requestTimeoutMs?: number;
  /** Simultaneous connections (`server.maxConnections`); default 1024. */
  maxConnections?: number;
  /** Connections one client address may hold (`server.maxConnectionsPerAddress`). */
  maxConnectionsPerAddress?: number;
  /** Requests of one address still arriving, headers or body (`server.maxPendingPerAddress`). */
  maxPendingPerAddress?: number;
  /** Peers the per-address caps do not apply to (trusted proxies, which speak for many clients). */
  exemptAddress?: ((address: string) => boolean) | undefined;
}

/** How long the answers that `beforeCut` brought about may take to leave before their connections are cut. */
const CUT_ANSWER_MS = 1_000;

export interface GatewayServer {
  readonly host: string;
  readonly port: number;
  /** Requests received and not yet answered. */
  readonly inFlight: number;
  /** Time to send the whole request, from now on (a reload that moves the plugin's body deadline moves it along). */
  setRequestTimeout(ms: number): void;
  /**
   * Refuses new connections at once, lets in-flight requests finish for up to `graceMs`, then cuts what is
   * left. Resolves with the number of requests that had to be cut. `beforeCut` runs when the grace has passed
   * with requests still open: what it ends (a turn a caller waits for) still gets to answer, for up to a second.
   */
  close(graceMs: number, beforeCut?: () => Promise<void>): Promise<number>;
}

/**
 * Connections node:http takes beyond `maxConnections`: the ones the caps refuse, each held only until its answer is
 * handed to the kernel. Past this too, node:http closes a new connection unanswered.
 */
function refusingRoom(maxConnections: number): number {
  return Math.max(32, Math.ceil(maxConnections / 8));
}

/** Node's deadlines for a slow client, and how often it checks them. */
function serverTimeouts(options: GatewayServerOptions) {
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS, headersTimeout);
  return {
    // Before any token is checked, a client that sends its headers slowly (or never) holds a socket; Node's
    // defaults let it do so for about a minute.
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // Node checks both deadlines on this timer (30 s by default), so it must tick well within them.
    connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(headersTimeout / 4))),
  };
}

/** Requests received and not yet answered, and a wait for the last of them. */
class InFlightRequests {
  count = 0;
  private drained: (() => void) | undefined;

  /** Counts `res` until it closes; `closed` runs as it does, before anyone waiting for the last one is told. */
  track(res: ServerResponse, closed: () => void): void {
    this.count++;
    res.once("close", () => {
      this.count--;
      closed();
      if (this.count === 0) this.drained?.();
    });
  }

  /** Resolves true once no request is in flight, or false after `waitMs`. */
  drain(waitMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), waitMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }
}

/**
 * Waits up to `graceMs` for the requests in flight; past it, runs `beforeCut` and gives what it ended CUT_ANSWER_MS
 * to answer. Resolves with the number of requests still open, which are to be cut.
 */
async function letRequestsFinish(
  requests: InFlightRequests,
  graceMs: number,
  beforeCut: (() => Promise<void>) | undefined,
): Promise<number> {
  if (await requests.drain(graceMs)) return 0;
  if (beforeCut) {
    await beforeCut();
    await requests.drain(CUT_ANSWER_MS);
  }
  return requests.count;
}

export async function listenGatewayServer(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  options: GatewayServerOptions,
): Promise<GatewayServer> {
  const requests = new InFlightRequests();
  let closing = false;

  const timeouts = serverTimeouts(options);
  // Before a token is checked, one address could otherwise fill every connection the server has.
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const caps = createAddressCaps({
    maxConnections,
    maxConnectionsPerAddress: options.maxConnectionsPerAddress ?? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
    maxPendingPerAddress: options.maxPendingPerAddress ?? DEFAULT_MAX_PENDING_PER_ADDRESS,
    exempt: options.exemptAddress,
  });
  const server = createServer(timeouts, (req, res) => {
    if (!caps.requested(req, res)) return;
    requests.track(res, () => {
      caps.answered(req);
      if (closing) server.closeIdleConnections();
    });
    // A kept-alive connection must not carry more requests into a stopping gateway.
    if (closing) res.setHeader("Connection", "close");
    handle(req, res);
  });

  // The caps hold the gateway to `maxConnections`, and answer or make room for a connection past it. node:http
  // closes a connection past its own cap without a word: it is set above, for the connections being refused.
  server.maxConnections = maxConnections + refusingRoom(maxConnections);
  server.on("connection", (socket) => caps.connected(socket));
  server.listen(options.port, options.host);
  // Rejects with the listen error (EADDRINUSE, EACCES) instead of waiting forever.
  await once(server, "listening");
  const address = server.address() as AddressInfo;

  return {
    host: address.address,
    port: address.port,
    get inFlight() {
      return requests.count;
    },
    setRequestTimeout(ms) {
      // Node reads it at each check of its connections: requests already under way get the new deadline too.
      server.requestTimeout = Math.max(ms, timeouts.headersTimeout);
    },
    async close(graceMs, beforeCut) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const cut = await letRequestsFinish(requests, graceMs, beforeCut);
      server.closeAllConnections();
      await closed;
      return cut;
    },
  };
}
