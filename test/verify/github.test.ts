/** @module GitHub's scheme against @octokit/webhooks-methods as the signer and verifier. */
import { createHmac } from "node:crypto";
import { sign as octokitSign, verify as octokitVerify } from "@octokit/webhooks-methods";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { github } from "../../src/verify/schemes/github.js";
import type { SignatureSettings } from "../../src/verify/signature-scheme.js";
import {
  bytesBody,
  RUNS,
  request,
  requestFrom,
  secret,
  secretPair,
  tamperedBody,
  textBody,
} from "./arbitraries.js";

const settings = (secrets: string[]): SignatureSettings => ({
  scheme: "github",
  secrets,
  toleranceSeconds: 300,
});
const NOW = 1_700_000_000;
const nonEmptyText = textBody.filter((body) => body !== "");

function nodeSignature(key: string, body: Buffer): string {
  return "sha256=" + createHmac("sha256", key).update(body).digest("hex");
}

describe("github scheme", () => {
  it("accepts what octokit signs", async () => {
    await fc.assert(
      fc.asyncProperty(secret, nonEmptyText, async (key, payload) => {
        const header = await octokitSign(key, payload);
        const verdict = github.verify(
          request({ "x-hub-signature-256": header }, Buffer.from(payload), NOW),
          settings([key]),
        );
        expect(verdict).toEqual({ ok: true });
      }),
      RUNS,
    );
  });

  it("accepts arbitrary bytes signed as GitHub does, and refuses any one byte changed", () => {
    fc.assert(
      fc.property(secret, tamperedBody(bytesBody), (key, { body, changed }) => {
        const headers = { "x-hub-signature-256": nodeSignature(key, body) };
        expect(github.verify(request(headers, body, NOW), settings([key]))).toEqual({ ok: true });
        expect(github.verify(request(headers, changed, NOW), settings([key]))).toEqual({
          ok: false,
          reason: "signature mismatch",
        });
      }),
      RUNS,
    );
  });

  it("accepts the right secret second in the list, refuses a wrong one", () => {
    fc.assert(
      fc.property(secretPair, bytesBody, ([right, wrong], body) => {
        const headers = { "x-hub-signature-256": nodeSignature(right, body) };
        expect(github.verify(request(headers, body, NOW), settings([wrong, right])).ok).toBe(true);
        expect(github.verify(request(headers, body, NOW), settings([wrong]))).toEqual({
          ok: false,
          reason: "signature mismatch",
        });
      }),
      RUNS,
    );
  });

  it("signs what it verifies and what octokit verifies", async () => {
    await fc.assert(
      fc.asyncProperty(secret, nonEmptyText, fc.uuid(), async (key, payload, id) => {
        const body = Buffer.from(payload);
        const signed = github.sign(
          { rawBody: body, rawQuery: "", timestampSeconds: NOW, deliveryId: id, secret: key },
          settings([key]),
        );
        expect(signed.headers["x-github-delivery"]).toBe(id);
        expect(github.verify(requestFrom(signed, body, NOW), settings([key]))).toEqual({ ok: true });
        expect(await octokitVerify(key, payload, signed.headers["x-hub-signature-256"]!)).toBe(true);
      }),
      RUNS,
    );
  });

  it("names a missing or malformed header; the SHA-1 header alone is not enough", () => {
    const body = Buffer.from("{}");
    const sha1 = "sha1=" + createHmac("sha1", "s").update(body).digest("hex");
    expect(github.verify(request({ "x-hub-signature": sha1 }, body, NOW), settings(["s"]))).toEqual({
      ok: false,
      reason: "signature header missing",
    });
    expect(github.verify(request({ "x-hub-signature-256": sha1 }, body, NOW), settings(["s"]))).toEqual({
      ok: false,
      reason: "signature header malformed",
    });
    expect(
      github.verify(request({ "x-hub-signature-256": "sha256=00" }, body, NOW), settings(["s"])),
    ).toEqual({
      ok: false,
      reason: "signature mismatch",
    });
  });

  it("takes the delivery id from X-GitHub-Delivery and lists both signature headers", () => {
    expect(github.deliveryId({ "x-github-delivery": "d-1" }, {}, settings(["s"]))).toBe("d-1");
    expect(github.deliveryId({}, { id: "x" }, settings(["s"]))).toBeUndefined();
    expect(github.signatureHeaders).toEqual(["x-hub-signature-256", "x-hub-signature"]);
  });

  it("refuses empty and padded secrets without quoting them", () => {
    expect(github.checkSecret("")).toBeDefined();
    const padded = github.checkSecret("hunter2\n");
    expect(padded).toBeDefined();
    expect(padded).not.toContain("hunter2");
    expect(github.checkSecret("hunter2")).toBeUndefined();
  });
});
