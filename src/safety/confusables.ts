/** @module What text reads as, for the letters of the wrapper's marker words: compatibility folding, look-alike letters, invisible characters. */

/**
 * Letters of other scripts (and a few symbols) that render like a Latin letter of the marker words
 * (EXTERNAL, UNTRUSTED, CONTENT), after compatibility decomposition has already turned fullwidth,
 * mathematical, circled, superscript and Roman-numeral forms into plain letters. Drawn from Unicode's
 * confusables list (UTS #39) for just these letters: a full skeleton is not needed to recognise three words.
 * `I`, `1` and `|` read as `l` in many fonts, and `0` as `o`: those two collect them. Letters with a stroke (`ŧ`, `đ`,
 * `ł`, `ø`) have no decomposition, so no folding takes the stroke off: they are listed too.
 */
export const LOOK_ALIKES: Readonly<Record<string, string>> = {
  a: "аАɑαΑⲁⲀꓮᎪᴀⱥȺ",
  c: "сСϲϹⲥⲤꓚᏟᴄȼȻ",
  d: "ԁꓒꓓᎠᴅđĐ",
  e: "еЕҽεΕɛЄ℮ᴇᎬꓰⴹɇɆ",
  l: "1i|іІӀǀ∣ιΙıꓡᏞʟⵏłŁ",
  n: "пոηɴΝⲛⲚꓠ",
  o: "0оОοΟσօՕⲟⲞᴏꓳ০୦०൦øØ",
  r: "гʀꓣᏒɍɌ",
  s: "ѕЅꜱՏꓢᏚ",
  t: "тТτΤᴛⲧⲦꓔᎢŧŦƭʈ",
  u: "սՍυʋᴜꓴʉɄ",
  x: "хХχΧ×⨯ⲭⲬꓫ",
};

/**
 * What shows nothing: zero-width characters, joiners, direction marks, variation selectors, tags, and
 * combining marks (accents come off a letter once it is decomposed). The four Hangul fillers are letters by
 * category but blank on screen.
 */
const INVISIBLE = "\\p{Default_Ignorable_Code_Point}\\p{M}";
/** The invisible characters that are letters by category, so not already spaces or punctuation. */
const INVISIBLE_LETTERS = "\\u115f\\u1160\\u3164\\uffa0";

const INVISIBLE_CHAR = new RegExp(`[${INVISIBLE}]`, "u");
const LETTER_OR_DIGIT = /[\p{L}\p{N}|]/u;
/** Look-alikes that are symbols, not letters (`×`, `∣`, `℮`): kept by the folding as the letters are. */
const LOOK_ALIKE_CHARS: ReadonlySet<string> = new Set(
  Object.values(LOOK_ALIKES).flatMap((chars) => [...chars]),
);

/**
 * One non-ASCII character as it reads: what its compatibility decomposition (the NFKC family; the decomposed
 * form, so that accents come off too) gives, less what shows nothing, with spaces and punctuation as `" "`.
 * Look-alike letters stay as they are: the pattern that looks for a word knows them.
 */
export function foldCharacter(char: string): string {
  let out = "";
  for (const part of char.normalize("NFKD")) {
    if (INVISIBLE_CHAR.test(part)) continue;
    out += LETTER_OR_DIGIT.test(part) || LOOK_ALIKE_CHARS.has(part) ? part : " ";
  }
  return out;
}

/**
 * A pattern source that finds `words` as they read: each letter or one of its look-alikes, with anything but letters
 * and digits allowed between any two letters, so words spaced or dotted apart (`E X T`, `E.X.T`) and invisible
 * characters inside them count. Linear: what may stand before a letter never includes that letter's own look-alikes
 * (`|` before an `l`), so there is one way to match any text and no character is tried twice for one start.
 */
export function lookAlikePattern(words: readonly string[]): string {
  const letters = [...words.join("")];
  const letter = (char: string) => `[${char}${LOOK_ALIKES[char] ?? ""}]`;
  const gapBefore = (char: string) => {
    const symbols = [...(LOOK_ALIKES[char] ?? "")].filter((look) => !/[\p{L}\p{N}]/u.test(look)).join("");
    return `(?:[^\\p{L}\\p{N}${symbols}]|[${INVISIBLE_LETTERS}])*`;
  };
  return letters.map((char, at) => (at === 0 ? letter(char) : gapBefore(char) + letter(char))).join("");
}
