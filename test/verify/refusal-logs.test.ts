/** @module What a refused signature shows where, over real HTTP: the sender gets one generic sentence, the log says why in full. */
import Stripe from "stripe";
import twilio from "twilio";
import { afterEach, describe, expect, it } from "vitest";
import { sendRaw, startSignedHost, verificationLogs } from "../helpers/signed-host.js";
import type { TestHost } from "../helpers/test-host.js";

let host: TestHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

const GENERIC = { code: "UNAUTHORIZED", error: "The request's signature could not be verified." };

describe("a refused signature", () => {
  it("twilio: the log names the URL the signature was checked against and how to set verify.publicUrl", async () => {
    const authToken = "refusal-logs-twilio-token";
    const publicUrl = "https://hooks.example.com/hooks/twilio/sms";
    host = await startSignedHost([
      {
        id: "sms",
        match: { path: "twilio/sms" },
        action: "wake",
        textTemplate: "{{Body}}",
        verify: { scheme: "twilio", secret: authToken, publicUrl },
      },
    ]);
    // Twilio signed the URL it was given (a tunnel's), not the one configured.
    const body = "Body=meet+at+noon&From=%2B15550100";
    const params = Object.fromEntries(new URLSearchParams(body));
    const signature = twilio.getExpectedTwilioSignature(
      authToken,
      "https://tunnel.example.net/hooks/twilio/sms",
      params,
    );
    const sent = await sendRaw(host, "twilio/sms", body, {
      "content-type": "application/x-www-form-urlencoded",
      "x-twilio-signature": signature,
    });
    expect(sent.status).toBe(401);
    expect(JSON.parse(sent.text)).toMatchObject(GENERIC);
    expect(sent.text).not.toContain("hooks.example.com");
    const [log] = verificationLogs(host);
    expect(log).toBe(
      `hook "twilio/sms": twilio verification failed: signature mismatch against ${publicUrl}; if Twilio calls another URL, set this mapping's verify.publicUrl to it exactly as in the Twilio console`,
    );
    for (const hidden of [signature, authToken, "noon"]) expect(log).not.toContain(hidden);
  });

  it("stripe: the log gives the delivery's age and the tolerance, not how far past it", async () => {
    const secret = "whsec_refusal-logs-stripe";
    host = await startSignedHost([
      {
        id: "events",
        match: { path: "stripe/events" },
        action: "wake",
        textTemplate: "{{type}}",
        verify: { scheme: "stripe", secret },
      },
    ]);
    const payload = JSON.stringify({ id: "evt_1", type: "invoice.paid" });
    const header = new Stripe("sk_test_not_used").webhooks.generateTestHeaderString({
      payload,
      secret,
      timestamp: Math.floor(Date.now() / 1000) - 600,
    });
    const sent = await sendRaw(host, "stripe/events", payload, {
      "content-type": "application/json",
      "stripe-signature": header,
    });
    expect(sent.status).toBe(401);
    expect(JSON.parse(sent.text)).toMatchObject(GENERIC);
    // A second may pass between signing and checking.
    expect(verificationLogs(host)).toEqual([
      expect.stringMatching(
        /^hook "stripe\/events": stripe verification failed: timestamp is 60[01] s old; tolerance 300 s$/,
      ),
    ]);
  });
});
