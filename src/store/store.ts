/** @module The Store port: state a deployment may share between gateways (auth-failure counters, duplicate deliveries). */

export interface CounterWindow {
  /** Hits counted in the current window, this one included. */
  count: number;
  /** When the window ends (epoch milliseconds). */
  resetAt: number;
}

/** The first answer to a delivery, kept to answer its duplicates with. */
export interface StoredResponse {
  status: number;
  /** Response headers that describe the body (Content-Type). */
  contentType: string | undefined;
  /** Undefined for 204. */
  body: string | undefined;
}

/**
 * What claiming a delivery id found: this request is the first; an earlier one was answered (here is its
 * answer); or an earlier one is still being handled and did not finish within the wait.
 */
export type DeliveryClaim =
  | {
      state: "first";
      /** Proof of ownership: only the claim's owner may settle it (a claim that outlived its hold is another's). */
      claim: string;
    }
  | { state: "answered"; response: StoredResponse }
  | { state: "in-progress" };

export interface ClaimTimes {
  /** How long an unanswered claim holds (a gateway that dies mid-request must not block the id for a day). */
  holdMs: number;
  /** How long to wait for an earlier request with the same id to be answered before giving up. */
  waitMs: number;
}

/** An answer a previous run gave, to be remembered for what is left of its window. */
export interface RememberedAnswer {
  key: string;
  response: StoredResponse;
  keepMs: number;
}

/**
 * What a counter is for: lets a store that must drop counters (a bounded memory) keep the ones that matter. A store
 * with an expiry of its own for every key (Redis) may ignore it.
 */
export interface CounterRule {
  /**
   * The count at which the counter's client is refused, or one hit away from it (the limit of failures or requests
   * per window): such a counter is dropped only after every counter below its limit, or its client would get a fresh
   * budget.
   */
  limit: number;
  /**
   * One budget for every sender (a hook-wide rate limit) rather than one client's: there are only as many as the
   * config has rules, and counters of clients never push one out.
   */
  shared?: boolean;
}

export interface Store {
  /** Connects, for a store that has something to connect to; called once, at start, before any request. */
  open?(): Promise<void>;
  /**
   * Counts one hit on `key`; a missing or expired counter starts a new window of `windowMs`. `rule` says what it
   * counts (absent: a client's counter with no limit).
   */
  increment(key: string, windowMs: number, rule?: CounterRule): Promise<CounterWindow>;
  /**
   * Reads `key`'s running window without counting a hit (undefined when none runs): lets a throttled address be
   * refused before anything is read or hashed for it.
   */
  peek(key: string): Promise<CounterWindow | undefined>;
  /** Forgets `key`'s counter. */
  reset(key: string): Promise<void>;
  /** Claims a delivery id atomically: of requests arriving together with one id, exactly one is first. */
  claimDelivery(key: string, times: ClaimTimes): Promise<DeliveryClaim>;
  /**
   * Settles a claim: the first answer, remembered for `keepMs`; or undefined when the request was not accepted,
   * which forgets the claim so the sender's retry is handled afresh. Does nothing while another claim owns `key`; a
   * store may keep an answer whose claim it lost (the Redis store does, after a restart of the server).
   */
  settleDelivery(
    key: string,
    claim: string,
    response: StoredResponse | undefined,
    keepMs: number,
  ): Promise<void>;
  /**
   * Remembers answers in bulk (a restarted gateway's delivery ids, from its journal); an answer the store already
   * holds is left alone, a claim left by the crashed run may be replaced. Returns how many were stored.
   */
  rememberDeliveries(answers: readonly RememberedAnswer[]): Promise<number>;
  /** Releases connections and timers; the store is not used afterwards. */
  close(): Promise<void>;
}
