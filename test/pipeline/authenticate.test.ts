import { describe, expect, it } from "vitest";
import { isHookError } from "../../src/errors.js";
import type { HostLogger, LogFields } from "../../src/host/contract.js";
import { NO_METRICS } from "../../src/metrics/metrics.js";
import { createCredentialJudge, type Judged } from "../../src/pipeline/credential-judge.js";
import { createClientAddressResolver } from "../../src/pipeline/stages/admit.js";
import { MemoryStore } from "../../src/store/memory.js";
import { createSignatureVerifier } from "../../src/verify/signature-verifier.js";
import { createTokenVerifier } from "../../src/verify/token.js";
import { NEEDS_BODY, type Verifier } from "../../src/verify/verifier.js";

const TOKEN = "timing-test-token-0123456789abcdef";
const quiet: HostLogger = { debug() {}, info() {}, warn() {}, error() {} };

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

interface Attempt extends Judged {
  verifier: Verifier;
  query: URLSearchParams | undefined;
  rawBody?: Buffer;
}

/**
 * The authentication stage's use of a verifier and the judge, without the HTTP around it: `authenticate` judges the
 * verdict with the body (or without, on a token path), `acceptToken` what the headers alone carry before the body.
 */
function authenticator(time: ReturnType<typeof clock>, limit: number, windowMs: number, logger = quiet) {
  const judge = createCredentialJudge({ store: new MemoryStore(time), logger, clock: time, limit, windowMs });
  const view = (input: Attempt) => ({ headers: input.headers, query: input.query, now: time.now() });
  const who = (input: Attempt) => ({ ...input, kind: input.verifier.kind });
  const authenticate = async (input: Attempt) => {
    let verdict = await input.verifier.verify(view(input));
    if (verdict.needsBody)
      verdict = await input.verifier.verify(view(input), input.rawBody ?? Buffer.alloc(0));
    if (verdict.needsBody) throw new Error("asked for the body twice");
    const { viaQuery } = await judge.judge(verdict, who(input), input.rawBody ? "signature" : "token");
    return { viaQuery };
  };
  const acceptToken = async (input: Attempt) => {
    const verdict = await input.verifier.verify(view(input));
    if (!verdict.ok) return undefined;
    const { viaQuery } = await judge.judge(verdict, who(input), "token");
    return { viaQuery };
  };
  return Object.assign(authenticate, { acceptToken, refuseThrottled: judge.refuseThrottled });
}

const tokenVerifier = createTokenVerifier(TOKEN);
const attempt = (headers: Record<string, string>, query?: URLSearchParams, client = "10.1.2.3"): Attempt => ({
  kind: tokenVerifier.kind,
  verifier: tokenVerifier,
  hook: "wake",
  headers,
  query,
  client,
  requestId: "r",
});

async function statusOf(promise: Promise<unknown>): Promise<number | Record<string, string> | undefined> {
  try {
    await promise;
    return 200;
  } catch (error) {
    return isHookError(error) ? error.status : undefined;
  }
}

describe("authentication: failure window, throttling and the query token (time-driven)", () => {
  it("forgets failures once the window has passed, per address", async () => {
    const time = clock();
    const authenticate = authenticator(time, 2, 60_000);
    const wrong = () => statusOf(authenticate(attempt({ authorization: "Bearer nope" })));
    expect([await wrong(), await wrong(), await wrong()]).toEqual([401, 401, 429]);
    time.advance(30_000);
    expect(await wrong()).toBe(429);
    time.advance(30_001);
    expect(await wrong()).toBe(401);
    expect(
      await statusOf(authenticate(attempt({ authorization: "Bearer nope" }, undefined, "10.9.9.9"))),
    ).toBe(401);
  });

  it("a correct token is accepted even when throttled, and clears the address's failures", async () => {
    const time = clock();
    const authenticate = authenticator(time, 1, 60_000);
    const wrong = () => statusOf(authenticate(attempt({ authorization: "Bearer nope" })));
    expect([await wrong(), await wrong()]).toEqual([401, 429]);
    expect(await statusOf(authenticate(attempt({ authorization: `Bearer ${TOKEN}` })))).toBe(200);
    expect(await wrong()).toBe(401);
  });

  it("warns about the query token at most once a minute, and again after", async () => {
    const time = clock();
    const warnings: Array<{ message: string; fields?: LogFields }> = [];
    const logger: HostLogger = {
      ...quiet,
      warn: (message, fields) => void warnings.push(fields ? { message, fields } : { message }),
    };
    const authenticate = authenticator(time, 20, 60_000, logger);
    const viaQuery = () => authenticate(attempt({}, new URLSearchParams({ token: TOKEN })));
    expect(await viaQuery()).toEqual({ viaQuery: true });
    time.advance(59_000);
    await viaQuery();
    expect(warnings).toHaveLength(1);
    time.advance(1_000);
    await viaQuery();
    expect(warnings).toHaveLength(2);
    expect(JSON.stringify(warnings)).not.toContain(TOKEN);
  });

  it("throws typed errors: 401 with WWW-Authenticate, then 429 with Retry-After counting down", async () => {
    const time = clock();
    const authenticate = authenticator(time, 1, 10_000);
    const failure = async () => {
      try {
        await authenticate(attempt({ authorization: "Bearer nope" }));
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const first = await failure();
    expect(isHookError(first) && first.headers).toEqual({ "WWW-Authenticate": 'Bearer realm="hooks"' });
    time.advance(4_000);
    const second = await failure();
    expect(isHookError(second) && second.headers).toEqual({ "Retry-After": "6" });
  });

  it("says what to send instead when the caller used Basic credentials", async () => {
    const authenticate = authenticator(clock(), 20, 60_000);
    const basic = Buffer.from(`user:${TOKEN}`).toString("base64");
    await expect(authenticate(attempt({ authorization: `Basic ${basic}` }))).rejects.toThrow(
      /Basic credentials are not accepted; send the hook token as Authorization: Bearer/,
    );
  });
});

describe("a signed path that takes the token too: the token is judged before the body", () => {
  const signedPath = (tokenAlso: boolean) =>
    createSignatureVerifier(
      { settings: { scheme: "github", secrets: ["gh-secret"], toleranceSeconds: 300 }, tokenAlso },
      TOKEN,
    );
  const signedAttempt = (tokenAlso: boolean, headers: Record<string, string>) => ({
    ...attempt(headers),
    verifier: signedPath(tokenAlso),
  });
  const badSignature = { "x-hub-signature-256": `sha256=${"0".repeat(64)}` };

  it("accepts the correct token from an address over the failure limit, and clears its failures", async () => {
    const time = clock();
    const authenticate = authenticator(time, 1, 60_000);
    const wrong = () =>
      statusOf(authenticate({ ...signedAttempt(true, badSignature), rawBody: Buffer.from("{}") }));
    expect([await wrong(), await wrong()]).toEqual([401, 429]);
    await expect(authenticate.refuseThrottled(signedAttempt(true, {}))).rejects.toThrow(/Too many failed/);
    expect(
      await authenticate.acceptToken(
        signedAttempt(true, { authorization: `Bearer ${TOKEN}`, ...badSignature }),
      ),
    ).toEqual({ viaQuery: false });
    expect(await authenticate.acceptToken(signedAttempt(true, { "x-service-token": TOKEN }))).toEqual({
      viaQuery: false,
    });
    await new Promise((resolve) => setImmediate(resolve));
    await expect(authenticate.refuseThrottled(signedAttempt(true, {}))).resolves.toBeUndefined();
  });

  it("leaves the verdict to the body when the token is wrong or absent, counting nothing", async () => {
    const time = clock();
    const authenticate = authenticator(time, 1, 60_000);
    for (let i = 0; i < 3; i++) {
      expect(
        await authenticate.acceptToken(signedAttempt(true, { authorization: "Bearer nope" })),
      ).toBeUndefined();
    }
    expect(await authenticate.acceptToken(signedAttempt(true, badSignature))).toBeUndefined();
    await expect(authenticate.refuseThrottled(signedAttempt(true, {}))).resolves.toBeUndefined();
  });

  it("asks the verifier without the body first, and its answer then is the token's alone", async () => {
    const asked: string[] = [];
    const verifier: Verifier = {
      kind: "custom",
      signsBody: true,
      async verify(request, rawBody) {
        asked.push(rawBody === undefined ? "headers" : "body");
        if (rawBody !== undefined) return { ok: false, message: "no" };
        return request.headers.authorization === "Bearer custom" ? { ok: true, viaQuery: false } : NEEDS_BODY;
      },
    };
    const authenticate = authenticator(clock(), 1, 60_000);
    const carrying = (authorization: string) => ({ ...attempt({ authorization }), verifier });
    expect(await authenticate.acceptToken(carrying("Bearer custom"))).toEqual({ viaQuery: false });
    expect(await authenticate.acceptToken(carrying("Bearer other"))).toBeUndefined();
    expect(asked).toEqual(["headers", "headers"]);
  });

  it("does not take the token on a path that accepts only signatures", async () => {
    const authenticate = authenticator(clock(), 1, 60_000);
    expect(
      await authenticate.acceptToken(signedAttempt(false, { authorization: `Bearer ${TOKEN}` })),
    ).toBeUndefined();
  });
});

describe("client address behind trusted proxies", () => {
  it.each([
    [["10.0.0.0/8"], "10.1.2.3", "203.0.113.7, 10.0.0.5", "203.0.113.7"],
    [["loopback"], "127.0.0.1", "198.51.100.4", "198.51.100.4"],
    [["loopback"], "::ffff:127.0.0.1", "198.51.100.4", "198.51.100.4"],
    [["192.168.1.1"], "10.1.2.3", "198.51.100.4", "10.1.2.3"],
    [[], "10.1.2.3", "198.51.100.4", "10.1.2.3"],
  ])("trusting %j, peer %s, X-Forwarded-For %s → %s", (trusted, peer, forwarded, client) => {
    const resolve = createClientAddressResolver(trusted);
    expect(resolve(peer, { "x-forwarded-for": forwarded })).toBe(client);
  });
});

describe("authentication: a store that cannot count fails open", () => {
  it("answers 401, never 429, warns once a minute and counts the store's failures", async () => {
    const time = clock();
    const warnings: string[] = [];
    const failures: string[] = [];
    const down = async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:6379");
    };
    const judge = createCredentialJudge({
      store: { ...new MemoryStore(time), increment: down, reset: down } as unknown as MemoryStore,
      logger: { ...quiet, warn: (message: string) => void warnings.push(message) },
      clock: time,
      limit: 2,
      windowMs: 60_000,
      metrics: { ...NO_METRICS, storeFailure: (operation) => void failures.push(operation) },
    });
    const authenticate = async (input: Attempt) => {
      const verdict = await input.verifier.verify({ headers: input.headers, query: input.query });
      if (verdict.needsBody) throw new Error("a token path never needs the body");
      return judge.judge(verdict, { ...input, kind: input.verifier.kind }, "token");
    };
    const statuses = [];
    for (let i = 0; i < 10; i++)
      statuses.push(await statusOf(authenticate(attempt({ authorization: "Bearer nope" }))));
    expect(statuses).toEqual(Array(10).fill(401));
    // A correct token still gets in; its clearing fails too, and is counted.
    expect(await statusOf(authenticate(attempt({ authorization: `Bearer ${TOKEN}` })))).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
    expect(failures).toEqual([...Array(10).fill("count"), "reset"]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("auth failures cannot be counted right now (connect ECONNREFUSED");
    time.advance(60_001);
    await statusOf(authenticate(attempt({ authorization: "Bearer nope" })));
    expect(warnings).toHaveLength(2);
  });
});
