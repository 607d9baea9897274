/** @module The longest text a wake or an agent turn carries to a model: a longer one is cut where the limit falls, and says so. */

/**
 * `text` within `maxChars` UTF-16 units, or its start followed by a line saying how much was cut. Never half a
 * surrogate pair. Cutting before anything else reads the text keeps every later step (the wrapper's neutralising,
 * the journal, the host's session) in proportion to what a model can take, not to what a sender posted.
 */
export function capText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}\n[${text.length - end} more characters cut: the text is longer than hooks.maxTextChars (${maxChars})]`;
}
