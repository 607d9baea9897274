/**
 * @module A minimal host for the plugin, for the bench only: the built plugin (`createHooksPlugin` from
 * dist/index.js) on a plain node:http server, with what the host contract (src/host/contract.ts) asks for and
 * nothing more: the config, a quiet logger, a bus whose listeners only count events, a state directory (so the
 * request journal is on, `fsync: "batch"`), the route and the service it registers. What the plugin itself costs
 * per request, without a gateway's subsystems (session queue, state database, access log).
 *
 * Environment: BENCH_MINIMAL_TOKEN (the hook token, required), BENCH_MINIMAL_STATE_DIR (required; the journal
 * goes to `<dir>/hooks-journal`), BENCH_MINIMAL_PLUGIN (the built entry, default this checkout's dist/index.js).
 * Prints `minimal host listening on http://127.0.0.1:<port>` when ready; on SIGTERM stops the service (the
 * journal drains and closes) and prints `{"msg":"minimal host closed","events":{<name>:<count>},"journal":{..}}`
 * (the fields of the journal's `journal closed` log line: its fsyncs and durable lines since the start).
 */
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { EventEmitter } from "eventemitter3";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const token = process.env.BENCH_MINIMAL_TOKEN;
const stateDir = process.env.BENCH_MINIMAL_STATE_DIR;
if (!token || !stateDir) {
  process.stderr.write("minimal host: BENCH_MINIMAL_TOKEN and BENCH_MINIMAL_STATE_DIR are required\n");
  process.exit(2);
}
const entry = process.env.BENCH_MINIMAL_PLUGIN ?? path.join(ROOT, "dist", "index.js");
const { createHooksPlugin } = await import(pathToFileURL(entry).href);

const EVENTS = [
  "session:system-event",
  "session:agent-turn",
  "session:agent-turn-finished",
  "heartbeat:request",
  "delivery:send",
  "hooks:request",
];
const counts = Object.fromEntries(EVENTS.map((name) => [name, 0]));
const bus = new EventEmitter();
for (const name of EVENTS) bus.on(name, () => counts[name]++);

const quiet = () => {};
/** The journal's counters (fsyncs, durable lines), from the one info line it logs when it closes. */
let journalClosed;
const routes = [];
const services = [];
mkdirSync(stateDir, { recursive: true });
const host = {
  config: { hooks: { enabled: true, token, path: "/hooks", journal: { fsync: "batch" } } },
  configDir: stateDir,
  logger: {
    debug: quiet,
    info: (message, fields) => {
      if (message === "journal closed") journalClosed = fields;
    },
    warn: quiet,
    error: (message) => process.stderr.write(`${message}\n`),
  },
  bus,
  stateDir,
  registerHttpRoute: (route) => routes.push(route),
  registerService: (service) => services.push(service),
};
createHooksPlugin().register(host);
for (const service of services) await service.start();

function notFound(res) {
  res.writeHead(404, { "Content-Type": "text/plain", "Content-Length": 8 });
  res.end("no route");
}

const server = createServer((req, res) => {
  const url = req.url ?? "/";
  const query = url.indexOf("?");
  const pathname = query === -1 ? url : url.slice(0, query);
  const route = routes.find((r) => pathname === r.path || pathname.startsWith(`${r.path}/`));
  if (!route) return notFound(res);
  route.handler(req, res).then(
    (handled) => {
      if (!handled && !res.headersSent) notFound(res);
    },
    (error) => {
      process.stderr.write(`minimal host: handler failed: ${error?.message ?? error}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    },
  );
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`minimal host listening on http://127.0.0.1:${server.address().port}\n`);
});

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  for (const service of services.reverse()) await service.stop();
  process.stdout.write(
    `${JSON.stringify({ msg: "minimal host closed", events: counts, journal: journalClosed })}\n`,
  );
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
