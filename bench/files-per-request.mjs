/**
 * @module Counts the plugin's source files one warm `/wake` runs: the built plugin on the bench's minimal host (in
 * this process), V8's precise coverage reset after a warm-up, then taken around exactly one request. Prints the count
 * and the files, by their path under dist/ (which mirrors src/).
 *
 * Usage: `npm run build && node bench/files-per-request.mjs [--list]`; BENCH_PLUGIN picks another built entry.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { EventEmitter } from "eventemitter3";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const entry = process.env.BENCH_PLUGIN ?? path.join(ROOT, "dist", "index.js");
const distDir = path.dirname(entry);
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });

const { createHooksPlugin } = await import(pathToFileURL(entry).href);
const token = "files-per-request-token-0123456789";
const stateDir = mkdtempSync(path.join(tmpdir(), "hooks-files-"));
const routes = [];
const services = [];
const quiet = () => {};
createHooksPlugin().register({
  config: { hooks: { enabled: true, token, path: "/hooks", journal: { fsync: "batch" } } },
  configDir: stateDir,
  logger: {
    debug: quiet,
    info: quiet,
    warn: quiet,
    error: (message) => process.stderr.write(`${message}\n`),
  },
  bus: new EventEmitter(),
  stateDir,
  registerHttpRoute: (route) => routes.push(route),
  registerService: (service) => services.push(service),
});
for (const service of services) await service.start();
const server = createServer((req, res) => void routes[0].handler(req, res));
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address();
const agent = new (await import("node:http")).Agent({ keepAlive: true });

function wake() {
  const body = JSON.stringify({ text: "hi", mode: "next-heartbeat" });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        port,
        host: "127.0.0.1",
        method: "POST",
        path: "/hooks/wake",
        agent,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

for (let i = 0; i < 200; i++) await wake();
// Let the journal's batch of the warm-up finish, then reset the counts.
await new Promise((resolve) => setTimeout(resolve, 200));
await session.post("Profiler.takePreciseCoverage");
await wake();
await new Promise((resolve) => setTimeout(resolve, 50));
const { result } = await session.post("Profiler.takePreciseCoverage");
const ran = result
  .filter((script) => script.url.startsWith(pathToFileURL(distDir).href))
  .filter((script) => script.functions.some((fn) => fn.ranges.some((range) => range.count > 0)))
  .map((script) => path.relative(distDir, fileURLToPath(script.url)))
  .sort();
process.stdout.write(`plugin source files run by one warm /wake: ${ran.length}\n`);
if (process.argv.includes("--list")) for (const file of ran) process.stdout.write(`  ${file}\n`);
server.close();
agent.destroy();
for (const service of services) await service.stop();
rmSync(stateDir, { recursive: true, force: true });
