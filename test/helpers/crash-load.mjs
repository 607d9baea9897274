/**
 * @module A load generator in a process of its own, for the crash test: posts wakes and agent turns to a gateway
 * with a few connections until the gateway dies or the process is told to stop, and prints one JSON line per 2xx
 * answer (`{ kind, requestId, eventId | runId }`) the moment it arrives.
 *
 * Usage: node crash-load.mjs <base url> <hooks path> <token> <concurrency>
 */
const [base, hooksPath, token, concurrencyText] = process.argv.slice(2);
const concurrency = Number(concurrencyText ?? 8);
let stopping = false;
let sent = 0;
process.on("SIGTERM", () => {
  stopping = true;
});

async function one(worker) {
  const n = sent++;
  const agent = n % 3 === 0;
  const body = agent
    ? { message: `turn ${worker}-${n}`, name: `Job ${n}`, wakeMode: "next-heartbeat" }
    : { text: `wake ${worker}-${n}`, mode: n % 10 === 1 ? "now" : "next-heartbeat" };
  const response = await fetch(`${base}${hooksPath}/${agent ? "agent" : "wake"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (response.status >= 200 && response.status < 300) {
    const requestId = response.headers.get("x-request-id");
    const line = agent
      ? { kind: "agent", requestId, runId: answer.runId }
      : { kind: "wake", requestId, eventId: answer.eventId };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
}

async function worker(id) {
  while (!stopping) {
    try {
      await one(id);
    } catch {
      // The gateway went away (the test killed it): this worker is done.
      return;
    }
  }
}

await Promise.all(Array.from({ length: concurrency }, (_, id) => worker(id)));
