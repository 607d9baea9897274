/** @module Which answered-without-admission requests the journal lists: the per-address, all-addresses and per-delivery limits in one place. */
import type { AnsweredOptions, AnsweredRecord } from "./journal.js";
import { type BudgetReport, RefusalBudget } from "./refusal-budget.js";
import { RefusalLimit } from "./refusal-limit.js";

/** Listings of one duplicate delivery a minute: a captured delivery replayed without end writes this, then a count. */
export const DUPLICATES_PER_MINUTE = 3;

export interface AnsweredLimitSettings {
  /** Refusals before any credential was accepted, per client address (`hooks.journal.refusedPerMinute`). */
  perClient: number;
  /** The same, all addresses together (`refusedTotalPerMinute`, `refusedBytesPerMinute`). */
  totalLines: number;
  totalBytes: number;
  /** Told the count the all-addresses budget left out, once a minute at most. */
  report: BudgetReport;
}

/**
 * A refusal before any credential was accepted passes the budget for everyone first, then its address's limit; a
 * duplicate passes its delivery's limit. Anything else (a request whose credentials were accepted) is always listed.
 */
export class AnsweredLimits {
  private readonly clients: RefusalLimit;
  private readonly deliveries = new RefusalLimit(DUPLICATES_PER_MINUTE);
  private readonly everyone: RefusalBudget;

  constructor(settings: AnsweredLimitSettings) {
    this.clients = new RefusalLimit(settings.perClient);
    this.everyone = new RefusalBudget(settings.totalLines, settings.totalBytes, settings.report);
  }

  /**
   * Undefined: leave it out (it is counted). A number: list it, with the count of its address's (or delivery's)
   * listings left out before it.
   */
  admit(record: AnsweredRecord, options: AnsweredOptions | undefined): number | undefined {
    if (options?.perClient === true && record.client !== undefined) {
      if (!this.everyone.admit(record.at)) return undefined;
      return this.clients.admit(record.client, record.at);
    }
    if (options?.delivery !== undefined) return this.deliveries.admit(options.delivery, record.at);
    return 0;
  }

  /** A line that `admit` let through was written: `bytes` of it, newline included. */
  listed(options: AnsweredOptions | undefined, bytes: number): void {
    if (options?.perClient === true) this.everyone.spend(bytes);
  }

  /** Tells what the budget for everyone left out and has not told yet (at close). */
  flush(): void {
    this.everyone.flush();
  }
}
