/** @module GitHub: `X-Hub-Signature-256: sha256=<hex>`, an HMAC-SHA256 of the raw body; no timestamp. */
import type { SignatureScheme } from "../signature-scheme.js";
import { headerValue, plainSecretProblem } from "./compare.js";
import { HUB_SIGNATURE, HUB_SIGNATURE_SHA1, hubSignature, verifyHubSignature } from "./hub-signature.js";

const DELIVERY = "x-github-delivery";

export const github: SignatureScheme = {
  name: "github",
  // The SHA-1 header carries a signature too: it is a credential even though only SHA-256 is checked.
  signatureHeaders: [HUB_SIGNATURE, HUB_SIGNATURE_SHA1],
  signsTimestamp: false,
  checkSecret: plainSecretProblem,
  verify: verifyHubSignature,
  sign(input) {
    return {
      headers: { [HUB_SIGNATURE]: hubSignature(input.secret, input.rawBody), [DELIVERY]: input.deliveryId },
    };
  },
  deliveryId: (headers) => headerValue(headers, DELIVERY),
};
