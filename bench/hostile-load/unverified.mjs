/** @module Item "unverified bodies": sockets streaming 30 MiB each to a signed path with a raised limit (peak RSS from /proc), then a throttled address. Usage: node unverified.mjs [root] [sockets] [MiB] */
import net from "node:net";
import { post, startServer, status, TOKEN } from "./lib.mjs";

const root = process.argv[2] || new URL("../..", import.meta.url).pathname;
const SOCKETS = Number(process.argv[3] ?? 100);
const MB = Number(process.argv[4] ?? 30);
const server = await startServer(root, {
  hooks: {
    enabled: true,
    token: TOKEN,
    authFailures: { limit: 5, windowSeconds: 60 },
    mappings: [
      {
        id: "gh",
        match: { path: "github" },
        action: "wake",
        textTemplate: "x",
        maxBodyBytes: 33554432,
        verify: { scheme: "github", secret: "attack-secret" },
      },
    ],
  },
});
const u = new URL(server.url);
const pid = server.pid;
const size = MB * 1024 * 1024;
const chunk = Buffer.alloc(1024 * 1024, 97);
const started = performance.now();
const outcomes = {};
let peak = 0;
const sampler = setInterval(() => {
  try {
    peak = Math.max(peak, status(pid).rssMb);
  } catch {}
}, 50);
await Promise.all(
  Array.from(
    { length: SOCKETS },
    (_, i) =>
      new Promise((resolve) => {
        const s = net.connect({
          port: Number(u.port),
          host: "127.0.0.1",
          localAddress: `127.0.${1 + (i % 200)}.${10 + Math.floor(i / 200)}`,
        });
        let data = "";
        s.on("error", () => {});
        s.on("data", (c) => (data += c));
        s.on("connect", async () => {
          s.write(
            `POST /hooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Hub-Signature-256: sha256=${"0".repeat(64)}\r\nContent-Length: ${size}\r\n\r\n`,
          );
          let sent = 0;
          const pump = () => {
            while (sent < size) {
              sent += chunk.length;
              if (!s.write(chunk)) return s.once("drain", pump);
            }
          };
          pump();
        });
        s.once("close", () => {
          const st = /HTTP\/1.1 (\d+)/.exec(data)?.[1] ?? "reset";
          outcomes[st] = (outcomes[st] ?? 0) + 1;
          resolve();
        });
      }),
  ),
);
clearInterval(sampler);
const elapsed = ((performance.now() - started) / 1000).toFixed(1);
console.log(
  JSON.stringify({
    sockets: SOCKETS,
    mbEach: MB,
    outcomes,
    elapsedS: elapsed,
    peakRssMb: Math.round(peak),
    hwmMb: Math.round(status(pid).hwmMb),
  }),
);
// A throttled address: 6 bad small requests, then one declaring 1 MiB and sending nothing.
for (let i = 0; i < 6; i++)
  await post(`${server.url}/hooks/github`, "{}", { "x-hub-signature-256": "sha256=00" }, "127.9.9.9");
const t0 = performance.now();
const r = await new Promise((resolve) => {
  const s = net.connect({ port: Number(u.port), host: "127.0.0.1", localAddress: "127.9.9.9" });
  let data = "";
  s.on("data", (c) => {
    data += c;
    if (data.includes("\r\n\r\n")) {
      resolve(data.split("\r\n")[0]);
      s.destroy();
    }
  });
  s.on("error", () => {});
  s.write(
    `POST /hooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Hub-Signature-256: sha256=00\r\nContent-Length: 1048576\r\n\r\n`,
  );
  setTimeout(() => {
    resolve("no answer within 5 s (body awaited)");
    s.destroy();
  }, 5000);
});
console.log(JSON.stringify({ throttled: r, ms: Math.round(performance.now() - t0) }));
await server.stop();
process.exit(0);
