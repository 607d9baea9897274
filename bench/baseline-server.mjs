/** @module The baseline: the least any intake must do (read the body, check a bearer token in constant time, parse JSON, answer JSON). */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const token = process.env.BENCH_BASELINE_TOKEN;
if (!token) {
  process.stderr.write("baseline: BENCH_BASELINE_TOKEN is not set\n");
  process.exit(2);
}
const maxBytes = Number(process.env.BENCH_BASELINE_MAX_BYTES ?? 262_144);
// Hashing both sides makes the comparison independent of either length, as the intake does.
const expected = createHash("sha256").update(token).digest();

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

const server = createServer((req, res) => {
  if (req.method !== "POST") return send(res, 405, { ok: false });
  const header = req.headers.authorization ?? "";
  const presented = header.startsWith("Bearer ") ? header.slice(7) : "";
  if (!timingSafeEqual(createHash("sha256").update(presented).digest(), expected)) {
    return send(res, 401, { ok: false });
  }
  if (Number(req.headers["content-length"] ?? 0) > maxBytes) {
    res.shouldKeepAlive = false;
    return send(res, 413, { ok: false });
  }
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > maxBytes) {
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on("end", () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks, size).toString("utf8"));
    } catch {
      return send(res, 400, { ok: false });
    }
    send(res, 200, { ok: true, keys: body && typeof body === "object" ? Object.keys(body).length : 0 });
  });
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`baseline listening on http://127.0.0.1:${server.address().port}\n`);
});
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
