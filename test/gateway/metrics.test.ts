/** @module `GET /metrics` of the reference gateway: a scripted mix of requests, scraped and parsed, counts equal to what was sent. */
import { sign as githubSign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it } from "vitest";
import { isConfigError } from "../../src/config/issues.js";
import { silentGatewayLogger } from "../../src/gateway/logger.js";
import { type GatewayHandle, startGateway } from "../../src/gateway/start-gateway.js";
import { createHooksPlugin, type HooksPlugin } from "../../src/index.js";
import { cleanupCli, makeTempDir, startServe } from "../helpers/cli.js";
import { parseMetrics, type Scrape, samplesOf, sampleValue } from "../helpers/prometheus-text.js";
import { AUTH, baseConfig, postJson, writeConfig } from "./support.js";

const METRICS_TOKEN = "metrics-test-token-9f8e7d6c5b4a";
const SECRET = "github-webhook-secret-for-metrics";

afterEach(cleanupCli);

/** `null`: no Authorization header at all. */
async function scrape(url: string, token: string | null = METRICS_TOKEN) {
  const response = await fetch(`${url}/metrics`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function scraped(url: string): Promise<Scrape> {
  const response = await scrape(url);
  expect(response.status).toBe(200);
  return parseMetrics(response.text);
}

/** Scrapes until `ready` holds for the parsed scrape (turns end a moment after their request's answer). */
async function scrapeUntil(
  url: string,
  ready: (scrape: Scrape) => boolean,
  waitMs = 10_000,
): Promise<Scrape> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const now = await scraped(url);
    if (ready(now) || Date.now() > deadline) return now;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function post(url: string, body: string, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

describe("hooks serve: GET /metrics after a scripted mix", () => {
  it("counts exactly what was sent, by hook, mapping, status and reason", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        { server: { metricsToken: "${METRICS_TOKEN}" } },
        {
          authFailures: { limit: 5, windowSeconds: 600 },
          mappings: [
            { id: "gh-push", match: { path: "github/push" }, action: "wake", textTemplate: "{{ref}}" },
            {
              id: "gh-signed",
              match: { path: "github" },
              action: "wake",
              textTemplate: "signed {{ref}}",
              verify: { scheme: "github", secret: SECRET },
            },
          ],
        },
      ),
    );
    const gateway = await startServe(["--config", config, "--state-dir", `${dir}/state`], {
      env: { METRICS_TOKEN },
    });
    const hooks = `${gateway.url}/hooks`;
    const wakeBody = JSON.stringify({ text: "backup finished" });
    const N = 7;
    const M = 3;
    const K = 4;

    for (let i = 0; i < N; i++) expect(await post(`${hooks}/wake`, wakeBody, AUTH)).toBe(200);
    for (let i = 0; i < M; i++)
      expect(await post(`${hooks}/agent`, JSON.stringify({ message: `turn ${i}` }), AUTH)).toBe(202);
    for (let i = 0; i < K; i++)
      expect(await post(`${hooks}/github/push`, JSON.stringify({ ref: `refs/heads/b${i}` }), AUTH)).toBe(200);
    // Paths nobody configured: one series (`other`), however many there are.
    for (const name of ["nope", "scan/wp-admin", "x1y2z3"])
      expect(await post(`${hooks}/${name}`, wakeBody, AUTH)).toBe(404);
    // The same delivery twice: the second is answered with the first's answer.
    const keyed = { ...AUTH, "idempotency-key": "metrics-delivery-1" };
    expect(await post(`${hooks}/wake`, wakeBody, keyed)).toBe(200);
    expect(await post(`${hooks}/wake`, wakeBody, keyed)).toBe(200);
    const signedBody = JSON.stringify({ ref: "refs/heads/main" });
    const signature = await githubSign(SECRET, signedBody);
    expect(await post(`${hooks}/github`, signedBody, { "x-hub-signature-256": signature })).toBe(200);
    // Five refusals (the limit), then a sixth that is throttled.
    expect(await post(`${hooks}/wake`, wakeBody, { authorization: "Bearer wrong-token" })).toBe(401);
    expect(await post(`${hooks}/wake`, wakeBody, { "x-service-token": "also-wrong" })).toBe(401);
    expect(await post(`${hooks}/wake`, wakeBody, {})).toBe(401);
    const forged = await githubSign("not-the-secret", signedBody);
    expect(await post(`${hooks}/github`, signedBody, { "x-hub-signature-256": forged })).toBe(401);
    expect(await post(`${hooks}/github`, signedBody, {})).toBe(401);
    expect(await post(`${hooks}/wake`, wakeBody, { authorization: "Bearer wrong-token" })).toBe(429);

    // Turns end on their own (the echo runner), and then every admitted record is done.
    const metrics = await scrapeUntil(
      gateway.url,
      (now) =>
        sampleValue(now, "hooks_agent_turns_total", { outcome: "ok" }) === M &&
        sampleValue(now, "hooks_journal_unfinished_records", {}) === 0 &&
        // The last done lines go out with a batch of their own, synced a moment after the records finish.
        sampleValue(now, "hooks_journal_unsynced_lines", {}) === 0,
    );
    expect(sampleValue(metrics, "hooks_agent_turns_total", { outcome: "ok" })).toBe(M);

    expect(metrics.types.get("hooks_requests_total")).toBe("COUNTER");
    expect(metrics.types.get("hooks_request_duration_seconds")).toBe("HISTOGRAM");
    const byLabels = samplesOf(metrics, "hooks_requests_total")
      .map(({ labels, value }) => `${labels.hook} ${labels.mapping} ${labels.status} = ${value}`)
      .sort();
    expect(byLabels).toEqual(
      [
        `agent  202 = ${M}`,
        "github  401 = 2",
        "github gh-signed 200 = 1",
        `github/push gh-push 200 = ${K}`,
        "other  404 = 3",
        `wake  200 = ${N + 2}`,
        "wake  401 = 3",
        "wake  429 = 1",
      ].sort(),
    );
    const wakes = N + 2 + 3 + 1;
    expect(sampleValue(metrics, "hooks_request_duration_seconds_count", { hook: "wake" })).toBe(wakes);
    expect(sampleValue(metrics, "hooks_request_duration_seconds_count", { hook: "other" })).toBe(3);
    expect(sampleValue(metrics, "hooks_request_body_bytes_count", { hook: "github/push" })).toBe(K);
    // Refused before the body: only the accepted wakes and the duplicate read theirs.
    expect(sampleValue(metrics, "hooks_request_body_bytes_sum", { hook: "wake" })).toBe(
      (N + 2) * Buffer.byteLength(wakeBody),
    );
    expect(sampleValue(metrics, "hooks_auth_failures_total", { reason: "invalid" })).toBe(3);
    expect(sampleValue(metrics, "hooks_auth_failures_total", { reason: "missing" })).toBe(2);
    expect(sampleValue(metrics, "hooks_auth_failures_total", { reason: "throttled" })).toBe(1);
    expect(samplesOf(metrics, "hooks_signature_failures_total")).toEqual(
      expect.arrayContaining([
        { labels: { scheme: "github", reason: "mismatch" }, value: 1 },
        { labels: { scheme: "github", reason: "missing" }, value: 1 },
      ]),
    );
    expect(samplesOf(metrics, "hooks_signature_failures_total")).toHaveLength(2);
    expect(samplesOf(metrics, "hooks_duplicates_total")).toEqual([{ labels: { hook: "wake" }, value: 1 }]);
    expect(sampleValue(metrics, "hooks_agent_turns_in_flight", {})).toBe(0);
    // Every admitted request waited on a journal fsync (several may share one).
    expect(sampleValue(metrics, "hooks_journal_fsync_seconds_count", {})).toBeGreaterThan(0);
    expect(sampleValue(metrics, "hooks_journal_unsynced_lines", {})).toBe(0);
    expect(sampleValue(metrics, "hooks_journal_unfinished_records", {})).toBe(0);
    // The gateway's own process metrics are served beside the plugin's.
    expect(metrics.types.get("process_cpu_user_seconds_total")).toBe("COUNTER");
    expect(metrics.types.get("nodejs_eventloop_lag_seconds")).toBe("GAUGE");
    // No label value anywhere came from a path or a payload.
    expect(JSON.stringify([...metrics.samples.values()])).not.toMatch(/nope|wp-admin|x1y2z3|refs\/heads/);

    // The token guards the endpoint and is never written to the log.
    const missing = await scrape(gateway.url, null);
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(JSON.parse(missing.text)).toMatchObject({ ok: false, code: "UNAUTHORIZED" });
    expect((await scrape(gateway.url, "wrong")).status).toBe(401);
    expect((await scrape(gateway.url, `${METRICS_TOKEN}x`)).status).toBe(401);
    const ok = await scrape(gateway.url);
    expect(ok.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(gateway.stdout() + gateway.stderr()).not.toContain(METRICS_TOKEN);
  });
});

describe("hooks serve: guessing the metrics token", () => {
  it("counts wrong metrics tokens per address like wrong hook tokens: 429 with Retry-After past the limit, a right one still served and clearing the count", async () => {
    const dir = makeTempDir();
    const config = writeConfig(
      dir,
      baseConfig(
        { server: { metricsToken: "${METRICS_TOKEN}" } },
        { authFailures: { limit: 3, windowSeconds: 600 } },
      ),
    );
    const gateway = await startServe(["--config", config, "--state-dir", `${dir}/state`], {
      env: { METRICS_TOKEN },
    });
    const guesses = [];
    for (let i = 0; i < 20; i++) guesses.push(await scrape(gateway.url, `guess-${i}`));
    expect(guesses.map((guess) => guess.status)).toEqual([401, 401, 401, ...Array(17).fill(429)]);
    const throttled = guesses.at(-1)!;
    expect(JSON.parse(throttled.text)).toMatchObject({ ok: false, code: "AUTH_THROTTLED" });
    const retryAfter = Number(throttled.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(590);
    expect(retryAfter).toBeLessThanOrEqual(600);
    // Counted apart from the hook token: the same address's hook requests are not throttled by it.
    expect(await post(`${gateway.url}/hooks/wake`, "{}", { authorization: "Bearer wrong" })).toBe(401);
    // The right token is served even now, and clears the count.
    expect((await scrape(gateway.url)).status).toBe(200);
    expect((await scrape(gateway.url, "guess-again")).status).toBe(401);
    expect(gateway.stdout() + gateway.stderr()).not.toContain(METRICS_TOKEN);
  });
});

describe("startGateway: the metrics endpoint's settings", () => {
  let handle: GatewayHandle | undefined;
  afterEach(async () => {
    await handle?.close();
    handle = undefined;
  });

  async function start(config: Record<string, unknown>, plugin?: HooksPlugin) {
    const dir = makeTempDir();
    handle = await startGateway({
      config,
      configDir: dir,
      port: 0,
      stateDir: `${dir}/state`,
      logger: silentGatewayLogger,
      ...(plugin ? { plugin } : {}),
    });
    return handle;
  }

  it("serves without a token when none is set, answers GET and HEAD only, and only at /metrics", async () => {
    const plugin = createHooksPlugin();
    const gateway = await start(baseConfig(), plugin);
    expect(gateway.metricsUrl).toBe(`${gateway.url}/metrics`);
    expect((await postJson(`${gateway.url}/hooks/wake`, { text: "x" }, AUTH)).status).toBe(200);
    const open = await scrape(gateway.url, null);
    expect(open.status).toBe(200);
    expect(
      sampleValue(parseMetrics(open.text), "hooks_requests_total", {
        hook: "wake",
        mapping: "",
        status: "200",
      }),
    ).toBe(1);
    expect((await fetch(gateway.metricsUrl!, { method: "HEAD" })).status).toBe(200);
    const posted = await fetch(gateway.metricsUrl!, { method: "POST" });
    expect(posted.status).toBe(405);
    expect(posted.headers.get("allow")).toBe("GET, HEAD");
    expect((await fetch(`${gateway.url}/metrics/more`)).status).toBe(404);
    // The registry the gateway serves is the plugin's own, for any host to expose.
    const registry = plugin.metrics();
    expect(registry).toBeDefined();
    expect(await registry!.metrics()).toContain(
      'hooks_requests_total{hook="wake",mapping="",status="200"} 1',
    );
  });

  it("server.metrics false: no endpoint, and the plugin counts nothing", async () => {
    const gateway = await start(baseConfig({ server: { metrics: false } }));
    expect(gateway.metricsUrl).toBeUndefined();
    expect((await scrape(gateway.url, null)).status).toBe(404);
    const defaults = createHooksPlugin({ metrics: false });
    await handle!.close();
    await start(baseConfig(), defaults);
    expect(defaults.metrics()).toBeUndefined();
    // The endpoint is still there (process metrics), without any hooks_ series.
    const served = await scrape(handle!.url, null);
    expect(served.status).toBe(200);
    expect(served.text).not.toContain("hooks_");
  });

  it("refuses hooks.path /metrics while the gateway serves its metrics there", async () => {
    const error = await start(baseConfig({}, { path: "/metrics" })).catch((thrown: unknown) => thrown);
    expect(isConfigError(error)).toBe(true);
    expect((error as { issues: Array<{ path: string }> }).issues.map((issue) => issue.path)).toContain(
      "hooks.path",
    );
  });
});
