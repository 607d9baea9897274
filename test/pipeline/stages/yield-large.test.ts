/** @module The pause for a large body: a body over 1 MiB waits a turn of the event loop (other work runs first); a small one passes at once. */
import net from "node:net";
import { describe, expect, it } from "vitest";
import { parse } from "../../../src/pipeline/stages/parse.js";
import { decodeLarge, YIELD_ABOVE_BYTES, yieldLarge } from "../../../src/pipeline/stages/yield-large.js";
import { admittedContext } from "./context.js";

describe("the pause for a large body", () => {
  it("lets bytes that arrived on another connection be handled before a large body's next stage", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    const accepted = new Promise<net.Socket>((resolve) => server.once("connection", resolve));
    const client = net.connect(port, "127.0.0.1");
    const peer = await accepted;
    try {
      const order: string[] = [];
      peer.on("data", () => order.push("other request"));
      // From a timer, as a stage runs after a body's last bytes: the loop polls for I/O before it checks immediates.
      await new Promise((resolve) => setTimeout(resolve, 0));
      client.write("x"); // in the kernel at once on loopback: ready before the stage below returns
      const ctx = admittedContext({ route: { kind: "wake" }, raw: Buffer.alloc(YIELD_ABOVE_BYTES + 1) });
      const next = yieldLarge(ctx);
      expect(next).toBeInstanceOf(Promise);
      expect(await next).toBe(ctx);
      order.push("large body");
      expect(order).toEqual(["other request", "large body"]);
    } finally {
      client.destroy();
      peer.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("passes a small body, or none yet, on at once: nothing awaited", () => {
    for (const raw of [undefined, Buffer.alloc(YIELD_ABOVE_BYTES)]) {
      const ctx = admittedContext({ route: { kind: "wake" }, raw });
      expect(yieldLarge(ctx)).toBe(ctx);
    }
  });

  it("decodes a large body in a step of its own, which the parse stage then reads; a small one is left to the parse", async () => {
    const text = JSON.stringify({ text: "é".repeat(YIELD_ABOVE_BYTES / 2) });
    const large = admittedContext({ route: { kind: "wake" }, bodyKind: "json", raw: Buffer.from(text) });
    // Compared field by field: a deep comparison of a megabyte Buffer runs byte by byte in JavaScript.
    const decoded = (await decodeLarge(large)) as typeof large;
    expect([decoded.text, decoded.raw, decoded.route]).toEqual([text, large.raw, large.route]);
    const parsed = (await parse(decoded)) as typeof large;
    expect([parsed.text, parsed.body]).toEqual([text, JSON.parse(text)]);
    const small = admittedContext({ route: { kind: "wake" }, bodyKind: "json", raw: Buffer.from('{"a":1}') });
    expect(decodeLarge(small)).toBe(small);
  });
});
