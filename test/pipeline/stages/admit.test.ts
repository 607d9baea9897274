/** @module The admit stage: the client's own address (behind a trusted proxy, the forwarded one) and the client it counts against (an IPv6 address's /64) set on a new context. */
import { describe, expect, it } from "vitest";
import { createAdmitStage, createSourceAddressResolver } from "../../../src/pipeline/stages/admit.js";
import { contextOf, nextOf } from "./context.js";

const direct = createAdmitStage(createSourceAddressResolver([]));
const behindProxy = createAdmitStage(createSourceAddressResolver(["10.0.0.0/8"]));

describe("the admit stage", () => {
  it("sets the socket's address and the same client on a new context", async () => {
    const ctx = contextOf({ remoteAddress: "192.0.2.44" });
    const next = await nextOf(direct, ctx);
    expect(next).not.toBe(ctx);
    expect([next.address, next.client]).toEqual(["192.0.2.44", "192.0.2.44"]);
    expect([ctx.address, ctx.client]).toEqual([undefined, undefined]);
    expect(next).toEqual({ ...ctx, address: "192.0.2.44", client: "192.0.2.44" });
  });

  it("counts an IPv6 address against its /64, and keeps the exact address beside it", async () => {
    const next = await nextOf(direct, contextOf({ remoteAddress: "2001:db8:0:1:aaaa:bbbb:cccc:dddd" }));
    expect([next.address, next.client]).toEqual(["2001:db8:0:1:aaaa:bbbb:cccc:dddd", "2001:db8:0:1::/64"]);
    // Two addresses of one /64, however written, are one client.
    const sibling = await nextOf(direct, contextOf({ remoteAddress: "2001:DB8:0:1::1:1" }));
    expect(sibling.client).toBe("2001:db8:0:1::/64");
  });

  it("counts an IPv4-mapped address as the IPv4 address", async () => {
    const next = await nextOf(direct, contextOf({ remoteAddress: "::ffff:198.51.100.7" }));
    expect([next.address, next.client]).toEqual(["::ffff:198.51.100.7", "198.51.100.7"]);
  });

  it("ignores X-Forwarded-For when no proxy is trusted", async () => {
    const next = await nextOf(
      direct,
      contextOf({ remoteAddress: "10.1.2.3", headers: { "x-forwarded-for": "203.0.113.7" } }),
    );
    expect(next.address).toBe("10.1.2.3");
  });

  it("behind a trusted proxy takes the nearest untrusted hop of X-Forwarded-For", async () => {
    const next = await nextOf(
      behindProxy,
      contextOf({
        remoteAddress: "10.1.2.3",
        headers: { "x-forwarded-for": "198.51.100.9, 203.0.113.7, 10.0.0.5" },
      }),
    );
    expect([next.address, next.client]).toEqual(["203.0.113.7", "203.0.113.7"]);
  });

  it("behind a trusted proxy a forwarded IPv6 client is counted by its /64", async () => {
    const next = await nextOf(
      behindProxy,
      contextOf({ remoteAddress: "10.1.2.3", headers: { "x-forwarded-for": "2001:db8:5:6::42" } }),
    );
    expect([next.address, next.client]).toEqual(["2001:db8:5:6::42", "2001:db8:5:6::/64"]);
  });

  it("does not take X-Forwarded-For from a peer that is not a trusted proxy", async () => {
    const next = await nextOf(
      behindProxy,
      contextOf({ remoteAddress: "198.51.100.4", headers: { "x-forwarded-for": "203.0.113.7" } }),
    );
    expect(next.address).toBe("198.51.100.4");
  });
});
