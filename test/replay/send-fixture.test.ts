/** @module What `--send` prints for each kind of answer: what the gateway did, and a duplicate as nothing done. */
import { describe, expect, it } from "vitest";
import { describeSent, type SentFixture } from "../../src/replay/send-fixture.js";

const sent = (status: number, body: unknown, duplicate = false): SentFixture => ({
  status,
  requestId: "r-1",
  duplicate,
  body,
});

describe("describeSent", () => {
  it.each([
    [sent(200, { ok: true, mode: "now", eventId: "e-1" }), "200 accepted: eventId=e-1"],
    [
      sent(202, {
        ok: true,
        runId: "run-1",
        sessionKey: "hook:x",
        mappingId: "m",
        runIds: ["run-1", "run-2"],
      }),
      "202 accepted: mappingId=m runId=run-1 sessionKey=hook:x runs=2",
    ],
    [
      sent(200, {
        ok: true,
        runId: "run-1",
        sessionKey: "hook:x",
        status: "ok",
        reply: "visible",
        delivered: true,
      }),
      "200 accepted: runId=run-1 sessionKey=hook:x turn=ok reply=visible",
    ],
    [sent(204, null), "204 accepted: nothing to do"],
    [sent(200, "<Response/>"), "200 accepted <Response/>"],
    [
      sent(401, { ok: false, error: "The request's signature could not be verified.", code: "UNAUTHORIZED" }),
      "401 refused UNAUTHORIZED: The request's signature could not be verified.",
    ],
    [
      sent(202, { ok: true, runId: "run-0", sessionKey: "hook:x" }, true),
      "202 duplicate: nothing done (the gateway had already accepted this delivery id; its first answer: runId=run-0 sessionKey=hook:x)",
    ],
    [
      sent(204, null, true),
      "204 duplicate: nothing done (the gateway had already accepted this delivery id)",
    ],
  ])("%j → %s", (answer, line) => {
    expect(describeSent(answer)).toBe(line);
  });
});
