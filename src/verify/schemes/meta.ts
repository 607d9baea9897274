/**
 * @module Meta (WhatsApp Cloud API, Messenger, Instagram): `X-Hub-Signature-256: sha256=<hex>`, an HMAC-SHA256 of the
 * raw body keyed with the app secret; no timestamp, no delivery id; and the subscription GET with `hub.verify_token`.
 */
import type { SignatureScheme } from "../signature-scheme.js";
import { challengeVerdict } from "./challenge.js";
import { equalBytes, headerValue, macOf, plainSecretProblem } from "./compare.js";

const SIGNATURE = "x-hub-signature-256";
const PREFIX = "sha256=";

function signature(secret: string, body: Buffer): string {
  return PREFIX + macOf("sha256", secret, [body]).toString("hex");
}

export const meta: SignatureScheme = {
  name: "meta",
  // Meta sends the SHA-1 header beside the SHA-256 one: a signature all the same, so a credential.
  signatureHeaders: [SIGNATURE, "x-hub-signature"],
  checkSecret(secret) {
    const plain = plainSecretProblem(secret);
    if (plain !== undefined) return plain;
    // The access token is the other long string on the app's pages, and the one most often pasted by mistake.
    if (secret.startsWith("EAA"))
      return "looks like an access token (EAA…): the app secret is in the app's settings, under Basic";
    return undefined;
  },
  // What is signed is the body alone, no timestamp: a copy sent again verifies at any time. Only the duplicate
  // check on signature and body catches it (the schemes that sign no timestamp).
  verify(request, settings) {
    const sent = headerValue(request.headers, SIGNATURE);
    if (sent === undefined) return { ok: false, reason: "signature header missing" };
    if (!sent.startsWith(PREFIX)) return { ok: false, reason: "signature header malformed" };
    const matches = settings.secrets.some((secret) => equalBytes(sent, signature(secret, request.rawBody)));
    return matches ? { ok: true } : { ok: false, reason: "signature mismatch" };
  },
  sign(input) {
    return { headers: { [SIGNATURE]: signature(input.secret, input.rawBody) } };
  },
  // Meta sends no delivery id, in its headers or its body (an entry's `id` is the account, not the delivery).
  deliveryId: () => undefined,
  getHandshake: {
    verifyTokenOf(query) {
      const token = query?.get("hub.verify_token");
      return token === null || token === undefined || token === "" ? undefined : token;
    },
    challengeOf(query) {
      if (query?.get("hub.mode") !== "subscribe") return { ok: false, reason: "hub.mode is not subscribe" };
      return challengeVerdict(query.get("hub.challenge"));
    },
  },
};
