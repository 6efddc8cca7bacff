/**
 * Webhook URL policy (API.md §4 "Webhooks", §2 `ALLOW_HTTP_WEBHOOKS`): the SSRF guard.
 *
 * - The URL must parse, carry no credentials, and use https. Plain http is accepted only when the
 *   server runs with the development flag (`allowHttpLoopback`) AND the host is loopback
 *   (`localhost`, 127.0.0.0/8, ::1); such a host must also resolve to loopback addresses only.
 * - The host is resolved (IP literals are taken as is) and the URL is refused if ANY address is
 *   not ordinary global unicast: private (10/8, 172.16/12, 192.168/16, fc00::/7), loopback,
 *   link-local (169.254/16, fe80::/10), cloud metadata, unspecified, CGNAT (100.64/10), multicast,
 *   broadcast, reserved/documentation/benchmarking ranges, IPv6 outside 2000::/3, NAT64/6to4/Teredo
 *   and IPv4-mapped/-translated IPv6 forms of any of those.
 * - Exceptions: the dev flag admits loopback addresses (https or http); the operator allow-list
 *   admits anything it names. Allow-list entries are CIDRs (`10.1.0.0/16`, `fd00::/8`), single
 *   IPs, hostnames (`hooks.internal`, exact match) or `*.suffix` wildcards (`*.corp.example`).
 *   Cloud-metadata addresses are only admitted by an exact single-IP entry, never by a CIDR or a
 *   hostname entry.
 *
 * Resolution happens again when a delivery connects (http-client's dnsLookup calls
 * `checkAddress`), so a DNS answer that changes after registration (rebinding) is caught.
 */
import { promises as dnsPromises } from "node:dns";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { parseOutboundUrl } from "../lib/outbound-url.js";

export type Resolver = (hostname: string) => Promise<string[]>;

export interface AddressPolicy {
  /** Development flag (ALLOW_HTTP_WEBHOOKS=1): loopback receivers are allowed, over http too. */
  allowHttpLoopback: boolean;
  /** Operator allow-list: hostnames, `*.suffix` wildcards, IPs or CIDRs. */
  allowList: readonly string[];
}

export interface UrlGuardOptions extends AddressPolicy {
  /** Resolves a hostname to all its addresses. Default: dns.promises.lookup({ all: true }). */
  resolve?: Resolver;
}

export type UrlCheckResult = { ok: true; url: URL; addresses: string[] } | { ok: false; message: string };

export type AddressCategory =
  "public" | "private" | "loopback" | "link_local" | "metadata" | "unspecified" | "cgnat" | "multicast" | "reserved" | "invalid";

export type AddressVerdict = { allowed: true; category: AddressCategory } | { allowed: false; category: AddressCategory };

/** Well-known instance-metadata endpoints (AWS, GCP, Azure, Alibaba, Oracle, AWS IPv6/ECS). */
const METADATA_ADDRESSES: ReadonlySet<string> = new Set(
  [
    "169.254.169.254",
    "169.254.169.253",
    "169.254.170.2",
    "169.254.170.23",
    "100.100.100.200",
    "192.0.0.192",
    "fd00:ec2::254",
    "fd00:ec2::23",
  ].map((a) => ipaddr.parse(a).toNormalizedString()),
);

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

function parseAddress(address: string): Parsed | null {
  let text = address.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  // Only accept canonical literals (what net.isIP accepts), not "0x7f.1" style forms.
  let bare = text.split("%")[0] ?? "";
  const family = isIP(bare);
  if (family === 0) return null;
  if (family === 6) {
    // ipaddr.js reads "::a.b.c.d" as "::ffff:a.b.c.d"; rewrite the dotted tail as hex groups first.
    bare = bare.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) => {
      const hex = (hi: string, lo: string) => ((Number(hi) << 8) | Number(lo)).toString(16);
      return `${hex(a, b)}:${hex(c, d)}`;
    });
  }
  try {
    return ipaddr.parse(bare);
  } catch {
    return null;
  }
}

/** Unwraps IPv6 forms that carry an IPv4 address (mapped, SIIT-translated, NAT64, 6to4). */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const range = ip.range();
  const p = ip.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (range === "ipv4Mapped" || range === "rfc6145" || range === "rfc6052") {
    return v4(p[6] ?? 0, p[7] ?? 0);
  }
  if (range === "6to4") return v4(p[1] ?? 0, p[2] ?? 0);
  return null;
}

function categoryOf(ip: Parsed): AddressCategory {
  if (METADATA_ADDRESSES.has(ip.toNormalizedString())) {
    return "metadata";
  }
  if (ip.kind() === "ipv6") {
    const v6 = ip as ipaddr.IPv6;
    const inner = embeddedIPv4(v6);
    if (inner) {
      const innerCategory = categoryOf(inner);
      // A translated form of a public IPv4 is still a translation mechanism: only the plain
      // IPv4-mapped form (how dual-stack sockets report IPv4 peers) passes as public.
      if (innerCategory !== "public") return innerCategory;
      return v6.range() === "ipv4Mapped" ? "public" : "reserved";
    }
    // Widened to string: the typings omit some range names the library returns.
    const range: string = v6.range();
    switch (range) {
      case "unspecified":
        return "unspecified";
      case "loopback":
        return "loopback";
      case "linkLocal":
        return "link_local";
      case "uniqueLocal":
      case "deprecatedSiteLocal":
        return "private";
      case "multicast":
        return "multicast";
      case "unicast":
        return v6.match(GLOBAL_UNICAST_V6) ? "public" : "reserved";
      default:
        return "reserved";
    }
  }
  const range: string = (ip as ipaddr.IPv4).range();
  switch (range) {
    case "unicast":
      return "public";
    case "private":
      return "private";
    case "loopback":
      return "loopback";
    case "linkLocal":
      return "link_local";
    case "unspecified":
      return "unspecified";
    case "carrierGradeNat":
      return "cgnat";
    case "multicast":
      return "multicast";
    default:
      return "reserved";
  }
}

/** Classifies one IP address string (IPv4, IPv6, optionally bracketed or with a zone id). */
export function classifyAddress(address: string): AddressCategory {
  const ip = parseAddress(address);
  return ip === null ? "invalid" : categoryOf(ip);
}

interface CompiledAllowList {
  exactIps: Parsed[];
  cidrs: Array<[Parsed, number]>;
  hosts: Set<string>;
  suffixes: string[];
}

function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  while (h.endsWith(".")) h = h.slice(0, -1);
  return h;
}

/** Each policy's allow-list is compiled once (policies are built once, by the webhook runtime). */
const compiledLists = new WeakMap<readonly string[], CompiledAllowList>();

function allowListOf(list: readonly string[] | undefined): CompiledAllowList {
  if (!list) return EMPTY_ALLOW_LIST;
  let compiled = compiledLists.get(list);
  if (!compiled) compiledLists.set(list, (compiled = compileAllowList(list)));
  return compiled;
}

const EMPTY_ALLOW_LIST: CompiledAllowList = { exactIps: [], cidrs: [], hosts: new Set(), suffixes: [] };

function compileAllowList(list: readonly string[]): CompiledAllowList {
  const compiled: CompiledAllowList = { exactIps: [], cidrs: [], hosts: new Set(), suffixes: [] };
  for (const raw of list) {
    if (typeof raw !== "string") continue;
    const entry = raw.trim();
    if (entry === "") continue;
    if (entry.includes("/")) {
      try {
        const [net, bits] = ipaddr.parseCIDR(entry);
        compiled.cidrs.push([net, bits]);
      } catch {
        // not a CIDR: ignore the malformed entry
      }
      continue;
    }
    const ip = parseAddress(entry);
    if (ip) {
      compiled.exactIps.push(ip);
    } else if (entry.startsWith("*.")) {
      compiled.suffixes.push(normalizeHost(entry.slice(1)));
    } else {
      compiled.hosts.add(normalizeHost(entry));
    }
  }
  return compiled;
}

function sameAddress(a: Parsed, b: Parsed): boolean {
  const norm = (x: Parsed) =>
    x.kind() === "ipv6" && (x as ipaddr.IPv6).isIPv4MappedAddress()
      ? (x as ipaddr.IPv6).toIPv4Address().toNormalizedString()
      : x.toNormalizedString();
  return norm(a) === norm(b);
}

function inCidr(ip: Parsed, [net, bits]: [Parsed, number]): boolean {
  const candidates: Parsed[] = [ip];
  if (ip.kind() === "ipv6") {
    const inner = embeddedIPv4(ip as ipaddr.IPv6);
    if (inner) candidates.push(inner);
  }
  return candidates.some((c) => c.kind() === net.kind() && c.match(net, bits));
}

function hostAllowListed(hostname: string | undefined, allow: CompiledAllowList): boolean {
  if (!hostname) return false;
  const h = normalizeHost(hostname);
  if (allow.hosts.has(h)) return true;
  return allow.suffixes.some((suffix) => h.endsWith(suffix) && h.length > suffix.length);
}

/**
 * Policy decision for one resolved address, with its category (for error messages).
 * `hostname` (the name that resolved to it) lets hostname allow-list entries apply.
 */
export function checkAddress(address: string, opts: AddressPolicy & { hostname?: string }): AddressVerdict {
  const ip = parseAddress(address);
  if (ip === null) return { allowed: false, category: "invalid" };
  const category = categoryOf(ip);
  if (category === "public") return { allowed: true, category };
  if (category === "loopback" && opts.allowHttpLoopback) return { allowed: true, category };

  const allow = allowListOf(opts.allowList);
  if (allow.exactIps.some((a) => sameAddress(a, ip))) return { allowed: true, category };
  if (category === "metadata") return { allowed: false, category };
  if (allow.cidrs.some((c) => inCidr(ip, c))) return { allowed: true, category };
  if (hostAllowListed(opts.hostname, allow)) return { allowed: true, category };
  return { allowed: false, category };
}

/** `localhost` or a loopback IP literal (127.0.0.0/8, ::1, or their IPv4-mapped forms). */
export function isLoopbackHost(hostname: string): boolean {
  const h = normalizeHost(hostname);
  if (h === "localhost") return true;
  return classifyAddress(h) === "loopback";
}

const defaultResolve: Resolver = async (hostname) => {
  const results = await dnsPromises.lookup(hostname, { all: true, verbatim: true });
  return results.map((r) => r.address);
};

function describe(category: AddressCategory): string {
  switch (category) {
    case "link_local":
      return "link-local";
    case "cgnat":
      return "carrier-grade NAT";
    case "metadata":
      return "cloud metadata";
    default:
      return category;
  }
}

/**
 * The checks of a URL that need no DNS: an absolute http(s) URL with a host and no credentials,
 * plain http only to a loopback host and only under ALLOW_HTTP_WEBHOOKS. Registration
 * (checkWebhookUrl) and every delivery (http-client.ts) apply the same rules.
 */
export function checkUrlShape(
  input: string | URL,
  policy: AddressPolicy,
): { ok: true; url: URL; hostname: string; isHttp: boolean } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    return { ok: false, message: "url is not a valid absolute URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, message: "url must use https" };
  if (url.username !== "" || url.password !== "") return { ok: false, message: "url must not contain credentials" };
  const hostname = normalizeHost(url.hostname);
  if (hostname === "") return { ok: false, message: "url has no host" };
  const isHttp = url.protocol === "http:";
  if (isHttp && !(policy.allowHttpLoopback && isLoopbackHost(hostname))) {
    return {
      ok: false,
      message: policy.allowHttpLoopback
        ? "url must use https (plain http is only allowed to loopback hosts)"
        : isLoopbackHost(hostname)
          ? "url must use https (for a plain-http receiver on this machine in development, start the server with ALLOW_HTTP_WEBHOOKS=1)"
          : "url must use https",
    };
  }
  return { ok: true, url, hostname, isHttp };
}

/** How an operator may allow an address of this category, for the refusal's message. */
function allowedBy(category: string): string {
  if (category === "loopback")
    return " (allow loopback receivers in development with ALLOW_HTTP_WEBHOOKS=1, or list the host in WEBHOOK_ALLOWLIST)";
  if (category === "metadata") return "";
  return " (an operator may allow it by listing the host or its network in WEBHOOK_ALLOWLIST)";
}

/**
 * Validates a webhook URL at registration / URL change. Never throws.
 * The messages are meant for a 422 `validation_failed` error on the `url` field.
 */
export async function checkWebhookUrl(input: string | URL, opts: UrlGuardOptions): Promise<UrlCheckResult> {
  // the one parse of a URL a tenant gives (src/lib/outbound-url.ts): nothing in it beyond the request's target
  const outbound = parseOutboundUrl(String(input), "http");
  if (!outbound.ok && outbound.problem.part !== "scheme") return { ok: false, message: `url ${outbound.problem.message}` };
  const shape = checkUrlShape(input, opts);
  if (!shape.ok) return shape;
  const { url, hostname, isHttp } = shape;

  let addresses: string[];
  if (classifyAddress(hostname) !== "invalid") {
    addresses = [hostname];
  } else {
    try {
      addresses = await (opts.resolve ?? defaultResolve)(hostname);
    } catch {
      return { ok: false, message: `url host ${hostname} could not be resolved` };
    }
    if (!Array.isArray(addresses) || addresses.length === 0) {
      return { ok: false, message: `url host ${hostname} could not be resolved` };
    }
  }

  for (const address of addresses) {
    const verdict = checkAddress(address, { ...opts, hostname });
    if (!verdict.allowed) {
      return {
        ok: false,
        message: `url resolves to a ${describe(verdict.category)} address (${address}), which is not allowed${allowedBy(verdict.category)}`,
      };
    }
    if (isHttp && verdict.category !== "loopback") {
      return { ok: false, message: `plain http url resolves to a non-loopback address (${address})` };
    }
  }
  return { ok: true, url, addresses };
}
