/** @module Item "held waiters": 1,024 waitForCompletion callers on a runner that never answers, while /wake from another address is sent 20 times. Usage: node waiters.mjs [root] [callers] */
import http from "node:http";
import { post, startServer, TOKEN, wakeFromOther } from "./lib.mjs";

const root = process.argv[2] || new URL("../..", import.meta.url).pathname;
const CALLERS = Number(process.argv[3] ?? 1024);
const held = [];
const stub = http.createServer((_req, res) => {
  held.push(res);
});
await new Promise((r) => stub.listen(0, "127.0.0.1", r));
const server = await startServer(root, {
  hooks: { enabled: true, token: TOKEN },
  runner: { kind: "openai", baseUrl: `http://127.0.0.1:${stub.address().port}/v1`, model: "m" },
});
const body = JSON.stringify({ message: "hold", waitForCompletion: true, timeoutSeconds: 40 });
const outcomes = {};
Array.from({ length: CALLERS }, () =>
  post(`${server.url}/hooks/agent`, body, { authorization: `Bearer ${TOKEN}` }, "127.0.0.1").then((r) => {
    const k = r.status || r.error;
    outcomes[k] = (outcomes[k] ?? 0) + 1;
  }),
);
await new Promise((r) => setTimeout(r, 2000));
const legit = { ok: 0, other: {} };
const lat = [];
for (let i = 0; i < 20; i++) {
  const r = await wakeFromOther(server.url);
  if (r.status === 200) {
    legit.ok++;
    lat.push(r.ms);
  } else {
    const k = r.status || r.error;
    legit.other[k] = (legit.other[k] ?? 0) + 1;
  }
}
console.log(
  JSON.stringify({
    callers: CALLERS,
    heldAtRunner: held.length,
    legitOf20: legit,
    maxMs: Math.max(...lat, 0).toFixed(0),
    callerOutcomesSoFar: outcomes,
  }),
);
await server.stop();
for (const r of held) r.destroy();
stub.close();
process.exit(0);
