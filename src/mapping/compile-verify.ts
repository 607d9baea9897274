/** @module Compiles each mapping's `verify` block into the verification of its path, with every problem found at startup. */
import type { ConfigIssue } from "../config/issues.js";
import type { MappingVerifyConfig } from "../config/mapping-schema.js";
import { schemeFor } from "../verify/schemes/index.js";
import type { SignatureSettings } from "../verify/signature-scheme.js";
import { signsDeliveryId } from "../verify/signed-delivery-id.js";

/** How requests on one hook path prove who sent them. */
export interface PathVerification {
  settings: SignatureSettings;
  /** Whether the hook token is accepted there too. */
  tokenAlso: boolean;
  /** The mapping whose `verify` block this is (for messages and `hooks check`). */
  mappingId: string;
  configPath: string;
}

/** Fields only the generic `hmac` scheme reads. */
const HMAC_ONLY = [
  "header",
  "algorithm",
  "encoding",
  "prefix",
  "timestampHeader",
  "signedContent",
  "idHeader",
] as const;
const PLACEHOLDERS = /\{(body|timestamp|id)\}/g;

/** The verification a `verify` block declares, or undefined when it has problems (pushed to `issues`). */
export function compileVerify(
  verify: MappingVerifyConfig,
  at: string,
  issues: ConfigIssue[],
): Omit<PathVerification, "mappingId" | "configPath"> | undefined {
  const before = issues.length;
  const secrets = checkSecrets(verify, at, issues);
  checkTwilioFields(verify, at, issues);
  checkMetaFields(verify, secrets, at, issues);
  checkHmacFields(verify, at, issues);
  const signedContent = verify.signedContent ?? (verify.timestampHeader ? "{timestamp}.{body}" : "{body}");
  if (verify.scheme === "hmac") checkSignedContent(signedContent, verify, at, issues);
  if (issues.length > before) return undefined;
  return { settings: signatureSettings(verify, secrets, signedContent), tokenAlso: verify.tokenAlso };
}

/** The block's secrets (one, or a list during a rotation), each checked by its scheme. */
function checkSecrets(verify: MappingVerifyConfig, at: string, issues: ConfigIssue[]): string[] {
  const scheme = schemeFor(verify.scheme);
  if ((verify.secret === undefined) === (verify.secrets === undefined)) {
    issues.push({
      path: `${at}.secret`,
      message: "give either secret or secrets (a list, during a rotation)",
    });
  }
  const secrets = verify.secrets ?? (verify.secret === undefined ? [] : [verify.secret]);
  secrets.forEach((secret, index) => {
    const problem = scheme.checkSecret(secret);
    const where = verify.secrets ? `${at}.secrets[${index}]` : `${at}.secret`;
    if (problem !== undefined) issues.push({ path: where, message: problem });
  });
  return secrets;
}

/** `publicUrl`: required by the twilio scheme, read by no other, and without a query string. */
function checkTwilioFields(verify: MappingVerifyConfig, at: string, issues: ConfigIssue[]): void {
  if (verify.scheme === "twilio" && verify.publicUrl === undefined) {
    issues.push({
      path: `${at}.publicUrl`,
      message: "is required for twilio: the URL exactly as Twilio calls it (the signature covers it)",
    });
  }
  if (verify.scheme !== "twilio" && verify.publicUrl !== undefined) {
    issues.push({ path: `${at}.publicUrl`, message: "is read by the twilio scheme only" });
  }
  if (verify.publicUrl?.includes("?")) {
    issues.push({
      path: `${at}.publicUrl`,
      message: "must not carry a query string: the query of each request is appended as received",
    });
  }
}

/** `verifyToken`: required by the meta scheme, read by no other, and never one of the secrets. */
function checkMetaFields(
  verify: MappingVerifyConfig,
  secrets: readonly string[],
  at: string,
  issues: ConfigIssue[],
): void {
  if (verify.scheme === "meta" && verify.verifyToken === undefined) {
    issues.push({
      path: `${at}.verifyToken`,
      message: "is required for meta: the verify token the app's subscription request carries",
    });
  }
  if (verify.scheme !== "meta" && verify.verifyToken !== undefined) {
    issues.push({ path: `${at}.verifyToken`, message: "is read by the meta scheme only" });
  }
  // The verify token travels in a URL (Meta's, the proxies' logs): one equal to the app secret would publish it.
  if (verify.verifyToken !== undefined && secrets.includes(verify.verifyToken)) {
    issues.push({
      path: `${at}.verifyToken`,
      message: "must differ from the app secret: it is sent in a URL",
    });
  }
}

/** The generic scheme's own fields: read by it alone, and its signature header required. */
function checkHmacFields(verify: MappingVerifyConfig, at: string, issues: ConfigIssue[]): void {
  if (verify.scheme !== "hmac") {
    for (const field of HMAC_ONLY) {
      if (verify[field] !== undefined)
        issues.push({ path: `${at}.${field}`, message: 'is read by the "hmac" scheme only' });
    }
  } else if (verify.header === undefined) {
    issues.push({
      path: `${at}.header`,
      message: 'is required for the "hmac" scheme: the header carrying the signature',
    });
  }
}

/** What an `hmac` signature covers: always the body, and each placeholder it uses with the header that carries it. */
function checkSignedContent(
  signedContent: string,
  verify: MappingVerifyConfig,
  at: string,
  issues: ConfigIssue[],
): void {
  const used = new Set([...signedContent.matchAll(PLACEHOLDERS)].map((match) => match[1]));
  if (!used.has("body"))
    issues.push({
      path: `${at}.signedContent`,
      message: "must include {body}: the signature has to cover the body",
    });
  if (used.has("timestamp") && verify.timestampHeader === undefined)
    issues.push({ path: `${at}.signedContent`, message: "uses {timestamp}: set timestampHeader too" });
  // A window on a timestamp the signature does not cover stops nothing: a replay just sends a new one.
  if (!used.has("timestamp") && verify.timestampHeader !== undefined)
    issues.push({
      path: `${at}.signedContent`,
      message: "must include {timestamp} when timestampHeader is set, or the signature does not cover it",
    });
  if (used.has("id") && verify.idHeader === undefined)
    issues.push({ path: `${at}.signedContent`, message: "uses {id}: set idHeader too" });
}

/** The settings a checked block declares, with the `hmac` scheme's defaults and its header names lower-cased. */
function signatureSettings(
  verify: MappingVerifyConfig,
  secrets: string[],
  signedContent: string,
): SignatureSettings {
  const settings: SignatureSettings = {
    scheme: verify.scheme,
    secrets,
    toleranceSeconds: verify.toleranceSeconds,
    publicUrl: verify.publicUrl,
    verifyToken: verify.verifyToken,
  };
  if (verify.scheme === "hmac") {
    settings.hmac = {
      header: verify.header!.toLowerCase(),
      algorithm: verify.algorithm ?? "sha256",
      encoding: verify.encoding ?? "hex",
      prefix: verify.prefix ?? "",
      timestampHeader: verify.timestampHeader?.toLowerCase(),
      signedContent,
      idHeader: verify.idHeader?.toLowerCase(),
    };
  }
  return settings;
}

/** Two blocks declare the same verification when they are equal field by field. */
export function sameVerify(a: MappingVerifyConfig, b: MappingVerifyConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Warnings for `hmac` mappings whose copies a signature cannot tell apart: no signed id, so the id header (if any) can
 * be changed, and what the plugin does instead (the same body within the duplicate window is the same delivery).
 */
export function verifyWarnings(signedPaths: ReadonlyMap<string, PathVerification>): string[] {
  const warnings: string[] = [];
  for (const { settings, configPath } of signedPaths.values()) {
    const options = settings.hmac;
    if (options === undefined || signsDeliveryId(schemeFor(settings.scheme), settings)) continue;
    const at = `${configPath}.verify`;
    const sameBody =
      "the plugin takes the same body within hooks.dedupe.windowSeconds as the same delivery, whatever its id";
    const unsigned =
      options.idHeader === undefined ? "" : ` (its idHeader ${options.idHeader} is not in signedContent)`;
    if (options.timestampHeader === undefined) {
      warnings.push(
        `${at}: the sender signs neither a timestamp nor its delivery id${unsigned}: a captured delivery can be sent again under any id, at any time; ${sameBody}, and a copy sent after that window is a new delivery. If the sender signs a timestamp or its id, say so in signedContent ({timestamp} with timestampHeader, {id} with idHeader).`,
      );
    } else if (options.idHeader !== undefined) {
      warnings.push(
        `${at}: its id header ${options.idHeader} is not signed: a copy with a new id would be a new delivery, so ${sameBody} (a copy is refused anyway once its timestamp is older than toleranceSeconds). If the sender signs its id, add {id} to signedContent.`,
      );
    } else {
      warnings.push(
        `${at}: the sender signs no delivery id: the plugin takes the same signed timestamp and body as the same delivery (a copy is refused anyway once its timestamp is older than toleranceSeconds), and a retry the sender signs anew runs again. If the sender sends an id, name it in idHeader and add {id} to signedContent.`,
      );
    }
  }
  return warnings;
}
