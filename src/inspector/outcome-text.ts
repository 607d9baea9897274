/** @module What became of an accepted request, in the few words a list row has room for: "queued", "coalesced", "turn ok · text", "delivery sent". */

/** A turn as the journal reports it. */
interface Run {
  runId: string;
  status: string;
  reply?: string | undefined;
}

const DELIVERY = ":delivery";

/**
 * The system events' outcomes, then each turn's status and reply kind, then each delivery's result; undefined while
 * none is known (a pending request, a journal that does not keep outcomes).
 */
export function outcomeText(
  outcomes: Readonly<Record<string, string>> | undefined,
  runs: readonly Run[] | undefined,
): string | undefined {
  const parts: string[] = [];
  const deliveries: string[] = [];
  for (const [key, value] of Object.entries(outcomes ?? {})) {
    if (key.endsWith(DELIVERY)) deliveries.push(`delivery ${value}`);
    else parts.push(value);
  }
  for (const run of runs ?? [])
    parts.push(run.reply ? `turn ${run.status} · ${run.reply}` : `turn ${run.status}`);
  parts.push(...deliveries);
  return parts.length === 0 ? undefined : parts.join(", ");
}

/** The delivery result of a turn, from the outcomes by key `<runId>:delivery`. */
export function deliveryOf(
  outcomes: Readonly<Record<string, string>> | undefined,
  runId: string,
): string | undefined {
  return outcomes?.[`${runId}${DELIVERY}`];
}
