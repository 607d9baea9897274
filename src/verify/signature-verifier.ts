/** @module The verifier of a signed path: the sender's signature on the exact bytes, or the hook token where the path allows it. */

import { schemeFor, signatureHeadersFor } from "./schemes/index.js";
import { signatureFailureOf } from "./signature-failure.js";
import type { GetHandshake, SignatureSettings } from "./signature-scheme.js";
import { signedDeliveryId } from "./signed-delivery-id.js";
import { BEARER_CHALLENGE, createTokenCheck, createTokenComparer, createTokenVerifier } from "./token.js";
import {
  type AuthVerdict,
  type HandshakeVerifier,
  NEEDS_BODY,
  type Verifier,
  type Verifiers,
} from "./verifier.js";

/** How one path is verified. */
export interface SignedPath {
  settings: SignatureSettings;
  /** Whether the hook token is accepted there too. */
  tokenAlso: boolean;
}

/** One sentence for every signature failure: the response never says which check failed. */
const REFUSED = "The request's signature could not be verified.";

export function createSignatureVerifier(path: SignedPath, token: string): Verifier {
  const { settings } = path;
  const scheme = schemeFor(settings.scheme);
  const checkToken = path.tokenAlso ? createTokenCheck(token) : undefined;
  const signatureHeaders = signatureHeadersFor(settings);
  return {
    kind: settings.scheme,
    signsBody: true,
    async verify(request, rawBody): Promise<AuthVerdict> {
      // The rule: a verified signature or, where the path allows it, the correct token, whatever signature headers
      // came with it. Before the body is read only the correct token gets in; a wrong one is the answer only when no
      // signature came, else the signature's verdict is.
      const token = checkToken?.(request);
      if (rawBody === undefined) return token?.ok ? token : NEEDS_BODY;
      if (token) {
        const signed = signatureHeaders.some((name) => request.headers[name] !== undefined);
        if (token.ok || !signed) return token.ok ? token : { ...token, challenge: BEARER_CHALLENGE };
      }
      const verdict = scheme.verify(
        {
          headers: request.headers,
          rawBody,
          rawQuery: request.rawQuery ?? "",
          nowSeconds: Math.floor((request.now ?? Date.now()) / 1000),
        },
        settings,
      );
      if (verdict.ok) return { ok: true, viaQuery: false };
      const failure = signatureFailureOf(verdict.reason);
      return {
        ok: false,
        message: REFUSED,
        reason: verdict.reason,
        credential: failure === "missing" ? "missing" : "invalid",
        signature: failure,
        ...(path.tokenAlso && { challenge: BEARER_CHALLENGE }),
      };
    },
    deliveryId: (headers, body, rawBody) =>
      rawBody === undefined
        ? scheme.deliveryId(headers, body, settings)
        : signedDeliveryId(scheme, settings, { headers, body, rawBody }),
    ...(scheme.getHandshake &&
      settings.verifyToken !== undefined && {
        handshake: createHandshakeVerifier(settings.scheme, scheme.getHandshake, settings.verifyToken),
      }),
    ...(scheme.bodyChallenge && { bodyChallenge: scheme.bodyChallenge }),
  };
}

const HANDSHAKE_REFUSED = "The verify token is not this hook's.";

/** The GET's verify token stands where the hook token would: compared in constant time, its failures counted alike. */
function createHandshakeVerifier(
  kind: string,
  handshake: GetHandshake,
  verifyToken: string,
): HandshakeVerifier {
  const matches = createTokenComparer(verifyToken);
  return {
    kind,
    signsBody: false,
    async verify(request): Promise<AuthVerdict> {
      const sent = handshake.verifyTokenOf(request.query);
      if (sent !== undefined && matches(sent)) return { ok: true, viaQuery: false, weak: true };
      return {
        ok: false,
        message: HANDSHAKE_REFUSED,
        reason: sent === undefined ? "verify token missing" : "verify token wrong",
        credential: sent === undefined ? "missing" : "invalid",
        forbidden: true,
      };
    },
    challengeOf: (query) => handshake.challengeOf(query),
  };
}

export interface VerifiersInput {
  /** The hook token. */
  token: string;
  /** Hook paths whose sender signs, by hook name. */
  signedPaths: ReadonlyMap<string, SignedPath>;
}

/** The token guards every hook except the signed paths, which their signature (and perhaps the token) guards. */
export function createVerifiers(input: VerifiersInput): Verifiers {
  const tokenVerifier = createTokenVerifier(input.token);
  const signed = new Map<string, Verifier>();
  for (const [hook, path] of input.signedPaths) signed.set(hook, createSignatureVerifier(path, input.token));
  return { forHook: (hook) => signed.get(hook) ?? tokenVerifier };
}
