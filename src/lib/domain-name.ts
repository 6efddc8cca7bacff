// A domain name as an operator types it (settings federation.blockedDomains) and as a remote reader's
// id names it (`ap:<actor URL>`, `wm:<origin>`): normalised by the URL standard's host parser (lower
// case, IDNA to punycode), so `Bücher.Example` and `xn--bcher-kva.example` are one domain.

/** What a refused domain name is told. */
export const DOMAIN_NAME_RULE = "must be a domain name such as mastodon.social (no scheme, port, path or spaces)";

/** The longest domain name DNS allows. */
export const MAX_DOMAIN_LENGTH = 253;

/** `raw` as the URL parser normalises a host (lower case, punycode, no trailing dot), or null when it is not a bare domain name. */
export function normalizeDomain(raw: string): string | null {
  if (raw.length === 0 || raw.length > MAX_DOMAIN_LENGTH) return null;
  // a scheme, credentials, port, path, query, fragment, an IPv6 literal or whitespace: not a bare domain
  if (/[\s/\\:@?#[\]%]/.test(raw)) return null;
  let host: string;
  try {
    host = new URL(`http://${raw}/`).hostname;
  } catch {
    return null;
  }
  host = host.replace(/\.$/, "");
  if (host === "" || host.length > MAX_DOMAIN_LENGTH || host.startsWith(".") || host.includes("..")) return null;
  return host;
}

/** The host of an http(s) URL as `normalizeDomain` gives it, or null. */
export function domainOfUrl(url: string): string | null {
  try {
    const u = new URL(url);
    if (u.protocol !== "https:" && u.protocol !== "http:") return null;
    return u.hostname.replace(/\.$/, "") || null;
  } catch {
    return null;
  }
}

/** Whether `host` is one of `domains` or a subdomain of one (blocking mastodon.social blocks eu.mastodon.social too). */
export function isDomainListed(host: string, domains: readonly string[]): boolean {
  for (const d of domains) if (host === d || host.endsWith(`.${d}`)) return true;
  return false;
}
