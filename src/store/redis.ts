/** @module The Redis Store (ioredis): auth-failure counters, delivery claims and first answers shared by every gateway on one server and prefix. */
import { randomUUID } from "node:crypto";
import type { Redis, RedisOptions } from "ioredis";
import { type Clock, systemClock } from "../clock.js";
import type { HostLogger } from "../host/contract.js";
import { KeptDeliveries, type KeptDelivery } from "./kept-deliveries.js";
import { MAX_DELIVERIES } from "./memory.js";
import { OldestFirst } from "./oldest-first.js";
import { EVICTION_FIX, judgeEvictionPolicy } from "./redis-policy.js";
import { CHECK_MS, defineRefillScripts, GENERATION_KEY, Refill, type RefillScripts } from "./redis-refill.js";
import { describeRedisUrl } from "./redis-url.js";
import type {
  ClaimTimes,
  CounterWindow,
  DeliveryClaim,
  RememberedAnswer,
  Store,
  StoredResponse,
} from "./store.js";

export interface RedisStoreSettings {
  /** `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS. Never logged: it may hold a password. */
  url: string;
  /** Put before every key, so that several deployments (or other users of the server) can share it. */
  keyPrefix: string;
  /** A command not answered within this fails: the request is then handled as if the server were down. */
  timeoutMs: number;
  logger: HostLogger;
  /** Where counter windows and the journal's remaining windows are read against (default: the system clock). */
  clock?: Clock;
  /** How long a duplicate waits between looks at an unanswered claim (the first look is at once). */
  pollMs?: { first: number; max: number };
  /** The most delivery ids kept to put back into a server that lost them (`hooks.dedupe.maxEntries`). */
  maxDeliveries?: number;
  /** How long claims stay refused after a loss, so that every gateway notices it (tests shorten it). */
  gatherMs?: number;
  /** Start on a server whose `maxmemory-policy` may evict keys, with a warning, rather than refuse to. */
  allowEviction?: boolean;
}

/**
 * One atomic increment with expiry: a new counter (or one that somehow lost its expiry) gets the window, a
 * running one keeps its own. Returns the count and the milliseconds left. A script because the port takes the
 * window per call, and INCR then PEXPIRE as two commands would leave a counter without expiry if the second failed.
 */
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {count, left}`;

/**
 * Claims a delivery id: set-if-absent with expiry, and in the same step the value already there (a claim in
 * progress, or the first answer) when it was not absent. One round trip, and atomic: of two gateways claiming
 * at once, exactly one finds the key absent. Refused (`#`) when the server does not hold the generation the
 * gateway's ids are in: it lost its keys, and the ids are not all back yet.
 */
const CLAIM = `
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return '#' end
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;

/**
 * Settles a claim while it still owns the id: the answer kept for its window, or the id released. An answer is also
 * written when the key is gone (Redis restarted, or the claim lapsed while the settle was retried and nobody
 * claimed the id since): the delivery was accepted, and its copies must find that out.
 */
const SETTLE = `
local current = redis.call('GET', KEYS[1])
if ARGV[2] == '' then
  if current == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
  return 0
end
if current and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

/** A claim in progress is stored as this prefix and its owner's id; an answer as the other prefix and its JSON. */
const CLAIMED = "?";
const ANSWERED = "!";
/** What a claim says when the server lost its keys. */
const LOST = "#";
const DEFAULT_POLL = { first: 10, max: 200 };
/**
 * After clearing an address's failure count, further clears from this gateway are skipped for this long unless it
 * counts a failure from that address itself. A DEL on every authenticated request cost 32 µs of the gateway's CPU
 * per request (a sixth of a `/wake`, bench/PROFILE.md); a failure counted by another gateway in that second is
 * cleared by the next correct credential after it.
 */
const RESET_QUIET_MS = 1_000;
/** Addresses remembered as recently cleared, at most. */
const MAX_CLEARED = 10_000;
/** The longest pause between reconnect attempts, and the random part added to each. */
const RECONNECT_MAX_MS = 2_000;
const RECONNECT_JITTER_MS = 100;
/**
 * After a server lost its keys, claims stay refused this long at least, so that every gateway notices the loss and
 * starts putting its ids back before any takes a claim: at its reconnect (one pause at most) or its periodic look,
 * plus one command's time.
 */
function gatherMsOf(timeoutMs: number): number {
  return Math.max(RECONNECT_MAX_MS + RECONNECT_JITTER_MS, CHECK_MS) + timeoutMs;
}

interface StoreScripts extends RefillScripts {
  hooksIncrement(key: string, windowMs: number): Promise<[number, number]>;
  hooksClaim(
    key: string,
    generationKey: string,
    marker: string,
    holdMs: number,
    generation: string,
  ): Promise<string | null>;
  hooksSettle(key: string, marker: string, answer: string, keepMs: number): Promise<number>;
}

type ClientOptions = RedisOptions & { replyMapping?: "legacy" };

/** ioredis is loaded when a Redis store is opened: about 55 ms of start-up that a gateway without one never pays. */
async function connectTo(url: string, options: ClientOptions): Promise<Redis> {
  const { Redis } = await import("ioredis");
  return new Redis(url, options);
}

/** How long connecting may take: the command timeout, but at least 2 s (a TLS handshake, a server just started). */
function connectTimeoutOf(settings: Pick<RedisStoreSettings, "timeoutMs">): number {
  return Math.max(settings.timeoutMs, 2_000);
}

/** The ioredis options both the store and `hooks check` connect with. */
function redisOptions(settings: Pick<RedisStoreSettings, "keyPrefix" | "timeoutMs">): ClientOptions {
  return {
    // Replies in the shapes RESP2 has (arrays, strings), whichever protocol the server speaks.
    replyMapping: "legacy",
    keyPrefix: settings.keyPrefix,
    lazyConnect: true,
    // A command sent while the connection is down fails at once rather than queueing behind a reconnect: the
    // request it belongs to is answered now (a 503 for a duplicate check, an uncounted failure for auth).
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: settings.timeoutMs,
    connectTimeout: connectTimeoutOf(settings),
    // Commands issued in the same tick by concurrent requests go to the server in one write.
    enableAutoPipelining: true,
    connectionName: "hooks",
    // Reconnects on its own, forever, at most two seconds apart.
    retryStrategy: (attempt: number) =>
      Math.min(50 * 2 ** attempt, RECONNECT_MAX_MS) + Math.floor(Math.random() * RECONNECT_JITTER_MS),
  };
}

/**
 * Connects once (no retries), sends PING, judges the eviction policy and disconnects: a problem when the server
 * cannot be reached or evicts keys (as the start would refuse), a warning when its policy cannot be read. For
 * `hooks check`, which must say so rather than find out at the first duplicate.
 */
export async function probeRedis(
  settings: Pick<RedisStoreSettings, "url" | "keyPrefix" | "timeoutMs" | "allowEviction">,
): Promise<{ problem?: string; problemAt?: string; warning?: string }> {
  const where = describeRedisUrl(settings.url);
  const redis = await connectTo(settings.url, { ...redisOptions(settings), retryStrategy: () => null });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    return {
      problem: `shared store ${where} is unreachable: ${(error as Error).message}`,
      problemAt: "hooks.store.url",
    };
  }
  try {
    const verdict = await judgeEvictionPolicy(redis, where, settings.allowEviction === true);
    if (!verdict.ok) return { problem: `${verdict.refusal}; ${EVICTION_FIX}`, problemAt: "hooks.store" };
    return "warning" in verdict ? { warning: verdict.warning } : {};
  } finally {
    redis.disconnect();
  }
}

export class RedisStore implements Store {
  private client: (Redis & StoreScripts) | undefined;
  private readonly where: string;
  private readonly poll: { first: number; max: number };
  /** Whether the last word from the connection was good: each outage and each recovery is logged once. */
  private reachable: boolean | undefined;
  private closed = false;
  /** Counters this gateway cleared, and until when it need not clear them again (epoch milliseconds). */
  private readonly cleared = new Map<string, number>();
  private readonly clock: Clock;
  private readonly oldestCleared = new OldestFirst(this.cleared);
  /** This gateway's ids, to put back into a server that lost them; and the watch for such a loss. */
  private readonly kept: KeptDeliveries;
  private readonly refill: Refill;
  /** The look at the server's eviction policy made at the latest connect: resolves with a refusal to start, if any. */
  private policyLook: Promise<string | undefined> | undefined;
  /** Set once open() is done: an evicting policy found after that is logged, the gateway already serving. */
  private opened = false;
  /** The last thing said about the policy, not repeated at each reconnect. */
  private policySaid: string | undefined;

  constructor(private readonly settings: RedisStoreSettings) {
    this.where = describeRedisUrl(settings.url);
    this.poll = settings.pollMs ?? DEFAULT_POLL;
    this.clock = settings.clock ?? systemClock;
    this.kept = new KeptDeliveries(settings.maxDeliveries ?? MAX_DELIVERIES, this.clock);
    this.refill = new Refill({
      client: () => this.redis,
      closed: () => this.closed,
      kept: this.kept,
      logger: settings.logger,
      where: this.where,
      timeoutMs: settings.timeoutMs,
      gatherMs: settings.gatherMs ?? gatherMsOf(settings.timeoutMs),
    });
  }

  /**
   * Connects; a server that cannot be reached now is not fatal: the store keeps trying in the background, and
   * meanwhile duplicate checks refuse (503) and auth failures go uncounted.
   */
  async open(): Promise<void> {
    const redis = (await connectTo(this.settings.url, redisOptions(this.settings))) as Redis & StoreScripts;
    // Closed while ioredis was being loaded: never connect.
    if (this.closed) return;
    redis.defineCommand("hooksIncrement", { numberOfKeys: 1, lua: INCREMENT });
    redis.defineCommand("hooksClaim", { numberOfKeys: 2, lua: CLAIM });
    redis.defineCommand("hooksSettle", { numberOfKeys: 1, lua: SETTLE });
    defineRefillScripts(redis);
    // Without an "error" listener ioredis prints every failed reconnect to the console itself.
    redis.on("error", (error: Error) => this.unreachable(error));
    redis.on("ready", () => {
      if (this.reachable === false)
        this.settings.logger.info(`shared store ${this.where} is reachable again`);
      this.reachable = true;
      // Every connect may be to another server, or one reconfigured: its policy is looked at again.
      this.policyLook = this.lookAtPolicy().catch(() => undefined);
      // Every connect may be to a server that restarted empty: no claim until its generation was checked.
      void this.refill.sync();
    });
    redis.on("close", () => this.unreachable(new Error("connection closed")));
    this.client = redis;
    // Bounded: a server that takes the connection and then says nothing (stopped, overloaded) must not hold up the
    // gateway's start; ioredis goes on trying behind it.
    let answered = false;
    const connected = redis.connect().then(
      () => {
        answered = true;
      },
      (error: Error) => this.unreachable(error),
    );
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (!answered) this.unreachable(new Error(`no answer within ${connectTimeoutOf(this.settings)} ms`));
        resolve();
      }, connectTimeoutOf(this.settings));
    });
    // The first look at the server's generation too, so that the first delivery after start is not refused.
    await Promise.race([connected.then(() => this.refill.settled()), waited]);
    clearTimeout(timer);
    // A server reached at start whose policy evicts keys stops the start; one reached later can only be logged.
    const refusal = answered ? await this.policyLook : undefined;
    this.opened = true;
    if (refusal !== undefined) throw new Error(`${refusal}; ${EVICTION_FIX} to start anyway`);
    if (!this.closed) this.refill.start();
  }

  /** Judges the server's eviction policy: a refusal while opening, else a line in the log (each new finding once). */
  private async lookAtPolicy(): Promise<string | undefined> {
    const verdict = await judgeEvictionPolicy(this.redis, this.where, this.settings.allowEviction === true);
    if (!verdict.ok && !this.opened) return verdict.refusal;
    const said = verdict.ok ? ("warning" in verdict ? verdict.warning : undefined) : verdict.refusal;
    if (said === undefined || said === this.policySaid) return undefined;
    this.policySaid = said;
    if (verdict.ok) this.settings.logger.warn(said);
    else this.settings.logger.error(`${said}; this gateway was already serving: ${EVICTION_FIX}`);
    return undefined;
  }

  private get redis(): Redis & StoreScripts {
    if (this.client === undefined || this.closed) throw new Error("the shared store is not open");
    return this.client;
  }

  async increment(key: string, windowMs: number): Promise<CounterWindow> {
    this.cleared.delete(key);
    const [count, left] = await this.redis.hooksIncrement(key, windowMs);
    return { count: Number(count), resetAt: this.clock.now() + Number(left) };
  }

  async peek(key: string): Promise<CounterWindow | undefined> {
    const replies = await this.redis.multi().get(key).pttl(key).exec();
    const [count, left] = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return Number(value);
    });
    if (!count || left === undefined || left <= 0) return undefined;
    return { count, resetAt: this.clock.now() + left };
  }

  async reset(key: string): Promise<void> {
    // A stopping gateway has nothing left to clear (and its connection is going: a DEL would only fail).
    if (this.closed) return;
    const now = Date.now();
    const quietUntil = this.cleared.get(key);
    if (quietUntil !== undefined && quietUntil > now) return;
    // Re-inserted, so the Map stays oldest-first for the trim.
    this.cleared.delete(key);
    this.cleared.set(key, now + RESET_QUIET_MS);
    this.oldestCleared.trimTo(MAX_CLEARED);
    try {
      await this.redis.del(key);
    } catch (error) {
      // Not cleared after all: the next correct credential tries again.
      this.cleared.delete(key);
      throw error;
    }
  }

  async claimDelivery(key: string, times: ClaimTimes): Promise<DeliveryClaim> {
    const giveUpAt = Date.now() + times.waitMs;
    let pause = this.poll.first;
    for (;;) {
      // A look at the server's generation in progress (at start, after a reconnect) is waited for, not refused.
      if (!this.refill.usable) await this.refill.looked(this.settings.timeoutMs);
      const generation = this.refill.generation;
      if (!this.refill.usable || generation === undefined) {
        throw new Error(`shared store ${this.where} is putting delivery ids back`);
      }
      const claim = randomUUID();
      const existing = await this.redis
        .hooksClaim(key, GENERATION_KEY, CLAIMED + claim, times.holdMs, generation)
        .catch((error: unknown) => {
          // A server that answers late may still carry the claim out after this request gave up on it (a 503): release
          // it, best effort, behind the claim on the same connection, so the sender's retry is not told to wait a
          // whole hold for a request that nobody is handling.
          this.client?.hooksSettle(key, CLAIMED + claim, "", 1).catch(() => undefined);
          throw error;
        });
      if (existing === null) {
        const held = this.kept.get(key);
        if (held === undefined) {
          this.kept.keep(key, CLAIMED + claim, times.holdMs);
          return { state: "first", claim };
        }
        const answer = await this.putBack(key, claim, held);
        if (answer !== undefined) return { state: "answered", response: answer };
        // A claim in progress, put back: waited for as any other, within the same wait, so a server that keeps
        // losing the key is not asked again past it.
        if (Date.now() >= giveUpAt || this.closed) return { state: "in-progress" };
        continue;
      }
      if (existing === LOST) {
        this.refill.lost();
        throw new Error(`shared store ${this.where} lost its delivery ids`);
      }
      if (existing.startsWith(ANSWERED)) {
        return { state: "answered", response: JSON.parse(existing.slice(1)) as StoredResponse };
      }
      // Another request (on this gateway or another) holds the id: look again until it answers or the wait ends.
      // Polling rather than a subscription: a duplicate that overlaps its first is rare, and costs nothing until then.
      const left = giveUpAt - Date.now();
      if (left <= 0 || this.closed) return { state: "in-progress" };
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
      pause = Math.min(pause * 2, this.poll.max);
    }
  }

  /**
   * The server called `key` free, yet this gateway holds it (its journal's id, an answer it gave, a claim in
   * progress): the key was lost on its own, deleted or evicted, where the generation check cannot see it. What this
   * gateway holds replaces the claim just made, and the request is answered from it: an answer as a duplicate; a
   * claim in progress is waited for as any other. Only a claim the server calls first gets here: one Map lookup.
   */
  private async putBack(key: string, claim: string, held: KeptDelivery): Promise<StoredResponse | undefined> {
    const written = this.redis.hooksSettle(
      key,
      CLAIMED + claim,
      held.value,
      Math.max(1, Math.round(held.leftMs)),
    );
    // A claim in progress must be back before the request looks again, or it would find the key free once more.
    if (!held.value.startsWith(ANSWERED)) return void (await written);
    // The answer is this gateway's to give either way: a failed write only leaves other gateways without it.
    await written.catch(() => undefined);
    return JSON.parse(held.value.slice(1)) as StoredResponse;
  }

  async settleDelivery(
    key: string,
    claim: string,
    response: StoredResponse | undefined,
    keepMs: number,
  ): Promise<void> {
    const answer = response === undefined ? "" : ANSWERED + JSON.stringify(response);
    // Kept first: an answer the server did not take (an outage, a restart) is still put back.
    if (response === undefined) this.kept.forget(key, CLAIMED + claim);
    else this.kept.keep(key, answer, keepMs);
    await this.redis.hooksSettle(key, CLAIMED + claim, answer, Math.max(1, Math.round(keepMs)));
  }

  async rememberDeliveries(answers: readonly RememberedAnswer[]): Promise<number> {
    const entries = answers.map(({ key, response, keepMs }) => ({
      key,
      value: ANSWERED + JSON.stringify(response),
      leftMs: keepMs,
    }));
    for (const { key, value, leftMs } of entries) this.kept.keep(key, value, leftMs);
    await this.refill.settled();
    try {
      if (!this.refill.usable) throw new Error(`shared store ${this.where} is not reachable`);
      return await this.refill.write(entries);
    } catch (error) {
      // Kept: a Redis that comes up after the gateway (or restarted without persistence) still gets these ids.
      this.refill.missed();
      throw error;
    }
  }

  async close(): Promise<void> {
    const redis = this.client;
    this.closed = true;
    this.refill.stop();
    if (redis === undefined) return;
    if (redis.status === "ready") {
      // QUIT lets replies in flight arrive; a server that does not answer it is cut off after the command timeout.
      await redis.quit().catch(() => redis.disconnect());
    } else {
      redis.disconnect();
    }
  }

  private unreachable(error: Error): void {
    if (this.closed || this.reachable === false) return;
    this.reachable = false;
    this.settings.logger.warn(
      `shared store ${this.where} is unreachable (${error.message}): duplicate checks answer 503 and auth failures are not counted until it is back; reconnecting`,
    );
  }
}
