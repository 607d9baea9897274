/**
 * @module The load generator's own process (pinned to the client's core): one autocannon run against a server,
 * the server's CPU time read from /proc over exactly that run, the result as one JSON line on stdout.
 */
import { randomUUID } from "node:crypto";
import autocannon from "autocannon";
import { readCpuMs, ticksPerSecond } from "./proc.mjs";

function percentile(samples, fraction) {
  if (samples.length === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

const spec = JSON.parse(process.argv[2]);
// Latencies are kept as floats from every response: autocannon's own histogram is whole milliseconds.
const latencies = [];
const statuses = {};
ticksPerSecond();
// The window opens as autocannon starts its connections and its duration timer (both within this call).
const serverBefore = readCpuMs(spec.serverPid);
// `alsoPids` (optional): other processes whose CPU over the same window is wanted (a service the server calls).
const alsoPids = spec.alsoPids ?? [];
const alsoBefore = alsoPids.map((pid) => readCpuMs(pid));
const clientBefore = process.cpuUsage();
const started = performance.now();
// Headers named in `uniqueHeaders` get a fresh UUID on every request (delivery ids, idempotency keys): autocannon
// then builds each request anew from the same headers and body, instead of sending one prebuilt buffer.
const unique = spec.uniqueHeaders ?? [];
function setupRequest(request) {
  // `request.headers` is a copy autocannon makes for each build: setting it touches no other request.
  for (const name of unique) request.headers[name] = randomUUID();
  return request;
}
// `sequence` (optional): requests each connection sends in turn, over and over (a mixed load), each with its
// own path, headers and body.
const sequence = spec.sequence?.map((request) => ({
  method: "POST",
  path: request.path,
  headers: request.headers,
  body: request.body,
  ...(unique.length > 0 ? { setupRequest } : {}),
}));
const instance = autocannon({
  url: spec.url,
  method: "POST",
  headers: spec.headers,
  body: spec.body,
  connections: spec.connections,
  duration: spec.seconds,
  // A fixed rate over all connections (the long run's steady load); unset, as fast as the server answers.
  ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
  ...(sequence ? { requests: sequence } : unique.length > 0 ? { requests: [{ setupRequest }] } : {}),
});
instance.on("response", (_client, statusCode, _bytes, responseTime) => {
  statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
  latencies.push(responseTime);
});
const result = await instance;
const elapsedSeconds = (performance.now() - started) / 1000;
const serverAfter = readCpuMs(spec.serverPid);
const alsoAfter = alsoPids.map((pid) => readCpuMs(pid));
const client = process.cpuUsage(clientBefore);

process.stdout.write(
  `${JSON.stringify({
    requests: latencies.length,
    elapsedSeconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    serverCpuMs: serverBefore === undefined || serverAfter === undefined ? null : serverAfter - serverBefore,
    clientCpuMs: (client.user + client.system) / 1000,
    ...(alsoPids.length > 0
      ? {
          alsoCpuMs: alsoPids.map((_, i) =>
            alsoBefore[i] === undefined || alsoAfter[i] === undefined ? null : alsoAfter[i] - alsoBefore[i],
          ),
        }
      : {}),
  })}\n`,
);
