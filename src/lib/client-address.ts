// A client address as a limit per client should see it: an IPv4 address as it is (an IPv4-mapped
// IPv6 address `::ffff:a.b.c.d` is that IPv4 address), an IPv6 address by its /64 network — the
// block one household or host is usually given, so a client cannot become many by changing the low
// 64 bits. Anything else (a Unix socket, an unparsable string) as it is.
import { isIPv4, isIPv6 } from "node:net";

export function addressGroup(address: string): string {
  const bare = address.split("%")[0] ?? address; // an IPv6 zone (`fe80::1%eth0`)
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return address;
  const lower = bare.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped?.[1]) return mapped[1];
  return `${ipv6Groups(lower).slice(0, 4).join(":")}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, in hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  const [head = "", tail] = address.split("::");
  const part = (s: string | undefined): string[] => {
    if (!s) return [];
    const groups = s.split(":");
    const last = groups.at(-1) ?? "";
    if (isIPv4(last)) {
      // an embedded IPv4 address is the last two groups
      const [a = 0, b = 0, c = 0, d = 0] = last.split(".").map(Number);
      groups.splice(-1, 1, ((a << 8) | b).toString(16), ((c << 8) | d).toString(16));
    }
    return groups;
  };
  const h = part(head);
  const t = part(tail);
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - h.length - t.length }, () => "0");
  return [...h, ...zeros, ...t].map((g) => parseInt(g, 16).toString(16));
}
