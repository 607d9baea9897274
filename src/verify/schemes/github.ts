/** @module GitHub: `X-Hub-Signature-256: sha256=<hex>`, an HMAC-SHA256 of the raw body; no timestamp. */
import type { SignatureScheme } from "../signature-scheme.js";
import { equalBytes, headerValue, macOf, plainSecretProblem } from "./compare.js";

const SIGNATURE = "x-hub-signature-256";
const PREFIX = "sha256=";
const DELIVERY = "x-github-delivery";

function signature(secret: string, body: Buffer): string {
  return PREFIX + macOf("sha256", secret, [body]).toString("hex");
}

export const github: SignatureScheme = {
  name: "github",
  // The SHA-1 header carries a signature too: it is a credential even though only SHA-256 is checked.
  signatureHeaders: [SIGNATURE, "x-hub-signature"],
  signsTimestamp: false,
  checkSecret: plainSecretProblem,
  verify(request, settings) {
    const sent = headerValue(request.headers, SIGNATURE);
    if (sent === undefined) return { ok: false, reason: "signature header missing" };
    if (!sent.startsWith(PREFIX)) return { ok: false, reason: "signature header malformed" };
    const matches = settings.secrets.some((secret) => equalBytes(sent, signature(secret, request.rawBody)));
    return matches ? { ok: true } : { ok: false, reason: "signature mismatch" };
  },
  sign(input) {
    return { headers: { [SIGNATURE]: signature(input.secret, input.rawBody), [DELIVERY]: input.deliveryId } };
  },
  deliveryId: (headers) => headerValue(headers, DELIVERY),
};
