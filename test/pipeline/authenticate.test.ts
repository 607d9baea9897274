import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import type { HostLogger, LogFields } from "../../src/host/contract.js";
import { AuthFailureLimiter } from "../../src/http/auth-failures.js";
import { createAuthenticator } from "../../src/http/authenticate.js";
import { isHookError } from "../../src/http/errors.js";

const TOKEN = "timing-test-token-0123456789abcdef";

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const request = (headers: Record<string, string>) =>
  ({ headers, socket: { remoteAddress: "10.1.2.3" } }) as unknown as IncomingMessage;

describe("auth failure window and query-token warning (time-driven)", () => {
  it("forgets failures once the window has passed", () => {
    const time = clock();
    const limiter = new AuthFailureLimiter(2, 60_000, time.now);
    expect(limiter.recordFailure("a").throttled).toBe(false);
    expect(limiter.recordFailure("a").throttled).toBe(false);
    const third = limiter.recordFailure("a");
    expect(third).toEqual({ throttled: true, retryAfterSeconds: 60 });
    time.advance(30_000);
    expect(limiter.recordFailure("a")).toEqual({ throttled: true, retryAfterSeconds: 30 });
    time.advance(30_001);
    expect(limiter.recordFailure("a").throttled).toBe(false);
    expect(limiter.recordFailure("b").throttled).toBe(false);
  });

  it("warns about the query token at most once a minute, and again after", () => {
    const time = clock();
    const warnings: Array<{ message: string; fields?: LogFields }> = [];
    const logger: HostLogger = {
      debug() {},
      info() {},
      error() {},
      warn: (message, fields) => void warnings.push(fields ? { message, fields } : { message }),
    };
    const authenticate = createAuthenticator({
      token: TOKEN,
      limiter: new AuthFailureLimiter(20, 60_000, time.now),
      clientAddress: () => "10.1.2.3",
      logger,
      now: time.now,
    });
    const viaQuery = () => authenticate(request({}), new URLSearchParams({ token: TOKEN }), "r");
    expect(viaQuery()).toEqual({ viaQuery: true });
    time.advance(59_000);
    viaQuery();
    expect(warnings).toHaveLength(1);
    time.advance(1_000);
    viaQuery();
    expect(warnings).toHaveLength(2);
    expect(JSON.stringify(warnings)).not.toContain(TOKEN);
  });

  it("throws typed errors: 401 with WWW-Authenticate, then 429 with Retry-After", () => {
    const time = clock();
    const authenticate = createAuthenticator({
      token: TOKEN,
      limiter: new AuthFailureLimiter(1, 10_000, time.now),
      clientAddress: () => "10.1.2.3",
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      now: time.now,
    });
    const attempt = () => {
      try {
        authenticate(request({ authorization: "Bearer nope" }), undefined, "r");
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const first = attempt();
    expect(isHookError(first) && first.status).toBe(401);
    const second = attempt();
    expect(isHookError(second) && second.headers).toEqual({ "Retry-After": "10" });
  });
});
