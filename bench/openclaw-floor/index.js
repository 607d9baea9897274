/** @module The floor inside OpenClaw: a plugin route that reads the body, checks the token, parses and queues one system event. */
import { createTokenCheck, send } from "../lib/lean-http.mjs";

const MAX_BYTES = 262_144;

function register(api) {
  // Discovery and inspection loads only describe the plugin; routes are served from the gateway's full load.
  if (api.registrationMode !== undefined && api.registrationMode !== "full") return;
  const { token, path = "/floor" } = api.pluginConfig ?? {};
  // The token check of the baselines (bench/lib/lean-http.mjs): constant time, nothing hashed per request.
  const tokenMatches = createTokenCheck(token);
  // What was queued and refused, so the bench can check after a run that the answers were real (GET <path>/count).
  let queued = 0;
  let refused = 0;
  let sequence = 0;

  api.registerHttpRoute({
    path: `${path}/wake`,
    match: "exact",
    auth: "plugin",
    handler(req, res) {
      const header = req.headers.authorization ?? "";
      if (req.method !== "POST" || !tokenMatches(header.startsWith("Bearer ") ? header.slice(7) : "")) {
        send(res, req.method === "POST" ? 401 : 405, { ok: false });
        return true;
      }
      const chunks = [];
      let size = 0;
      // Settles when the answer is out: OpenClaw keeps the request's scope until the returned promise settles.
      return new Promise((resolve) => {
        req.on("data", (chunk) => {
          size += chunk.length;
          if (size > MAX_BYTES) req.destroy();
          else chunks.push(chunk);
        });
        req.on("error", () => resolve(true));
        req.on("end", () => {
          let body;
          try {
            body = JSON.parse(Buffer.concat(chunks, size).toString("utf8"));
          } catch {
            send(res, 400, { ok: false });
            return resolve(true);
          }
          const text = typeof body?.text === "string" ? body.text.trim() : "";
          if (text === "") {
            send(res, 400, { ok: false });
            return resolve(true);
          }
          // OpenClaw drops an event equal to the last one queued: the bench sends one body, so a counter makes each
          // text new and every request really queues an event (the plugin's own /wake queues one per request too).
          // The main agent's main session, named as the plugin's wakes name it: a plain key with the agent beside it
          // (without agentId OpenClaw resolves the owner from its config on each call, which costs more).
          const options = { sessionKey: "main", agentId: "main" };
          if (api.runtime.system.enqueueSystemEvent(`${text} (${++sequence})`, options)) queued++;
          else refused++;
          send(res, 200, { ok: true });
          resolve(true);
        });
      });
    },
  });
  api.registerHttpRoute({
    path: `${path}/count`,
    match: "exact",
    auth: "plugin",
    handler(_req, res) {
      send(res, 200, { queued, refused });
      return true;
    },
  });
}

export default { id: "bench-floor", name: "Bench floor", register };
