/** @module Item "slow headers": 1,100 slow-header sockets from 127.0.0.1 (reopened when closed) while /wake from 127.0.0.2 is sent every 100 ms. Usage: node slow-headers.mjs [root] [sockets] [seconds] */
import net from "node:net";
import { startServer, TOKEN, wakeFromOther } from "./lib.mjs";

const root = process.argv[2] || new URL("../..", import.meta.url).pathname;
const SOCKETS = Number(process.argv[3] ?? 1100);
const SECONDS = Number(process.argv[4] ?? 20);
const server = await startServer(root, { hooks: { enabled: true, token: TOKEN } });
const u = new URL(server.url);
let stop = false;
let opened = 0;
function open() {
  if (stop) return;
  const s = net.connect({ port: Number(u.port), host: "127.0.0.1" });
  opened++;
  s.on("error", () => {});
  s.on("connect", () => {
    s.write("POST /hooks/wake HTTP/1.1\r\nHost: x\r\n");
    const t = setInterval(() => s.write("X-A: b\r\n"), 1000);
    s.once("close", () => clearInterval(t));
  });
  s.once("close", () => setTimeout(open, 10));
}
for (let i = 0; i < SOCKETS; i++) open();
await new Promise((r) => setTimeout(r, 1000));
const results = { ok: 0, other: {}, errors: {} };
const end = Date.now() + SECONDS * 1000;
const lat = [];
while (Date.now() < end) {
  const r = await wakeFromOther(server.url);
  if (r.status === 200) {
    results.ok++;
    lat.push(r.ms);
  } else if (r.status) results.other[r.status] = (results.other[r.status] ?? 0) + 1;
  else results.errors[r.error] = (results.errors[r.error] ?? 0) + 1;
  await new Promise((res) => setTimeout(res, 100));
}
stop = true;
lat.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    sockets: SOCKETS,
    seconds: SECONDS,
    attackerConnects: opened,
    ...results,
    p50: lat[Math.floor(lat.length / 2)]?.toFixed(1),
    max: lat.at(-1)?.toFixed(1),
  }),
);
await server.stop();
process.exit(0);
