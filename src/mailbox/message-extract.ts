/** @module Turns one fetched message (raw RFC 822 source) into the mailbox preset's message shape. */
import { type AddressObject, simpleParser } from "mailparser";
import * as v from "valibot";

/** One message as the mailbox preset reads it. */
export const MailboxMessageSchema = v.object({
  /** `<UIDVALIDITY>-<UID>`: stable across restarts, unique within the mailbox. */
  id: v.string(),
  from: v.string(),
  subject: v.string(),
  snippet: v.string(),
  body: v.optional(v.string()),
});
export type MailboxMessage = v.InferOutput<typeof MailboxMessageSchema>;

export const MailboxPayloadSchema = v.object({
  source: v.literal("mailbox"),
  messages: v.array(MailboxMessageSchema),
});
export type MailboxPayload = v.InferOutput<typeof MailboxPayloadSchema>;

export const SNIPPET_CHARS = 200;

export interface ExtractOptions {
  includeBody: boolean;
  /** Cap of `body` in UTF-8 bytes. */
  maxBytes: number;
}

export interface RawMessage {
  uidValidity: number;
  uid: number;
  /** The message source; may be cut short for very large messages (see `rawFetchLimit`). */
  source: Buffer;
}

/**
 * How much of a message's source the helper downloads. Text parts usually come before attachments, so a
 * bounded prefix is enough to read the text while a 30 MB attachment is never transferred. The multiplier
 * leaves room for base64/quoted-printable and HTML overhead around `maxBytes` of text.
 */
export function rawFetchLimit(maxBytes: number): number {
  return Math.max(256 * 1024, maxBytes * 8);
}

export function messageId(uidValidity: number, uid: number): string {
  return `${uidValidity}-${uid}`;
}

export async function extractMailboxMessage(
  raw: RawMessage,
  options: ExtractOptions,
): Promise<MailboxMessage> {
  const id = messageId(raw.uidValidity, raw.uid);
  let parsed: Awaited<ReturnType<typeof simpleParser>>;
  try {
    parsed = await simpleParser(raw.source, {
      skipImageLinks: true,
      skipTextToHtml: true,
      skipTextLinks: true,
    });
  } catch {
    // A message the parser cannot read is still delivered (as a notice), so it is not silently lost.
    return { id, from: "", subject: "", snippet: "(the message could not be parsed)" };
  }
  // mailparser derives `text` from the HTML part when a message has no plain-text part.
  const text = normalizeText(parsed.text ?? "");
  const message: MailboxMessage = {
    id,
    from: formatAddresses(parsed.from),
    subject: parsed.subject ?? "",
    snippet: makeSnippet(text, SNIPPET_CHARS),
  };
  if (options.includeBody) message.body = truncateUtf8(text, options.maxBytes);
  return message;
}

function formatAddresses(from: AddressObject | AddressObject[] | undefined): string {
  const objects = from === undefined ? [] : Array.isArray(from) ? from : [from];
  return objects
    .flatMap((object) => object.value)
    .map(({ name, address }) => (name && address ? `${name} <${address}>` : (address ?? name ?? "")))
    .filter((entry) => entry !== "")
    .join(", ");
}

function normalizeText(text: string): string {
  return text.replace(/\r\n?/g, "\n").trim();
}

/** The first `chars` characters of `text` on one line; an ellipsis marks a cut. */
export function makeSnippet(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const codePoints = Array.from(flat);
  if (codePoints.length <= chars) return flat;
  return `${codePoints.slice(0, chars).join("").trimEnd()}…`;
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Continuation bytes look like 10xxxxxx; back up to the first byte of the character that would be split.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString("utf8");
}
