/** @module The client a request is counted against: IPv4 as it is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64 (the gateway's connection caps use the same function). */
import { describe, expect, it } from "vitest";
import { clientGroup, createClientAddressResolver } from "../../src/pipeline/stages/admit.js";

describe("client grouping", () => {
  it.each([
    ["10.1.2.3", "10.1.2.3"],
    ["::ffff:10.1.2.3", "10.1.2.3"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:db8:1:2:ffff:eeee:dddd:cccc", "2001:db8:1:2::/64"],
    ["2001:0DB8:0001:0002:0000:0000:0000:0001", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["2001:db8::1:2:3:4", "2001:db8:0:0::/64"],
    ["2001:db8:0:0:1::1", "2001:db8:0:0::/64"],
    ["2001:db8:1::2:3:4:5", "2001:db8:1:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["::", "0:0:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["64:ff9b::10.1.2.3", "64:ff9b:0:0::/64"],
    ["1:2:3:4:5:6:10.1.2.3", "1:2:3:4::/64"],
    ["unknown", "unknown"],
  ])("%s → %s", (address, client) => {
    expect(clientGroup(address)).toBe(client);
  });

  it("puts every address of one /64 in one group and neighbouring /64s in others", () => {
    const inside = ["2001:db8:a:b::1", "2001:db8:a:b:1::", "2001:db8:a:b:dead:beef:0:1"];
    expect(new Set(inside.map(clientGroup)).size).toBe(1);
    expect(clientGroup("2001:db8:a:c::1")).not.toBe(clientGroup("2001:db8:a:b::1"));
    expect(clientGroup("2001:db8:a:b::1")).not.toBe(clientGroup("2001:db8:b:b::1"));
  });

  it.each([
    [[], "2001:db8:1:2::7", undefined, "2001:db8:1:2::/64"],
    [[], "::ffff:127.0.0.1", undefined, "127.0.0.1"],
    [["loopback"], "::1", "2001:db8:5:6::9, ::1", "2001:db8:5:6::/64"],
    [["loopback"], "127.0.0.1", "198.51.100.4", "198.51.100.4"],
  ])("the resolver, trusting %j, groups peer %s forwarding %s as %s", (trusted, peer, forwarded, client) => {
    const resolve = createClientAddressResolver(trusted);
    const headers = forwarded === undefined ? {} : { "x-forwarded-for": forwarded };
    expect(resolve(peer, headers)).toBe(client);
  });
});
