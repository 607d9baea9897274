/**
 * @module Meta (WhatsApp Cloud API, Messenger, Instagram): `X-Hub-Signature-256: sha256=<hex>`, an HMAC-SHA256 of the
 * raw body keyed with the app secret; no timestamp, no delivery id; and the subscription GET with `hub.verify_token`.
 */
import type { SignatureScheme } from "../signature-scheme.js";
import { challengeVerdict } from "./challenge.js";
import { plainSecretProblem } from "./compare.js";
import { HUB_SIGNATURE, HUB_SIGNATURE_SHA1, hubSignature, verifyHubSignature } from "./hub-signature.js";

export const meta: SignatureScheme = {
  name: "meta",
  signatureHeaders: [HUB_SIGNATURE, HUB_SIGNATURE_SHA1],
  checkSecret(secret) {
    const plain = plainSecretProblem(secret);
    if (plain !== undefined) return plain;
    // The access token is the other long string on the app's pages, and the one most often pasted by mistake.
    if (secret.startsWith("EAA"))
      return "looks like an access token (EAA…): the app secret is in the app's settings, under Basic";
    return undefined;
  },
  // What is signed is the body alone, no timestamp: the duplicate check keys a delivery by its body's digest.
  signsTimestamp: false,
  verify: verifyHubSignature,
  sign(input) {
    return { headers: { [HUB_SIGNATURE]: hubSignature(input.secret, input.rawBody) } };
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
