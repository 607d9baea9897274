/** @module The config's secrets are hidden by value, in every encoding a URL or a form gives them. */
import { describe, expect, it } from "vitest";
import { secretRedactor } from "../../src/safety/secret-redaction.js";

const TOKEN = "tok en+/=~!";
const redact = secretRedactor([TOKEN, "", "whsec_abc+def/ghi="]);

describe("secret redaction", () => {
  it.each([
    ["as it is", `x=${TOKEN}`, "x=[redacted]"],
    ["URL-encoded", `?code=${encodeURIComponent(TOKEN)}&a=1`, "?code=[redacted]&a=1"],
    [
      "form-encoded, + for spaces",
      `code=${encodeURIComponent(TOKEN).replace("%20", "+")}`,
      "code=[redacted]",
    ],
    ["as URLSearchParams writes it", new URLSearchParams({ code: TOKEN }).toString(), "code=[redacted]"],
    ["escapes in lower case", "s=whsec_abc%2bdef%2fghi%3d", "s=[redacted]"],
    ["twice", "whsec_abc+def/ghi= and whsec_abc+def/ghi=", "[redacted] and [redacted]"],
    ["nothing to hide", "tok en, whsec_abc", "tok en, whsec_abc"],
  ])("%s", (_, text, expected) => {
    expect(redact(text)).toBe(expected);
  });

  it("with no secret, leaves text as it is", () => {
    expect(secretRedactor([""])("anything")).toBe("anything");
  });
});
