/** @module Signed paths beyond the named senders: the generic hmac scheme, what mappings see, and the config checks of verify. */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { MappingInput } from "../../src/config/mapping-schema.js";
import { createHooksPlugin } from "../../src/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { flipped, sendRaw, startSignedHost, SENDERS_TOKEN as TOKEN } from "../helpers/signed-host.js";
import type { TestHost } from "../helpers/test-host.js";

let host: TestHost;
afterEach(async () => host?.close());

async function start(mappings: MappingInput[], hooks: Record<string, unknown> = {}) {
  host = await startSignedHost(mappings, hooks);
}
const send = (path: string, body: Buffer | string, headers: Record<string, string>) =>
  sendRaw(host, path, body, headers);

describe("hmac: a generic sender described in config", () => {
  it("sha512, base64, a prefix and a signed timestamp", async () => {
    const secret = randomBytes(16).toString("hex");
    await start([
      {
        id: "generic",
        match: { path: "generic" },
        action: "wake",
        textTemplate: "{{event}}",
        verify: {
          scheme: "hmac",
          secret,
          header: "X-Signature",
          algorithm: "sha512",
          encoding: "base64",
          prefix: "v1=",
          timestampHeader: "X-Timestamp",
          signedContent: "{timestamp}.{body}",
        },
      },
    ]);
    const body = Buffer.from('{"event":"build.finished"}');
    const signed = (timestamp: number, bytes = body) => ({
      "content-type": "application/json",
      "x-timestamp": String(timestamp),
      "x-signature": `v1=${createHmac("sha512", secret).update(`${timestamp}.`).update(bytes).digest("base64")}`,
    });
    const now = Math.floor(Date.now() / 1000);
    expect((await send("generic", body, signed(now))).status).toBe(200);
    expect((await send("generic", body, signed(now - 1000))).status).toBe(401);
    expect((await send("generic", flipped(body, 3), signed(now))).status).toBe(401);
  });

  it("hex signatures are compared whatever their case", async () => {
    const secret = "hex-case-secret";
    await start([
      {
        match: { path: "upper" },
        action: "wake",
        textTemplate: "x",
        verify: { scheme: "hmac", secret, header: "x-sig" },
      },
    ]);
    const body = Buffer.from('{"a":1}');
    const hex = createHmac("sha256", secret).update(body).digest("hex");
    const headers = (signature: string) => ({ "content-type": "application/json", "x-sig": signature });
    expect((await send("upper", body, headers(hex.toUpperCase()))).status).toBe(200);
    expect((await send("upper", body, headers(hex))).status).toBe(200);
  });
});

describe("limits on a signed path's unauthenticated bytes", () => {
  it("the body limit applies before the signature is checked: a declared or streamed body over it is 413", async () => {
    await start([
      {
        match: { path: "small" },
        action: "wake",
        textTemplate: "x",
        maxBodyBytes: 64,
        verify: { scheme: "github", secret: "limit-secret" },
      },
    ]);
    const big = Buffer.alloc(65, "a");
    const declared = await send("small", big, { "content-type": "application/json" });
    expect(declared.status).toBe(413);
    const streamed = await fetch(`${host.url}/hooks/small`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(big);
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(host.eventsOf("session:system-event")).toHaveLength(0);
  });
});

describe("what a signed path gives its mappings", () => {
  it("transforms get rawBody, the exact bytes; no signature header reaches them", async () => {
    const secret = "raw-body-secret-0123";
    await start([
      {
        id: "raw",
        match: { path: "raw" },
        action: "wake",
        transform: { module: "raw-body-digest.ts" },
        verify: { scheme: "github", secret },
      },
    ]);
    // Pretty-printed, with an escape a re-serialisation would change: the transform sees it as sent.
    const body = Buffer.from('{\n  "text": "caf\\u00e9",\n  "n": 1.50\n}');
    const response = await send("raw", body, {
      "content-type": "application/json",
      "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
      "x-github-delivery": "d-1",
    });
    expect(response.status).toBe(200);
    const [event] = host.eventsOf("session:system-event");
    const seen = JSON.parse(event!.raw!);
    expect(seen).toMatchObject({
      bytes: body.length,
      sha256: createHash("sha256").update(body).digest("hex"),
      isBuffer: true,
    });
    expect(seen.headers).toContain("x-github-delivery");
    expect(seen.headers).not.toContain("x-hub-signature-256");
  });
});

describe("config checks of verify", () => {
  it("lists every problem, never quoting a secret", () => {
    const secret = "do-not-print-this-secret";
    const plugin = createHooksPlugin();
    let message = "";
    try {
      plugin.register({
        config: {
          hooks: {
            enabled: true,
            token: TOKEN,
            dedupe: { windowSeconds: 100 },
            mappings: [
              { action: "wake", textTemplate: "x", verify: { scheme: "github", secret } },
              {
                match: { path: "tw" },
                action: "wake",
                textTemplate: "x",
                verify: { scheme: "twilio", secret },
              },
              {
                match: { path: "sw" },
                action: "wake",
                textTemplate: "x",
                verify: { scheme: "standard-webhooks", secret: `whpk_${secret}` },
              },
              {
                match: { path: "p" },
                action: "wake",
                textTemplate: "x",
                verify: { scheme: "github", secret },
              },
              {
                match: { path: "p" },
                action: "wake",
                textTemplate: "y",
                verify: { scheme: "stripe", secret },
              },
              {
                match: { path: "h" },
                action: "wake",
                textTemplate: "x",
                verify: { scheme: "hmac", secret, signedContent: "{timestamp}" },
              },
              {
                match: { path: "g" },
                action: "wake",
                textTemplate: "x",
                verify: { scheme: "github", secret, header: "x-sig" },
              },
            ],
          },
        },
        configDir: REPO_ROOT,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
        bus: undefined as never,
        registerHttpRoute() {},
        registerService() {},
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("hooks.mappings[0].verify: needs match.path");
    expect(message).toContain("hooks.mappings[1].verify.publicUrl: is required for twilio");
    expect(message).toContain("hooks.mappings[2].verify.secret:");
    expect(message).toContain(
      'hooks.mappings[4].verify: differs from hooks.mappings[3].verify on the same path "p"',
    );
    expect(message).toContain("hooks.mappings[5].verify.header: is required");
    expect(message).toContain("hooks.mappings[5].verify.signedContent: must include {body}");
    expect(message).toContain('hooks.mappings[6].verify.header: is read by the "hmac" scheme only');
    expect(message).toContain("hooks.dedupe.windowSeconds: must be at least twice");
    expect(message).not.toContain(secret);
  });

  it("a secret of the wrong shape is not quoted back, and a timestamp the signature does not cover is refused", async () => {
    const secret = "whsec_do-not-print-this-either";
    await expect(
      start([
        {
          match: { path: "a" },
          action: "wake",
          textTemplate: "x",
          verify: { scheme: "stripe", secrets: secret as never },
        },
        {
          match: { path: "b" },
          action: "wake",
          textTemplate: "x",
          verify: {
            scheme: "hmac",
            secret: "s",
            header: "x-sig",
            timestampHeader: "x-ts",
            signedContent: "{body}",
          },
        },
      ]),
    ).rejects.toThrow(
      expect.objectContaining({
        message: expect.stringMatching(
          /hooks\.mappings\[0\]\.verify\.secrets: must be a list of secrets[\s\S]*hooks\.mappings\[1\]\.verify\.signedContent: must include \{timestamp\}/,
        ),
      }),
    );
    await expect(
      start([
        {
          match: { path: "a" },
          action: "wake",
          textTemplate: "x",
          verify: { scheme: "stripe", secrets: secret as never },
        },
      ]),
    ).rejects.not.toThrow(secret);
  });
});
