/** @module Notices a Redis that lost its keys (restarted without persistence, or emptied) and puts this gateway's delivery ids back before its duplicate checks resume. */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { errorMessage } from "../errors.js";
import type { HostLogger } from "../host/contract.js";
import type { KeptDeliveries, KeptDelivery } from "./kept-deliveries.js";

/**
 * A random name for the server's current set of ids, written by the first gateway that finds none. A server that
 * lost its keys has lost this one too (or holds a new one): the gateway that notices knows that the ids it wrote are
 * gone. Every claim checks it in the same script, so none is taken from an emptied server; after a loss a new one
 * is written only once every gateway's ids are back.
 */
export const GENERATION_KEY = "store-generation";
/**
 * Set by the first gateway to notice a loss, for long enough that every other gateway notices it too (its
 * reconnect or its periodic look) and starts putting its own ids back: no new generation while it exists.
 */
const GATHERING_KEY = "store-gathering";
/**
 * Every gateway putting ids back is a member, due by its score (the server's time, ms), renewed batch by batch and
 * removed when it is done: no new generation while the key exists. A gateway that dies mid-way drops out when its
 * time is up, so the key lasts until the last one is done, or at most one renewal after.
 */
const REFILLING_KEY = "store-refilling";

/** Adds or renews member ARGV[1] for ARGV[2] ms, drops members past their time, and expires the key with its last. */
const HOLD = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1`;

/**
 * Puts back a batch of ids (KEYS, their values in ARGV, then their milliseconds left). A claim goes in only where
 * the key is free. An answer goes in unless an answer is already there; it replaces a claim in progress, which can
 * only be this gateway's own (it answered, then the settle did not land) or, after a gateway's restart, its crashed
 * run's: left to lapse, that claim would free the id for the sender's retry while recovery also runs the original.
 * One script per batch: a command per id cost the gateway about ten times as much.
 */
const REMEMBER = `
local count = #KEYS
local stored = 0
for i = 1, count do
  local value = ARGV[i]
  local current = redis.call('GET', KEYS[i])
  local free = not current
  if not free and string.sub(value, 1, 1) == '!' then free = string.sub(current, 1, 1) ~= '!' end
  if free then
    redis.call('SET', KEYS[i], value, 'PX', ARGV[count + i])
    stored = stored + 1
  end
end
return stored`;

/** Ids go to the server in batches of this many commands, one round trip each. */
const BATCH = 500;
/** How often a connected gateway looks whether the server still holds its generation (an emptied server keeps its connections). */
export const CHECK_MS = 1_000;

export interface RefillScripts {
  hooksHold(key: string, member: string, holdMs: number): Promise<number>;
  /** The number of keys, the keys, their values, their milliseconds left. */
  hooksRemember(count: number, ...keysValuesAndMs: Array<string | number>): Promise<number>;
}

export type RefillClient = Redis & RefillScripts;

/** Gives a client the scripts this module calls. */
export function defineRefillScripts(redis: Redis): void {
  redis.defineCommand("hooksHold", { numberOfKeys: 1, lua: HOLD });
  redis.defineCommand("hooksRemember", { lua: REMEMBER });
}

export interface RefillSettings {
  client(): RefillClient;
  closed(): boolean;
  kept: KeptDeliveries;
  logger: HostLogger;
  /** Where the server is, for log lines (never its credentials). */
  where: string;
  timeoutMs: number;
  /** How long the first gateway to notice a loss holds off a new generation (and so every claim): until every other has noticed it too. */
  gatherMs: number;
}

/**
 * The store's view of the server's generation. Until it has checked it (at each connect, and once a second while
 * connected) and put back what the server lost, it says the store is not `usable`: claims are refused as during
 * an outage (503), never accepted without the ids a sender may be retrying.
 */
export class Refill {
  /** The generation this gateway's ids are in, sent with every claim. */
  generation: string | undefined;
  private ready = false;
  private running: Promise<void> | undefined;
  /** Whether the sync running puts ids back (a loss, or ids given while down): claims are refused, not held, meanwhile. */
  private refilling = false;
  /** Ids kept that may be missing from the server: given while it could not be reached. */
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  /** This gateway's name among those putting ids back. */
  private readonly member = randomUUID();

  constructor(private readonly settings: RefillSettings) {}

  /** Whether claims may go to the server: its generation is known, and nothing of this gateway's is missing. */
  get usable(): boolean {
    return this.ready && this.running === undefined;
  }

  start(): void {
    this.timer = setInterval(() => void this.look(), CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Checks the generation, and puts the kept ids back if the server lost them; one at a time. */
  sync(): Promise<void> {
    this.ready = false;
    this.running ??= this.run()
      .catch((error: unknown) => {
        // Tried again at the next connect or look; until then claims are refused.
        if (!this.settings.closed()) this.settings.logger.debug(`shared store sync: ${errorMessage(error)}`);
      })
      .finally(() => {
        this.running = undefined;
        this.refilling = false;
      });
    return this.running;
  }

  /** A claim found another generation (or none): the server lost its keys since this gateway last looked. */
  lost(): void {
    this.refilling = true;
    void this.sync();
  }

  /**
   * Waits, at most `ms`, for a sync that only looks at the server's generation (at start, after a reconnect): it
   * takes one command when nothing was lost, and a claim refused meanwhile would be a 503 for nothing. A refill is
   * not waited for: it takes as long as every gateway's ids take to go back.
   */
  async looked(ms: number): Promise<void> {
    const running = this.running;
    if (running === undefined || this.refilling) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([running, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  /** Ids given that the server may not hold: claims wait until the next sync (at most a second) put them back. */
  missed(): void {
    this.dirty = true;
    this.ready = false;
  }

  /** Waits for a sync in progress (the first one, at start). */
  async settled(): Promise<void> {
    await this.running;
  }

  /** Writes answers and claims in batches, renewing this gateway's `hold` (a refill's) before each; returns how many were stored. */
  async write(entries: readonly KeptDelivery[], hold?: number): Promise<number> {
    const redis = this.settings.client();
    let stored = 0;
    for (let start = 0; start < entries.length; start += BATCH) {
      const batch = redis.pipeline() as ReturnType<Redis["pipeline"]> & RefillScripts;
      if (hold !== undefined) batch.hooksHold(REFILLING_KEY, this.member, hold);
      const slice = entries.slice(start, start + BATCH);
      batch.hooksRemember(
        slice.length,
        ...slice.map(({ key }) => key),
        ...slice.map(({ value }) => value),
        ...slice.map(({ leftMs }) => Math.max(1, Math.round(leftMs))),
      );
      const replies = (await batch.exec()) ?? [];
      for (const [error] of replies) if (error) throw error;
      stored += Number(replies.at(-1)?.[1]);
    }
    return stored;
  }

  private async run(): Promise<void> {
    const redis = this.settings.client();
    const current = await redis.get(GENERATION_KEY);
    const lost = this.generation !== undefined && current !== this.generation;
    if (lost) {
      this.settings.logger.warn(
        `shared store ${this.settings.where} lost its delivery ids (restarted without persistence, or emptied): duplicate checks answer 503 until they are back`,
      );
      // No new generation, so no claim anywhere, until every gateway has had time to notice and join the refill.
      if (current === null) await redis.set(GATHERING_KEY, "1", "PX", this.settings.gatherMs, "NX");
    }
    let remembered = 0;
    let ms = 0;
    const refill = lost || this.dirty;
    if (refill) {
      this.refilling = true;
      const started = Date.now();
      try {
        do {
          this.dirty = false;
          // Long enough for one batch to be answered; renewed before each.
          remembered += await this.write(this.settings.kept.list(), this.settings.timeoutMs + 1_000);
        } while (this.dirty);
      } finally {
        await redis.zrem(REFILLING_KEY, this.member).catch(() => undefined);
      }
      ms = Date.now() - started;
    }
    this.generation = await this.currentGeneration();
    this.ready = true;
    if (refill) {
      this.settings.logger.info(
        `shared store ${this.settings.where}: this gateway's delivery ids were put back; duplicate checks resume`,
        { remembered, ms },
      );
    }
  }

  /**
   * The server's generation; if it has none, a new one, written once no gateway is gathering or putting ids back
   * (a claim is taken only in a generation, so none is taken before every gateway's ids are back).
   */
  private async currentGeneration(): Promise<string> {
    const redis = this.settings.client();
    for (;;) {
      const current = await redis.get(GENERATION_KEY);
      if (current !== null) return current;
      const [gathering, refilling] = await Promise.all([
        redis.pttl(GATHERING_KEY),
        redis.pttl(REFILLING_KEY),
      ]);
      const left = Math.max(gathering, refilling);
      if (left > 0) {
        if (this.settings.closed()) throw new Error("the store was closed");
        await new Promise((resolve) => setTimeout(resolve, Math.min(left, 250)).unref());
        continue;
      }
      const fresh = randomUUID();
      if ((await redis.set(GENERATION_KEY, fresh, "NX")) === "OK") return fresh;
    }
  }

  /** The periodic look: a sync that failed is tried again; a connected server is asked for its generation. */
  private async look(): Promise<void> {
    if (this.settings.closed() || this.running !== undefined) return;
    const redis = this.settings.client();
    if (redis.status !== "ready") return;
    if (!this.ready) {
      void this.sync();
      return;
    }
    try {
      if ((await redis.get(GENERATION_KEY)) !== this.generation) void this.sync();
    } catch {
      // An outage: the reconnect syncs.
    }
  }
}
