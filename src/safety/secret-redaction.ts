/** @module Hides the config's own secrets (the hook token, signing secrets) wherever a sender put them, in text the journal lists. */
import { REDACTED } from "./credentials.js";

/** Replaces every occurrence of a secret with `[redacted]`. */
export type SecretRedactor = (text: string) => string;

/**
 * A redactor for these secrets, built once per config: each is looked for as it is, URL-encoded
 * (`encodeURIComponent`, its `%20` also as `+`) and as a form parameter (`URLSearchParams`, which is how a listed
 * URL's query is written back), percent escapes in either case. The credential filters hide a credential by the
 * name it is sent under; a sender that puts the token where no name says so (`?code=`, `x-my-header: tok=…`) is
 * caught here, by its value.
 */
export function secretRedactor(secrets: Iterable<string>): SecretRedactor {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret === "") continue;
    const uri = encodeURIComponent(secret);
    forms.add(secret);
    forms.add(uri);
    forms.add(uri.replaceAll("%20", "+"));
    forms.add(new URLSearchParams({ s: secret }).toString().slice(2));
  }
  if (forms.size === 0) return (text) => text;
  // Longest first: where two forms start at one place, the whole of the longer one goes.
  const pattern = [...forms]
    .sort((a, b) => b.length - a.length)
    .map(patternOf)
    .join("|");
  const regex = new RegExp(pattern, "g");
  return (text) => text.replace(regex, REDACTED);
}

/** The form as a literal pattern, a percent escape matching either case of its hex digits (`%2B`, `%2b`). */
function patternOf(form: string): string {
  return form
    .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    .replace(
      /%([0-9A-F])([0-9A-F])/g,
      (_, high: string, low: string) => `%${eitherCase(high)}${eitherCase(low)}`,
    );
}

function eitherCase(digit: string): string {
  const lower = digit.toLowerCase();
  return lower === digit ? digit : `[${digit}${lower}]`;
}
