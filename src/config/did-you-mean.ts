/** @module "Did you mean" hints for misspelt config keys. */

/** The closest candidate within a small edit distance, or undefined when none is close. */
export function suggestClosest(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const lowered = candidate.toLowerCase();
    // A truncated or misspelt start of a long key ("windw" for "windowSeconds") counts as close too.
    const distance = Math.min(
      editDistance(needle, lowered),
      needle.length >= 4 ? editDistance(needle, lowered.slice(0, needle.length)) : Number.POSITIVE_INFINITY,
    );
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const allowed = Math.max(1, Math.floor(needle.length / 3));
  return bestDistance <= allowed ? best : undefined;
}

/** Levenshtein distance with one rolling row. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}
