/** @module Item "one large body": a 30 MB wake, agent or mapped body while a prober sends /wake every 10 ms (its worst latency) and another GETs /metrics (no journal: its worst latency is the longest the event loop was held), and the journal's growth. PROF=<dir> adds --cpu-prof. Usage: node bigbody.mjs [root] [wake|agent|mapped] [MB] */
import { execSync } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { post, startServer, TOKEN, wakeFromOther } from "./lib.mjs";

const root = process.argv[2] || new URL("../..", import.meta.url).pathname;
const kind = process.argv[3] ?? "agent";
const MB = Number(process.argv[4] ?? 30);
const nodeArgs = process.env.PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.PROF}`] : [];
const server = await startServer(
  root,
  {
    hooks: {
      enabled: true,
      token: TOKEN,
      maxBodyBytes: 33554432,
      mappings: [
        {
          id: "big",
          match: { path: "big" },
          action: "agent",
          messageTemplate: "New item: {{text}}",
          deliver: false,
        },
      ],
    },
  },
  { nodeArgs },
);
const journalDir = path.join(server.dir, "state", "hooks-journal");
const du = () => Number(execSync(`du -sb ${journalDir} 2>/dev/null || echo 0`).toString().split(/\s/)[0]);
await post(`${server.url}/hooks/wake`, JSON.stringify({ text: "warm", mode: "next-heartbeat" }), {
  authorization: `Bearer ${TOKEN}`,
});
const before = du();
const text = "a".repeat(MB * 1024 * 1024 - 100);
const payload =
  kind === "wake"
    ? JSON.stringify({ text, mode: "next-heartbeat" })
    : kind === "agent"
      ? JSON.stringify({ message: text, deliver: false })
      : JSON.stringify({ text });
const hookPath = kind === "mapped" ? "big" : kind;
let probing = true;
const lat = [];
const prober = (async () => {
  while (probing) {
    const r = await wakeFromOther(server.url, "p");
    lat.push(r.ms);
    await new Promise((res) => setTimeout(res, 10));
  }
})();
/** GET /metrics: answered on the loop without the journal, so its latency is how long the loop could not answer. */
const getMetrics = () =>
  new Promise((resolve) => {
    const started = performance.now();
    http
      .get(`${server.url}/metrics`, { agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve(performance.now() - started));
      })
      .on("error", () => resolve(performance.now() - started));
  });
const loop = [];
const looper = (async () => {
  while (probing) {
    loop.push(await getMetrics());
    await new Promise((res) => setTimeout(res, 10));
  }
})();
await new Promise((r) => setTimeout(r, 200));
const big = await post(`${server.url}/hooks/${hookPath}`, payload, { authorization: `Bearer ${TOKEN}` });
await new Promise((r) => setTimeout(r, 1500));
probing = false;
await prober;
await looper;
const after = du();
console.log(
  JSON.stringify({
    kind,
    mb: MB,
    status: big.status,
    bigMs: Math.round(big.ms),
    probeMaxMs: Math.round(Math.max(...lat)),
    probes: lat.length,
    loopMaxMs: Math.round(Math.max(...loop)),
    journalGrowthMb: ((after - before) / 1048576).toFixed(1),
  }),
);
await server.stop();
process.exit(0);
