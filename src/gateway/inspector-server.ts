/** @module The reference gateway's inspector: the plugin's inspector page on a port of its own, logged in with a key made for each start. */
import { createInspectorHandler, type HookPlugin, type HostLogger, type InspectorSource } from "../index.js";
import type { GatewaySections } from "./gateway-config.js";
import { listenGatewayServer } from "./http-server.js";
import { credentialThrottleOf } from "./metrics-endpoint.js";
import { sendGatewayError } from "./router.js";

export const INSPECTOR_PATH = "/inspector";

export interface InspectorServer {
  /** `http://127.0.0.1:PORT/inspector`, without the key. */
  url: string;
  port: number;
  /** The key the page logs in with (`server.inspector.key`, else made for this start). */
  key: string;
  /** Whether the key was made for this start (then `hooks serve` prints it in the link). */
  generatedKey: boolean;
  close(): Promise<void>;
}

/** The plugin's inspector, when it is one that has one (a `createHooksPlugin` instance). */
function inspectorOf(plugin: HookPlugin): InspectorSource | undefined {
  return "inspector" in plugin && typeof plugin.inspector === "function"
    ? (plugin.inspector() as InspectorSource | undefined)
    : undefined;
}

export async function startInspectorServer(options: {
  plugin: HookPlugin;
  sections: GatewaySections;
  /** The key its page logs in with: `server.inspector.key`, or one made for this start. */
  key: string;
  /** The port to bind (the config's, or 0 when the gateway took any free port). */
  port: number;
  clientUrl(host: string, port: number): string;
  logger: HostLogger;
}): Promise<InspectorServer> {
  const { plugin, sections, key } = options;
  const handler = createInspectorHandler({
    source: () => inspectorOf(plugin),
    auth: { kind: "session", key },
    basePath: INSPECTOR_PATH,
    // Wrong keys count as wrong metrics tokens do, in a scope of their own.
    throttle: () => credentialThrottleOf(plugin, "inspector"),
  });
  const server = await listenGatewayServer(
    (req, res) => {
      void handler(req, res).then(
        (handled) => {
          if (handled) return;
          if ((req.url ?? "/") === "/") {
            res.statusCode = 302;
            res.setHeader("Location", INSPECTOR_PATH);
            res.end();
            return;
          }
          sendGatewayError(res, 404, "NOT_FOUND", "Nothing is served at this path.");
        },
        (error: unknown) => {
          // A request the handler could not answer costs that request only, never the gateway.
          options.logger.error(
            `inspector request failed: ${error instanceof Error ? error.message : String(error)}`,
          );
          if (!res.headersSent)
            sendGatewayError(res, 500, "INTERNAL", "The inspector could not answer this request.");
          else res.destroy();
        },
      );
    },
    {
      host: sections.server.inspector.host,
      port: options.port,
      headersTimeoutMs: sections.server.headersTimeoutMs,
    },
  );
  return {
    url: `${options.clientUrl(server.host, server.port)}${INSPECTOR_PATH}`,
    port: server.port,
    key,
    generatedKey: sections.server.inspector.key === undefined,
    async close() {
      await server.close(1_000);
    },
  };
}
