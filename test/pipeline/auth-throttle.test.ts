import { afterEach, describe, expect, it } from "vitest";
import type { HostLogger, LogFields } from "../../src/host/contract.js";
import { createHooksPlugin } from "../../src/index.js";
import { createFailureCounter } from "../../src/pipeline/credential-judge.js";
import { MemoryStore } from "../../src/store/memory.js";
import { startTestHost, type TestHost } from "../helpers/test-host.js";

const TOKEN = "auth-throttle-token-0123456789abcdef";
const quiet: HostLogger = { debug() {}, info() {}, warn() {}, error() {} };

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("the failure counter", () => {
  it("keeps the hook token's failures under auth-failures:<address> and a host credential's apart under <scope>-auth-failures:", async () => {
    const time = clock();
    const store = new MemoryStore(time);
    const deps = { store, clock: time, logger: quiet, limit: 1, windowMs: 60_000 };
    const hookToken = createFailureCounter(deps);
    const metricsToken = createFailureCounter({ ...deps, scope: "metrics" });
    expect(await metricsToken.failed("10.1.2.3")).toBeUndefined();
    time.advance(20_000);
    expect(await metricsToken.failed("10.1.2.3")).toBe(40);
    expect(await store.peek("metrics-auth-failures:10.1.2.3")).toMatchObject({ count: 2 });
    expect(await store.peek("auth-failures:10.1.2.3")).toBeUndefined();
    expect(await hookToken.throttled("10.1.2.3")).toBeUndefined();
    expect(await hookToken.failed("10.1.2.3")).toBeUndefined();
    expect(await store.peek("auth-failures:10.1.2.3")).toMatchObject({ count: 1 });
  });

  it("`throttled` answers the Retry-After of a client past the limit without counting, and `succeeded` clears it", async () => {
    const time = clock();
    const store = new MemoryStore(time);
    const failures = createFailureCounter({ store, clock: time, logger: quiet, limit: 1, windowMs: 10_000 });
    await failures.failed("10.1.2.3");
    expect(await failures.throttled("10.1.2.3")).toBeUndefined();
    await failures.failed("10.1.2.3");
    time.advance(2_500);
    expect(await failures.throttled("10.1.2.3")).toBe(8);
    expect(await failures.throttled("10.1.2.3")).toBe(8);
    expect(await store.peek("auth-failures:10.1.2.3")).toMatchObject({ count: 2 });
    expect(await failures.throttled("10.9.9.9")).toBeUndefined();
    failures.succeeded("10.1.2.3");
    await settled();
    expect(await failures.throttled("10.1.2.3")).toBeUndefined();
  });

  it("fails open when the store cannot count: no Retry-After, a warning naming the credential once a minute", async () => {
    const time = clock();
    const warnings: Array<{ message: string; fields?: LogFields | undefined }> = [];
    const down = async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:6379");
    };
    const failures = createFailureCounter({
      store: { ...new MemoryStore(time), increment: down, peek: down, reset: down } as unknown as MemoryStore,
      clock: time,
      logger: { ...quiet, warn: (message, fields) => void warnings.push({ message, fields }) },
      limit: 1,
      windowMs: 60_000,
      scope: "metrics",
    });
    for (let i = 0; i < 3; i++) expect(await failures.failed("10.1.2.3")).toBeUndefined();
    expect(await failures.throttled("10.1.2.3")).toBeUndefined();
    failures.succeeded("10.1.2.3");
    await settled();
    expect(warnings).toEqual([
      {
        message:
          "metrics auth failures cannot be counted right now (connect ECONNREFUSED 127.0.0.1:6379): failed requests get 401, none 429, until the store answers again",
        fields: undefined,
      },
    ]);
    time.advance(60_000);
    await failures.failed("10.1.2.3", "req-1");
    expect(warnings[1]?.fields).toEqual({ requestId: "req-1" });
  });
});

describe("plugin.authThrottle: a host credential's counter", () => {
  let host: TestHost | undefined;
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  const config = (hooks: Record<string, unknown>) => ({ hooks: { enabled: true, token: TOKEN, ...hooks } });

  it("counts with the limit and trusted proxies of the config in force, a reload's included", async () => {
    const time = clock();
    const store = new MemoryStore(time);
    const plugin = createHooksPlugin({ store, clock: time, metrics: false });
    expect(plugin.authThrottle("metrics")).toBeUndefined();
    host = await startTestHost(plugin, config({ authFailures: { limit: 2, windowSeconds: 60 } }), {
      stateDir: false,
    });
    const throttle = plugin.authThrottle("metrics")!;
    const forwarded = { "x-forwarded-for": "203.0.113.7" };
    const guesses = [];
    for (let i = 0; i < 3; i++) guesses.push(await throttle.failed("127.0.0.1", forwarded));
    expect(guesses).toEqual([undefined, undefined, 60]);
    expect(await store.peek("metrics-auth-failures:127.0.0.1")).toMatchObject({ count: 3 });

    const reload = await plugin.prepareReload(
      config({ trustedProxies: ["loopback"], authFailures: { limit: 1, windowSeconds: 30 } }),
    );
    expect(reload.issues).toEqual([]);
    reload.apply();
    // The counter handed out before the reload follows it: the forwarded client, the new limit and window.
    expect([
      await throttle.failed("127.0.0.1", forwarded),
      await throttle.failed("127.0.0.1", forwarded),
    ]).toEqual([undefined, 30]);
    expect(await store.peek("metrics-auth-failures:203.0.113.7")).toMatchObject({ count: 2 });
    throttle.succeeded("127.0.0.1", forwarded);
    await settled();
    expect(await store.peek("metrics-auth-failures:203.0.113.7")).toBeUndefined();
    expect(await store.peek("metrics-auth-failures:127.0.0.1")).toMatchObject({ count: 3 });
  });
});
