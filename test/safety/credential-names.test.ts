/** @module The credential rule for query parameters: the deprecated `?token=` and any name that says it holds a secret. */
import { describe, expect, it } from "vitest";
import {
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
    ])
      expect(isCredentialQuery(name), name).toBe(true);
    for (const name of ["page", "event", "idempotency_key", "sort", "hub.challenge", "hub.mode"])
      expect(isCredentialQuery(name), name).toBe(false);
  });

  it("are left out of the view and the recorded URL", () => {
    expect(queryWithoutCredentials(query)).toEqual({ page: "2", event: "push", idempotency_key: "d1" });
    expect(urlWithoutCredentials("/hooks/x", query)).toBe("/hooks/x?page=2&event=push&idempotency_key=d1");
  });
});
