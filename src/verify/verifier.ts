/** @module The Verifiers port: how a request proves it may use a hook (the hook token today; sender signatures next). */
import type { IncomingHttpHeaders } from "node:http";

/** What a verifier may look at; the body is not read yet. */
export interface CredentialsView {
  headers: IncomingHttpHeaders;
  query: URLSearchParams | undefined;
}

export type AuthVerdict =
  | { ok: true /** The token came in the deprecated `?token=` query. */; viaQuery: boolean }
  | { ok: false /** For the person reading the 401 (no detail about the secret). */; message: string };

export interface Verifier {
  /** Name for logs (`token`). */
  readonly kind: string;
  verify(request: CredentialsView): Promise<AuthVerdict>;
}

export interface Verifiers {
  /** The verifier that guards `hook` (every hook uses the token today). */
  forHook(hook: string): Verifier;
}
