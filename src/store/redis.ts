/** @module The Redis Store (ioredis): auth-failure counters, delivery claims and first answers shared by every gateway on one server and prefix. */
import { randomUUID } from "node:crypto";
import type { Redis, RedisOptions } from "ioredis";
import { type Clock, systemClock } from "../clock.js";
import type { HostLogger } from "../host/contract.js";
import { OldestFirst } from "./oldest-first.js";
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
 * at once, exactly one finds the key absent.
 */
const CLAIM = `
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

/**
 * Remembers an answer from a restarted gateway's journal: an answer already there is left alone, a claim in
 * progress is overwritten. That claim can only be the crashed run's own (it wrote the journal, then died before
 * settling): left to lapse, it would free the id for the sender's retry while recovery also runs the original.
 */
const REMEMBER = `
local current = redis.call('GET', KEYS[1])
if current and string.sub(current, 1, 1) == '!' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/** A claim in progress is stored as this prefix and its owner's id; an answer as the other prefix and its JSON. */
const CLAIMED = "?";
const ANSWERED = "!";
/** Remembered answers go to the server in batches of this many SET NX commands (one round trip each). */
const REMEMBER_BATCH = 500;
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

interface StoreScripts {
  hooksIncrement(key: string, windowMs: number): Promise<[number, number]>;
  hooksClaim(key: string, marker: string, holdMs: number): Promise<string | null>;
  hooksSettle(key: string, marker: string, answer: string, keepMs: number): Promise<number>;
  hooksRemember(key: string, answer: string, keepMs: number): Promise<number>;
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
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 2_000) + Math.floor(Math.random() * 100),
  };
}

/**
 * Connects once (no retries), sends PING and disconnects: undefined when the server answered, else why not.
 * For `hooks check`, which must say that the store is unreachable rather than find out at the first duplicate.
 */
export async function probeRedis(settings: Pick<RedisStoreSettings, "url" | "keyPrefix" | "timeoutMs">) {
  const redis = await connectTo(settings.url, { ...redisOptions(settings), retryStrategy: () => null });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return `shared store ${describeRedisUrl(settings.url)} is unreachable: ${(error as Error).message}`;
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
  /** A restarted gateway's delivery ids that could not be put in the store yet, and when that was tried. */
  private unremembered: { answers: readonly RememberedAnswer[]; at: number } | undefined;
  private readonly clock: Clock;
  private readonly oldestCleared = new OldestFirst(this.cleared);

  constructor(private readonly settings: RedisStoreSettings) {
    this.where = describeRedisUrl(settings.url);
    this.poll = settings.pollMs ?? DEFAULT_POLL;
    this.clock = settings.clock ?? systemClock;
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
    redis.defineCommand("hooksClaim", { numberOfKeys: 1, lua: CLAIM });
    redis.defineCommand("hooksSettle", { numberOfKeys: 1, lua: SETTLE });
    redis.defineCommand("hooksRemember", { numberOfKeys: 1, lua: REMEMBER });
    // Without an "error" listener ioredis prints every failed reconnect to the console itself.
    redis.on("error", (error: Error) => this.unreachable(error));
    redis.on("ready", () => {
      if (this.reachable === false)
        this.settings.logger.info(`shared store ${this.where} is reachable again`);
      this.reachable = true;
      this.rememberLater();
    });
    redis.on("close", () => this.unreachable(new Error("connection closed")));
    this.client = redis;
    // Bounded: a server that takes the connection and then says nothing (stopped, overloaded) must not hold up the
    // gateway's start; ioredis goes on trying behind it.
    const connected = redis.connect().catch((error: Error) => this.unreachable(error));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.unreachable(new Error(`no answer within ${connectTimeoutOf(this.settings)} ms`));
        resolve();
      }, connectTimeoutOf(this.settings));
    });
    await Promise.race([connected, waited]);
    clearTimeout(timer);
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
      const claim = randomUUID();
      const existing = await this.redis
        .hooksClaim(key, CLAIMED + claim, times.holdMs)
        .catch((error: unknown) => {
          // A server that answers late may still carry the claim out after this request gave up on it (a 503): release
          // it, best effort, behind the claim on the same connection, so the sender's retry is not told to wait a
          // whole hold for a request that nobody is handling.
          this.client?.hooksSettle(key, CLAIMED + claim, "", 1).catch(() => undefined);
          throw error;
        });
      if (existing === null) return { state: "first", claim };
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

  async settleDelivery(
    key: string,
    claim: string,
    response: StoredResponse | undefined,
    keepMs: number,
  ): Promise<void> {
    const answer = response === undefined ? "" : ANSWERED + JSON.stringify(response);
    await this.redis.hooksSettle(key, CLAIMED + claim, answer, Math.max(1, Math.round(keepMs)));
  }

  async rememberDeliveries(answers: readonly RememberedAnswer[]): Promise<number> {
    try {
      return await this.rememberInBatches(answers);
    } catch (error) {
      // Kept until the server is reachable: a Redis that comes up after the gateway (or restarted without
      // persistence) still gets this gateway's ids.
      this.unremembered = { answers, at: this.clock.now() };
      throw error;
    }
  }

  private async rememberInBatches(answers: readonly RememberedAnswer[]): Promise<number> {
    let remembered = 0;
    for (let start = 0; start < answers.length; start += REMEMBER_BATCH) {
      const batch = this.redis.pipeline() as ReturnType<Redis["pipeline"]> & StoreScripts;
      for (const { key, response, keepMs } of answers.slice(start, start + REMEMBER_BATCH)) {
        batch.hooksRemember(key, ANSWERED + JSON.stringify(response), Math.max(1, Math.round(keepMs)));
      }
      for (const [error, reply] of (await batch.exec()) ?? []) {
        if (error) throw error;
        if (reply === 1) remembered++;
      }
    }
    return remembered;
  }

  /** Puts back the ids a failed `rememberDeliveries` kept, once the server answers again. */
  private rememberLater(): void {
    const pending = this.unremembered;
    if (pending === undefined) return;
    this.unremembered = undefined;
    // What is left of each id's window has shrunk while the server was away.
    const away = this.clock.now() - pending.at;
    const answers = pending.answers.flatMap((answer) =>
      answer.keepMs > away ? [{ ...answer, keepMs: answer.keepMs - away }] : [],
    );
    this.rememberInBatches(answers).then(
      (remembered) =>
        this.settings.logger.info(`shared store ${this.where}: the journal's delivery ids were put back`, {
          remembered,
        }),
      () => {
        this.unremembered ??= pending;
      },
    );
  }

  async close(): Promise<void> {
    const redis = this.client;
    this.closed = true;
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
