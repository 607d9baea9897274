/** @module Every sender signature scheme by name, and the headers that carry their signatures. */
import type { SchemeName, SignatureScheme, SignatureSettings } from "../signature-scheme.js";
import { github } from "./github.js";
import { hmac } from "./hmac.js";
import { meta } from "./meta.js";
import { slack } from "./slack.js";
import { standardWebhooks } from "./standard-webhooks.js";
import { stripe } from "./stripe.js";
import { twilio } from "./twilio.js";

export const SCHEMES: { readonly [K in SchemeName]: SignatureScheme } = {
  github,
  stripe,
  slack,
  "standard-webhooks": standardWebhooks,
  twilio,
  meta,
  hmac,
};

export function schemeFor(name: SchemeName): SignatureScheme {
  return SCHEMES[name];
}

/** The headers that carry one path's signature: its scheme's, or the header a generic `hmac` mapping names. */
export function signatureHeadersFor(settings: SignatureSettings): readonly string[] {
  return settings.hmac ? [settings.hmac.header] : SCHEMES[settings.scheme].signatureHeaders;
}

/** Hidden on every path, whatever its scheme: a signature is a credential wherever it turns up. */
export const SIGNATURE_HEADERS: readonly string[] = [
  ...new Set(Object.values(SCHEMES).flatMap((scheme) => scheme.signatureHeaders)),
];
