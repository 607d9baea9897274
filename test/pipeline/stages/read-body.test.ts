/** @module The read-body stage: the body's bytes set on a new context; 413 once they pass the limit, 400 for a broken stream, 408 past the deadline; a body read already (a signed one) is left alone. */
import { Readable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createReadBodyStage } from "../../../src/pipeline/stages/read-body.js";
import { admittedContext, nextOf, refusalOf, runStage, watchedBody } from "./context.js";

const readBody = createReadBodyStage(30_000);
const limited = (body: string | Readable, maxBytes = 16) =>
  admittedContext({ route: { kind: "wake" }, bodyKind: "json", maxBytes, sent: body });

afterEach(() => {
  vi.useRealTimers();
});

describe("the read-body stage", () => {
  it("reads the whole body onto a new context", async () => {
    const ctx = limited(Readable.from([Buffer.from('{"text":'), Buffer.from('"hi"}')]));
    const next = await nextOf(readBody, ctx);
    expect(next.raw).toEqual(Buffer.from('{"text":"hi"}'));
    expect(next).toEqual({ ...ctx, raw: next.raw });
    expect(ctx.raw).toBeUndefined();
  });

  it("reads a large declared body into one buffer of its length; more bytes than declared are still all read", async () => {
    const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(4096, 97 + (i % 26)));
    const sent = Buffer.concat(chunks);
    const declared = (length: number, body: Buffer[]) =>
      admittedContext({
        route: { kind: "wake" },
        bodyKind: "json",
        maxBytes: 1024 * 1024,
        sent: Readable.from(body),
        headers: { "content-length": String(length) },
      });
    const whole = (await nextOf(readBody, declared(sent.length, chunks))).raw!;
    expect(whole.equals(sent)).toBe(true);
    const short = (await nextOf(readBody, declared(100_000, chunks))).raw!;
    expect(short.equals(sent)).toBe(true);
    const refused = await refusalOf(readBody, { ...declared(100_000, chunks), maxBytes: 150_000 });
    expect([refused.code, refused.status]).toEqual(["PAYLOAD_TOO_LARGE", 413]);
  });

  it("reads an empty body as no bytes", async () => {
    expect((await nextOf(readBody, limited(""))).raw).toEqual(Buffer.alloc(0));
  });

  it("takes a body of exactly the limit, and refuses one byte more: 413", async () => {
    expect((await nextOf(readBody, limited("x".repeat(16)))).raw?.length).toBe(16);
    const refused = await refusalOf(
      readBody,
      limited(Readable.from([Buffer.from("x".repeat(10)), Buffer.from("x".repeat(7))])),
    );
    expect([refused.code, refused.status]).toEqual(["PAYLOAD_TOO_LARGE", 413]);
  });

  it("refuses a stream that broke before it was read: 400 INVALID_PAYLOAD", async () => {
    const body = new Readable({ read() {} });
    body.destroy();
    const refused = await refusalOf(readBody, limited(body));
    expect([refused.code, refused.status]).toEqual(["INVALID_PAYLOAD", 400]);
  });

  it("refuses a body that does not arrive within the deadline: 408 BODY_TIMEOUT", async () => {
    vi.useFakeTimers();
    const stalled = new Readable({ read() {} });
    const pending = refusalOf(createReadBodyStage(5_000), limited(stalled));
    await vi.advanceTimersByTimeAsync(5_000);
    const refused = await pending;
    expect([refused.code, refused.status, refused.message]).toEqual([
      "BODY_TIMEOUT",
      408,
      "The body was not fully received within 5000 ms.",
    ]);
  });

  it("skips a body read already (a signed path's), without touching the stream", async () => {
    const body = watchedBody("ignored");
    const ctx = admittedContext({ route: { kind: "wake" }, raw: Buffer.from("{}"), sent: body });
    expect(await runStage(readBody, ctx)).toBe(ctx);
    expect(body.pulled()).toBe(false);
  });
});
