/** @module Which answered-without-admission requests the journal lists: the per-address, all-addresses and per-series (a delivery's duplicates, a sender's repeated 429s) limits in one place. */
import type { AnsweredOptions, AnsweredRecord } from "./journal.js";
import { type BudgetReport, RefusalBudget } from "./refusal-budget.js";
import { RefusalLimit } from "./refusal-limit.js";

/**
 * Listings of one series a minute (a duplicate delivery, a sender's 429s from one limit): a captured delivery replayed
 * without end, or a sender retrying in a loop past its limit, writes this, then a count.
 */
export const REPEATS_PER_MINUTE = 3;

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
 * duplicate or a repeated refusal passes its series' limit. Anything else (a request whose credentials were accepted)
 * is always listed.
 */
export class AnsweredLimits {
  private readonly clients: RefusalLimit;
  private readonly series = new RefusalLimit(REPEATS_PER_MINUTE);
  private readonly everyone: RefusalBudget;

  constructor(settings: AnsweredLimitSettings) {
    this.clients = new RefusalLimit(settings.perClient);
    this.everyone = new RefusalBudget(settings.totalLines, settings.totalBytes, settings.report);
  }

  /**
   * Undefined: leave it out (it is counted). A number: list it, with the count of its address's (or series')
   * listings left out before it.
   */
  admit(record: AnsweredRecord, options: AnsweredOptions | undefined): number | undefined {
    if (options?.perClient === true && record.client !== undefined) {
      if (!this.everyone.admit(record.at)) return undefined;
      return this.clients.admit(record.client, record.at);
    }
    if (options?.series !== undefined) return this.series.admit(options.series, record.at);
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
