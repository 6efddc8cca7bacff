// A client address as per-client limits see it (src/lib/client-address.ts): IPv4 as it is, an
// IPv4-mapped IPv6 address as its IPv4 address, IPv6 by its /64 in one spelling.
import { describe, expect, it } from "vitest";
import { addressGroup } from "../../src/lib/client-address.js";

describe("addressGroup", () => {
  it("keeps an IPv4 address, and unwraps an IPv4-mapped one", () => {
    expect(addressGroup("203.0.113.7")).toBe("203.0.113.7");
    expect(addressGroup("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressGroup("::FFFF:203.0.113.7")).toBe("203.0.113.7");
  });

  it("groups IPv6 addresses by their /64, however they are written", () => {
    const group = "2001:db8:a:b::/64";
    expect(addressGroup("2001:db8:a:b::1")).toBe(group);
    expect(addressGroup("2001:db8:a:b:ffff:ffff:ffff:ffff")).toBe(group);
    expect(addressGroup("2001:0DB8:000a:000b:0:0:0:2")).toBe(group);
    expect(addressGroup("2001:db8:a:b:1::")).toBe(group);
    expect(addressGroup("2001:db8:a:c::1")).not.toBe(group);
    expect(addressGroup("::1")).toBe("0:0:0:0::/64");
    expect(addressGroup("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressGroup("2001:db8::192.0.2.1")).toBe("2001:db8:0:0::/64");
    expect(addressGroup("64:ff9b:1:2:3:4:192.0.2.1")).toBe("64:ff9b:1:2::/64");
  });

  it("leaves anything else as it is", () => {
    expect(addressGroup("unknown")).toBe("unknown");
    expect(addressGroup("")).toBe("");
  });
});
