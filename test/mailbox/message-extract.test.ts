/** @module Tests of turning raw mail into the preset's message: id, sender, snippet, body cap. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  extractMailboxMessage,
  makeSnippet,
  SNIPPET_CHARS,
  truncateUtf8,
} from "../../src/mailbox/message-extract.js";
import { buildMail } from "../helpers/dovecot.js";

const raw = (mail: Parameters<typeof buildMail>[0], uid = 5) => ({
  uid,
  uidValidity: 1234,
  source: Buffer.from(buildMail(mail)),
});

describe("extractMailboxMessage", () => {
  it("gives the stable id, sender, subject and a one-line snippet; no body unless asked", async () => {
    const message = await extractMailboxMessage(
      raw({ from: "Zoë Example <zoe@example.org>", subject: "Grüße", text: "Line one\r\n\r\n  line two" }),
      { includeBody: false, maxBytes: 100 },
    );
    expect(message).toEqual({
      id: "1234-5",
      from: "Zoë Example <zoe@example.org>",
      subject: "Grüße",
      snippet: "Line one line two",
    });
  });

  it("adds the plain-text body, cut to maxBytes bytes", async () => {
    const text = "é".repeat(50);
    const message = await extractMailboxMessage(raw({ subject: "s", text }), {
      includeBody: true,
      maxBytes: 11,
    });
    expect(message.body).toBe("é".repeat(5));
  });

  it("reads the text of an HTML-only message", async () => {
    const message = await extractMailboxMessage(raw({ subject: "s", html: "<p>Hello <b>there</b></p>" }), {
      includeBody: true,
      maxBytes: 1000,
    });
    expect(message.snippet).toBe("Hello there");
    expect(message.body).toContain("Hello there");
  });

  it("prefers the plain-text alternative over the HTML one", async () => {
    const message = await extractMailboxMessage(
      raw({ subject: "s", text: "plain words", html: "<p>html words</p>" }),
      {
        includeBody: true,
        maxBytes: 1000,
      },
    );
    expect(message.body).toBe("plain words");
  });
});

describe("makeSnippet", () => {
  it(`keeps at most ${SNIPPET_CHARS} characters and marks the cut`, () => {
    const snippet = makeSnippet("word ".repeat(100), SNIPPET_CHARS);
    expect(Array.from(snippet).length).toBeLessThanOrEqual(SNIPPET_CHARS + 1);
    expect(snippet.endsWith("…")).toBe(true);
    expect(makeSnippet("short", SNIPPET_CHARS)).toBe("short");
  });
});

describe("truncateUtf8", () => {
  it("never exceeds the cap and never splits a character", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.integer({ min: 0, max: 64 }), (text, max) => {
        const cut = truncateUtf8(text, max);
        expect(Buffer.byteLength(cut, "utf8")).toBeLessThanOrEqual(max);
        // A split character would decode to U+FFFD and stop being a prefix of the original.
        expect(text.startsWith(cut)).toBe(true);
      }),
    );
  });
});
