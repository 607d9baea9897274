/** @module The credential rule for query parameters: the deprecated `?token=` and any name that says it holds a secret. */
import { describe, expect, it } from "vitest";
import {
  isCredentialHeader,
  isCredentialQuery,
  queryWithoutCredentials,
  urlWithoutCredentials,
} from "../../src/safety/credentials.js";

describe("credential query parameters", () => {
  const query = new URLSearchParams(
    "token=t1&api_key=k1&access_token=t2&Signature=s1&session_id=s2&page=2&event=push&idempotency_key=d1",
  );

  it("are judged by the header rule, underscores read as dashes", () => {
    for (const name of [
      "token",
      "api_key",
      "access_token",
      "Signature",
      "session_id",
      "client_secret",
      "hub.verify_token",
      "pass",
      "sig",
      "bearer",
      "access",
      "pwd",
      "user.pass",
    ])
      expect(isCredentialQuery(name), name).toBe(true);
    for (const name of [
      "page",
      "event",
      "idempotency_key",
      "sort",
      "hub.challenge",
      "hub.mode",
      "signal",
      "passenger",
      "compass",
      "accessible",
    ])
      expect(isCredentialQuery(name), name).toBe(false);
  });

  it("are left out of the view and the recorded URL", () => {
    expect(queryWithoutCredentials(query)).toEqual({ page: "2", event: "push", idempotency_key: "d1" });
    expect(urlWithoutCredentials("/hooks/x", query)).toBe("/hooks/x?page=2&event=push&idempotency_key=d1");
  });
});

describe("credential headers", () => {
  it("are named by a word that says so, wherever it stands in the name", () => {
    for (const name of [
      "X-Pass",
      "X-Bearer",
      "X-Access",
      "X-Sig",
      "X-Pwd",
      "X-Passphrase",
      "Pass",
      "X-Access-Level",
      "X-Auth-Token",
      "X-Webhook-Password",
    ])
      expect(isCredentialHeader(name), name).toBe(true);
  });

  it("leave readable what mappings route on, and words that only contain those", () => {
    for (const name of [
      "Accept",
      "Accept-Encoding",
      "Idempotency-Key",
      "X-Event-Key",
      "X-GitHub-Event",
      "X-Signal",
      "X-Passenger-Count",
      "X-Compass",
      "Access-Control-Request-Method",
      "Access-Control-Request-Headers",
      "Content-Type",
    ])
      expect(isCredentialHeader(name), name).toBe(false);
  });
});
