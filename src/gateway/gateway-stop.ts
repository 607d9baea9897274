/** @module Stops the reference gateway gracefully: no new work, in-flight requests and agent turns finished within the stop timeout, then everything else stopped in reverse. */
import type { ConfigReloader } from "./config-reload.js";
import type { Subsystems } from "./gateway-subsystems.js";
import type { GatewayServer } from "./http-server.js";
import type { InspectorServer } from "./inspector-server.js";
import type { GatewayLogger } from "./logger.js";
import type { PluginServices } from "./plugin-services.js";
import type { SessionSubsystem } from "./session-subsystem.js";

/** The parts of a running gateway that a stop ends. */
export interface RunningGateway {
  reloader: ConfigReloader | undefined;
  services: PluginServices;
  inspector: InspectorServer | undefined;
  server: GatewayServer;
  subsystems: Subsystems;
  logger: GatewayLogger;
  /** Whether the logger is the gateway's own (closed at the end) rather than its caller's (flushed). */
  ownLogger: boolean;
  /** How long the stop waits for in-flight requests and running turns before cutting them. */
  stopTimeoutMs: number;
}

export async function stopGateway(gateway: RunningGateway): Promise<void> {
  const { logger, server, stopTimeoutMs } = gateway;
  const { session } = gateway.subsystems;
  // A reload under way finishes first: it swaps a config, or leaves the running one, never half of either.
  await gateway.reloader?.close();
  const deadline = Date.now() + stopTimeoutMs;
  // No new work from here: agent turns waiting for a slot stay in the journal for the next start, instead of
  // starting as running ones end and being cut at the deadline.
  gateway.services.drain();
  await gateway.inspector?.close();
  logger.info("stopping: no new connections; finishing in-flight requests and agent turns", {
    requests: server.inFlight,
    turns: session.running,
  });
  // A request still open at the deadline may be waiting for its turn (waitForCompletion): the turns are
  // aborted first, so that caller is answered with the turn's end instead of a cut connection.
  const abortTurns = () => abortRunningTurns(session, logger);
  const cut = await server.close(stopTimeoutMs, abortTurns);
  if (cut > 0) logger.warn("stop deadline passed: in-flight requests were cut", { requests: cut });
  if (!(await session.idle(Math.max(0, deadline - Date.now())))) await abortTurns();
  await gateway.subsystems.stop();
  logger.info("stopped");
  await (gateway.ownLogger ? logger.close() : logger.flush());
}

/** The stop deadline has passed: the running agent turns are aborted. */
async function abortRunningTurns(session: SessionSubsystem, logger: GatewayLogger): Promise<void> {
  if (session.running > 0) {
    logger.warn("stop deadline passed: aborting running agent turns", { turns: session.running });
  }
  await session.stop();
}
