/** @module A line diff of two texts (longest common subsequence), for comparing two requests' bodies. */

export interface DiffPart {
  kind: "same" | "added" | "removed";
  lines: string[];
}

/** Beyond this many lines a side, the table would be too big: the texts are shown as removed and added whole. */
const MAX_LINES = 2_000;

export function diffLines(before: string, after: string): DiffPart[] {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  if (a.length > MAX_LINES || b.length > MAX_LINES) {
    return [
      { kind: "removed" as const, lines: a },
      { kind: "added" as const, lines: b },
    ].filter((part) => part.lines.length > 0);
  }
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lengths[i]![j] =
        a[i] === b[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
  const parts: DiffPart[] = [];
  const add = (kind: DiffPart["kind"], line: string) => {
    const last = parts.at(-1);
    if (last?.kind === kind) last.lines.push(line);
    else parts.push({ kind, lines: [line] });
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      add("same", a[i]!);
      i++;
      j++;
    } else if (lengths[i + 1]![j]! >= lengths[i]![j + 1]!) add("removed", a[i++]!);
    else add("added", b[j++]!);
  }
  while (i < a.length) add("removed", a[i++]!);
  while (j < b.length) add("added", b[j++]!);
  return parts;
}
