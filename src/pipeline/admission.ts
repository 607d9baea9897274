/** @module Admission budgets per client address and in all: unverified body bytes and callers waiting for a turn, so one address cannot take what everyone shares. */
import { HookError } from "../errors.js";

/** Seconds a refused caller is asked to wait: what it waits for (a body read, a turn) usually ends within that. */
const RETRY_AFTER_SECONDS = 2;

/** Returns what was taken; calling it twice gives back nothing more. */
export type Release = () => void;

/**
 * One budget counted per address and in all. A share is taken only when it fits both bounds; an amount larger
 * than a bound still gets in when nothing else is held against that bound, so a limit set above a budget slows
 * such requests to one at a time instead of refusing them forever.
 */
class SharedBudget {
  private readonly held = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly perAddress: number,
    private readonly overall: number,
  ) {}

  /** Takes `amount` for `address`, or says which bound refused it. */
  take(address: string, amount: number): Release | "address" | "overall" {
    const mine = this.held.get(address) ?? 0;
    if (mine > 0 && mine + amount > this.perAddress) return "address";
    if (this.total > 0 && this.total + amount > this.overall) return "overall";
    this.held.set(address, mine + amount);
    this.total += amount;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= amount;
      const left = (this.held.get(address) ?? 0) - amount;
      // Entries leave with their last share: the map is as large as what is in flight, never as the history.
      if (left <= 0) this.held.delete(address);
      else this.held.set(address, left);
    };
  }
}

interface AdmissionLimits {
  unverifiedBytesPerAddress: number;
  unverifiedBytes: number;
  waitersPerAddress: number;
  waiters: number;
}

/** The refusal a caller gets when a budget is spent: 429 when its own address holds too much, 503 when all do. */
function admissionRefusal(bound: "address" | "overall", what: string): HookError {
  const headers = { "Retry-After": String(RETRY_AFTER_SECONDS) };
  return bound === "address"
    ? new HookError("CLIENT_BUSY", `This address has too many ${what} in progress; retry later.`, { headers })
    : new HookError("SERVER_BUSY", `Too many ${what} are in progress; retry later.`, { headers });
}

/** The budgets of one pipeline (one plugin instance): nothing is shared between instances. */
export class Admission {
  /** Bytes of bodies read before their signature could be checked. */
  private readonly unverifiedBytes: SharedBudget;
  /** Callers holding their answer until their agent turn ends. */
  private readonly waiters: SharedBudget;

  constructor(limits: AdmissionLimits) {
    this.unverifiedBytes = new SharedBudget(limits.unverifiedBytesPerAddress, limits.unverifiedBytes);
    this.waiters = new SharedBudget(limits.waitersPerAddress, limits.waiters);
  }

  /** Reserves room for an unverified body of at most `bytes`, or throws the refusal (before any byte is read). */
  reserveUnverified(address: string, bytes: number): Release {
    const taken = this.unverifiedBytes.take(address, bytes);
    if (typeof taken === "string") throw admissionRefusal(taken, "unverified request bodies");
    return taken;
  }

  /** A place among the waiting callers, or undefined when there is none (the caller gets the admission answer). */
  enterWait(address: string): Release | undefined {
    const taken = this.waiters.take(address, 1);
    return typeof taken === "string" ? undefined : taken;
  }
}
