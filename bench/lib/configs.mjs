/** @module Gateway configs and request bodies the scenarios use, generated into the bench's temp dir. */
import { createHmac, randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./processes.mjs";

export const HOOKS_PATH = "/hooks";
/** Long enough that no periodic heartbeat lands inside a run; requested ones (wake, finished turns) still happen. */
export const HEARTBEAT_SECONDS = 86_400;
/** The fixtures' transforms: github-push.ts is the TypeScript transform the mapped scenario runs. */
export const TRANSFORMS_DIR = path.join(ROOT, "fixtures", "transforms");
export const PUSH_PAYLOAD = readFileSync(
  path.join(ROOT, "fixtures", "payloads", "github", "push.json"),
  "utf8",
);

/** The template mapping of the demo config (`github/push`, a wake with four expressions). */
export const TEMPLATE_MAPPING = {
  id: "github-push",
  match: { path: "github/push" },
  action: "wake",
  textTemplate:
    "{{pusher.name}} pushed {{commits.length}} commit(s) to {{repository.full_name}}: {{head_commit.message}}",
};

/** github-push.ts: a typed TypeScript transform loaded with jiti, returning an agent action. */
export const TRANSFORM_MAPPING = {
  id: "github-push-ts",
  match: { path: "github/push-ts" },
  action: "agent",
  transform: { module: "github-push.ts" },
};

/**
 * The template mapping behind GitHub's own signature: `/hooks/github`, a push by its
 * `X-GitHub-Event` header, `X-Hub-Signature-256` over the raw body instead of the token, `X-GitHub-Delivery` as
 * the delivery id. The same text template as TEMPLATE_MAPPING, so the two differ only by what signing adds.
 */
export function signedGithubMapping(secret) {
  return {
    id: "github-signed",
    match: { path: "github", headers: { "x-github-event": "push" } },
    action: "wake",
    textTemplate: TEMPLATE_MAPPING.textTemplate,
    verify: { scheme: "github", secret },
  };
}

export function newToken() {
  return randomBytes(32).toString("base64url");
}

/** What the gateway's in-memory store keeps by default (`hooks.dedupe.maxEntries`; MAX_DELIVERIES in src/store/memory.ts). */
export const DEFAULT_MAX_DELIVERIES = 100_000;
/** A bound no bench run reaches: delivery ids claimed below the store's bound however long the run. */
export const UNREACHED_MAX_DELIVERIES = 100_000_000;
/** The secret of the signed mapping, new for each bench process like the token. */
export const SIGNING_SECRET = randomBytes(32).toString("base64url");

function gatewayConfig(token, mappings, hooks = {}, gateway = {}) {
  return {
    hooks: { enabled: true, token, transformsDir: TRANSFORMS_DIR, mappings, ...hooks },
    session: { mainKey: "main", lastRoute: { channel: "telegram", to: "@bench" } },
    heartbeat: { everySeconds: HEARTBEAT_SECONDS },
    runner: { kind: "echo" },
    ...gateway,
  };
}

function write(dir, name, config) {
  const file = path.join(dir, name);
  // JSON is JSON5; `hooks serve` reads it as it reads any gateway config.
  writeFileSync(file, `${JSON.stringify(config, null, 1)}\n`);
  return file;
}

/** The config of the wake/agent/template/transform scenarios, start-up and idle RSS: both mappings. */
export function writeBenchConfig(dir, token) {
  return write(dir, "gateway.json5", gatewayConfig(token, [TEMPLATE_MAPPING, TRANSFORM_MAPPING]));
}

/**
 * The bench config plus the GitHub-signed mapping, its delivery ids kept below the store's bound (what the bound
 * costs is wake-idempotency's). A config of its own: a build from before sender verification refuses the `verify`
 * and `dedupe` keys, and compare.mjs must still start such a build with the bench config.
 */
export function writeSignedConfig(dir, token, secret = SIGNING_SECRET) {
  return write(
    dir,
    "gateway-signed.json5",
    gatewayConfig(token, [TEMPLATE_MAPPING, TRANSFORM_MAPPING, signedGithubMapping(secret)], {
      dedupe: { maxEntries: UNREACHED_MAX_DELIVERIES },
    }),
  );
}

/** The bench config with `hooks.dedupe.maxEntries` set: how many delivery ids the in-memory store keeps. */
export function writeDedupeConfig(dir, token, maxEntries) {
  return write(
    dir,
    `gateway-dedupe-${maxEntries}.json5`,
    gatewayConfig(token, [TEMPLATE_MAPPING, TRANSFORM_MAPPING], { dedupe: { maxEntries } }),
  );
}

/**
 * The bench config with `hooks.journal` set (`{ fsync: "off" }`, `{ enabled: false }`, ...). Without the key the
 * bench config runs the journal's defaults (`hooks serve`: on, `fsync: "batch"`, in the state directory).
 */
export function writeJournalConfig(dir, token, journal, name = journalVariantName(journal)) {
  return write(
    dir,
    `gateway-journal-${name}.json5`,
    gatewayConfig(token, [TEMPLATE_MAPPING, TRANSFORM_MAPPING], { journal }),
  );
}

/**
 * The bench config with the gateway's `server.metrics` set: `true` (the default: the plugin counts every request
 * in its prom-client registry, `GET /metrics` serves it) or `false` (nothing counted, nothing served).
 */
export function writeMetricsConfig(dir, token, metrics) {
  return write(
    dir,
    `gateway-metrics-${metrics ? "on" : "off"}.json5`,
    gatewayConfig(token, [TEMPLATE_MAPPING, TRANSFORM_MAPPING], {}, { server: { metrics } }),
  );
}

/**
 * The bench config with `hooks.store` set (`{ kind: "redis", url, keyPrefix }`, or `{ kind: "memory" }`) and the
 * delivery ids below the in-memory store's bound (`hooks.dedupe.maxEntries` UNREACHED_MAX_DELIVERIES, which also
 * bounds what the journal remembers), so the stores differ by nothing else. A build from before the Redis store
 * refuses the `store` key.
 */
export function writeStoreConfig(dir, token, store, name) {
  return write(
    dir,
    `gateway-store-${name}.json5`,
    gatewayConfig(token, [TEMPLATE_MAPPING, TRANSFORM_MAPPING], {
      store,
      dedupe: { maxEntries: UNREACHED_MAX_DELIVERIES },
    }),
  );
}

/** "batch", "always", "off" or "disabled": what a `hooks.journal` setting is called in rows and file names. */
export function journalVariantName(journal) {
  return journal.enabled === false ? "disabled" : (journal.fsync ?? "batch");
}

/**
 * The long-run config: retention short enough to act several times within minutes (the journal's
 * `retainHours`, the database's `state.retainDays`), a rotated log file, a heartbeat every `heartbeatSeconds`.
 */
export function writeLongRunConfig(dir, token, { retainHours, retainDays, logFile, heartbeatSeconds }) {
  return write(
    dir,
    "gateway-long-run.json5",
    gatewayConfig(
      token,
      [TEMPLATE_MAPPING, TRANSFORM_MAPPING],
      { journal: { retainHours } },
      {
        heartbeat: { everySeconds: heartbeatSeconds },
        state: { retainDays },
        log: { file: logFile, maxSizeMb: 1, keep: 2 },
      },
    ),
  );
}

/**
 * The transform mapping alone, with `transform.isolate` set: `"worker"` (the default, the pool of worker threads)
 * or `"inline"` (the gateway's own thread). A build from before transform isolation refuses the key.
 */
export function writeTransformIsolateConfig(dir, token, isolate) {
  const mapping = { ...TRANSFORM_MAPPING, transform: { ...TRANSFORM_MAPPING.transform, isolate } };
  return write(dir, `gateway-transform-${isolate}.json5`, gatewayConfig(token, [mapping]));
}

/** `count` mappings: `count - 1` fillers with their own paths and templates, the template mapping last. */
export function writeManyMappingsConfig(dir, token, count) {
  const mappings = [];
  for (let i = 0; i < count - 1; i++) {
    mappings.push({
      id: `filler-${i}`,
      match: { path: `bench/filler-${i}` },
      action: i % 2 === 0 ? "wake" : "agent",
      [i % 2 === 0 ? "textTemplate" : "messageTemplate"]:
        `filler ${i}: {{repository.full_name}} {{head_commit.message}}`,
    });
  }
  mappings.push(TEMPLATE_MAPPING);
  return write(dir, `gateway-${count}-mappings.json5`, gatewayConfig(token, mappings));
}

export function jsonRequest(token, pathBelowHooks, body) {
  return {
    path: `${HOOKS_PATH}/${pathBelowHooks}`,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body,
  };
}

/**
 * A push as GitHub sends it to the signed mapping: no token, `X-Hub-Signature-256` over the exact body, and a new
 * `X-GitHub-Delivery` UUID on every request (each one a first delivery, never a replay).
 */
export function githubSignedRequest(body, secret = SIGNING_SECRET) {
  return {
    path: `${HOOKS_PATH}/github`,
    headers: {
      "content-type": "application/json",
      "x-github-event": "push",
      "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    },
    body,
    uniqueHeaders: ["x-github-delivery"],
  };
}

/** The same request with the bearer token too: what the bare baseline, which knows no signatures, checks. */
export function withToken(request, token) {
  return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
}

/** The bench's wake body: a short text for the next heartbeat (no heartbeat requested per request). */
export const WAKE_BODY = JSON.stringify({ text: "hi", mode: "next-heartbeat" });
export const AGENT_BODY = JSON.stringify({
  message: "Summarise the nightly build: 3 failures in the integration suite, 1 flaky test quarantined.",
  name: "Bench",
});

/**
 * A wake body as large as the push payload (its text, with `text` and `mode` first; the wake schema drops the
 * other keys): the direct path with the template scenario's parsing and reading.
 */
export const WAKE_PUSH_SIZED_BODY = PUSH_PAYLOAD.replace(
  /^\{/,
  '{\n  "text": "Codertocat pushed 1 commit(s) to Codertocat/Hello-World: Initial commit",\n  "mode": "now",',
);
const push = JSON.parse(PUSH_PAYLOAD);
/** Only what the template mapping reads: the mapping's own work without the large body. */
export const PUSH_FIELDS_BODY = JSON.stringify({
  pusher: { name: push.pusher.name },
  commits: push.commits.map(() => ({})),
  repository: { full_name: push.repository.full_name },
  head_commit: { message: push.head_commit.message },
});

/**
 * The requests compare.mjs, profile.mjs and template-cost.mjs send, by name; `caseRequest` and `caseConfig` give
 * a case's request and config. `signed`: GitHub-signed, to the signed mapping's config. `uniqueHeaders`: headers
 * new on every request. `maxDeliveries`: the store's bound in the config. `leadRequests`: at least this many
 * requests before the measured run. `journal`: the config's `hooks.journal` (the other cases run its default,
 * `fsync: "batch"`). `isolate`: the transform mapping's `transform.isolate`. `metrics`: the gateway's
 * `server.metrics`; `scrape`: one `GET /metrics` before the load (see `scrapeMetrics`).
 */
export const CASES = {
  wake: { hook: "wake", body: WAKE_BODY, status: 200 },
  agent: { hook: "agent", body: AGENT_BODY, status: 202 },
  "mapped-template": { hook: "github/push", body: PUSH_PAYLOAD, status: 200 },
  "mapped-transform": { hook: "github/push-ts", body: PUSH_PAYLOAD, status: 202 },
  "wake-push-sized": { hook: "wake", body: WAKE_PUSH_SIZED_BODY, status: 200 },
  "mapped-template-small": { hook: "github/push", body: PUSH_FIELDS_BODY, status: 200 },
  "signed-github": { hook: "github", body: PUSH_PAYLOAD, status: 200, signed: true },
  "wake-idempotency": {
    hook: "wake",
    body: WAKE_BODY,
    status: 200,
    uniqueHeaders: ["idempotency-key"],
    maxDeliveries: UNREACHED_MAX_DELIVERIES,
  },
  // The default store, full: every new key lands past its bound.
  "wake-idempotency-full": {
    hook: "wake",
    body: WAKE_BODY,
    status: 200,
    uniqueHeaders: ["idempotency-key"],
    leadRequests: DEFAULT_MAX_DELIVERIES,
  },
  // /wake with the journal's other settings (`wake` itself runs the default, `fsync: "batch"`).
  "wake-journal-always": { hook: "wake", body: WAKE_BODY, status: 200, journal: { fsync: "always" } },
  "wake-journal-off": { hook: "wake", body: WAKE_BODY, status: 200, journal: { fsync: "off" } },
  "wake-journal-disabled": { hook: "wake", body: WAKE_BODY, status: 200, journal: { enabled: false } },
  // The transform mapping alone with `transform.isolate` set (`mapped-transform` runs the bench config's, the
  // default "worker").
  "mapped-transform-worker": { hook: "github/push-ts", body: PUSH_PAYLOAD, status: 202, isolate: "worker" },
  "mapped-transform-inline": { hook: "github/push-ts", body: PUSH_PAYLOAD, status: 202, isolate: "inline" },
  // /wake with `server.metrics` set; `scrape`: GET /metrics once before the load (the process metrics start then).
  "wake-metrics-on": { hook: "wake", body: WAKE_BODY, status: 200, metrics: true, scrape: true },
  "wake-metrics-off": { hook: "wake", body: WAKE_BODY, status: 200, metrics: false },
  // /wake with the Redis store (`redis`: the caller starts a redis-server and passes its URL to `caseConfig`;
  // profile.mjs does), without and with a new Idempotency-Key on every request; and the memory store's config
  // of the same shape.
  "wake-redis": { hook: "wake", body: WAKE_BODY, status: 200, redis: true },
  "wake-redis-idempotency": {
    hook: "wake",
    body: WAKE_BODY,
    status: 200,
    uniqueHeaders: ["idempotency-key"],
    redis: true,
  },
  "wake-memory-store": { hook: "wake", body: WAKE_BODY, status: 200, store: { kind: "memory" } },
};

export function caseRequest(spec, token) {
  if (spec.signed) return githubSignedRequest(spec.body);
  const request = jsonRequest(token, spec.hook, spec.body);
  return spec.uniqueHeaders ? { ...request, uniqueHeaders: spec.uniqueHeaders } : request;
}

/**
 * The bench config (`defaultFile`); the signed mapping's for a signed case; with `maxDeliveries`, that bound;
 * with `journal`, that journal setting; with `isolate`, the transform mapping alone run that way; with `metrics`,
 * that `server.metrics`; with `redis`, the Redis store at `options.redisUrl` (a server the caller started); with
 * `store`, that store.
 */
export function caseConfig(spec, dir, token, defaultFile, options = {}) {
  if (spec.redis) {
    if (!options.redisUrl) {
      throw new Error(
        "this case needs a redis-server: bench/profile.mjs starts one (bench/lib/redis-server.mjs); compare.mjs does not",
      );
    }
    return writeStoreConfig(
      dir,
      token,
      { kind: "redis", url: options.redisUrl, keyPrefix: "bench:" },
      "redis",
    );
  }
  if (spec.store) return writeStoreConfig(dir, token, spec.store, spec.store.kind);
  if (spec.signed) return writeSignedConfig(dir, token);
  if (spec.maxDeliveries) return writeDedupeConfig(dir, token, spec.maxDeliveries);
  if (spec.journal) return writeJournalConfig(dir, token, spec.journal);
  if (spec.isolate) return writeTransformIsolateConfig(dir, token, spec.isolate);
  if (spec.metrics !== undefined) return writeMetricsConfig(dir, token, spec.metrics);
  return defaultFile;
}

/**
 * One `GET /metrics`, as Prometheus would send: the first scrape starts the process metrics (the event-loop
 * monitor, the GC observer), which then run under the load as they would in production.
 */
export async function scrapeMetrics(server) {
  const response = await fetch(`${server.url}/metrics`);
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${server.label}: GET /metrics answered ${response.status}`);
}
