/** @module The gateway's node:http server: listens, counts in-flight requests, stops without cutting them off. */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface GatewayServer {
  readonly host: string;
  readonly port: number;
  /** Requests received and not yet answered. */
  readonly inFlight: number;
  /**
   * Refuses new connections at once, lets in-flight requests finish for up to `graceMs`, then cuts what is
   * left. Resolves with the number of requests that had to be cut.
   */
  close(graceMs: number): Promise<number>;
}

export async function listenGatewayServer(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  options: { host: string; port: number },
): Promise<GatewayServer> {
  let inFlight = 0;
  let closing = false;
  let drained: (() => void) | undefined;

  const server = createServer((req, res) => {
    inFlight++;
    // A kept-alive connection must not carry more requests into a stopping gateway.
    if (closing) res.setHeader("Connection", "close");
    res.once("close", () => {
      inFlight--;
      if (closing) server.closeIdleConnections();
      if (inFlight === 0) drained?.();
    });
    handle(req, res);
  });

  server.listen(options.port, options.host);
  // Rejects with the listen error (EADDRINUSE, EACCES) instead of waiting forever.
  await once(server, "listening");
  const address = server.address() as AddressInfo;

  return {
    host: address.address,
    port: address.port,
    get inFlight() {
      return inFlight;
    },
    async close(graceMs) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let cut = 0;
      if (inFlight > 0) {
        const finished = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), graceMs);
          drained = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        if (!finished) cut = inFlight;
      }
      server.closeAllConnections();
      await closed;
      return cut;
    },
  };
}
