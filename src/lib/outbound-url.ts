// Every URL a tenant gives the service to reach out to (an SMTP server, a webhook endpoint, the
// moderation hook, an identity provider's issuer or key set) passes through `parseOutboundUrl`: it is
// parsed into the few fields the service uses and rebuilt from them, and anything else in it is refused,
// naming the part. Clients are then configured from those fields, never from the URL handed to a
// library whole: a mail library turns an SMTP URL's query into transport options (`sendmail`, `path`,
// `proxy`, `streamTransport`, …), an HTTP client turns credentials into an Authorization header.
//
// The kinds:
// - `smtp`: `smtp:` or `smtps:`, optional credentials, a host and a port; no path, query or fragment.
// - `http`: `https:` or `http:` (whether plain http may be used is the SSRF guard's call, in
//   src/outbound/url-guard.ts), a host, a port, a path and a query (sent as the request's
//   target, which configures nothing); no credentials, no fragment.
// - `issuer`: an OpenID issuer identifier (OpenID Connect Discovery 1.0 §2): `https:` or `http:`, a
//   host, a port and a path; no credentials, query or fragment.

import { isSingleLine } from "./single-line.js";

/** What one part of a URL the service refuses: `part` names it for the problem document. */
export interface OutboundUrlProblem {
  part: "url" | "scheme" | "credentials" | "host" | "port" | "path" | "query" | "fragment";
  message: string;
}

export type OutboundKind = "smtp" | "http" | "issuer";

/** A URL reduced to what the service uses of it. */
export interface OutboundTarget {
  kind: OutboundKind;
  /** without the colon: `smtp`, `smtps`, `https`, `http` */
  scheme: string;
  /** the host as the URL standard normalises it (lower case, IPv6 in brackets, punycode) */
  host: string;
  /** the port: the URL's, else the scheme's default */
  port: number;
  /** SMTP only: the credentials, percent-decoded */
  username: string | null;
  password: string | null;
  /** http and issuer: the path (`/` at least); http: with its query */
  path: string;
  /** the URL rebuilt from these fields alone: what is stored and used */
  href: string;
}

export type OutboundUrlResult = { ok: true; target: OutboundTarget } | { ok: false; problem: OutboundUrlProblem };

const DEFAULT_PORTS: Record<string, number> = { smtp: 587, smtps: 465, https: 443, http: 80 };
const SCHEMES: Record<OutboundKind, readonly string[]> = { smtp: ["smtp", "smtps"], http: ["https", "http"], issuer: ["https", "http"] };

/** The problem when an SMTP URL's scheme is not smtp(s) or it does not parse: what settings answer. */
export const SMTP_URL_RULE = "must be an smtp:// or smtps:// URL with a host";
const SMTP_SHAPE = "an SMTP URL is smtp:// or smtps://, optional user:password@, a host and an optional port, nothing else";

const refuse = (part: OutboundUrlProblem["part"], message: string): OutboundUrlResult => ({ ok: false, problem: { part, message } });

/** Parses `raw` as a URL of `kind` and rebuilds it from the fields the service uses, or says which part is refused. */
export function parseOutboundUrl(raw: string, kind: OutboundKind): OutboundUrlResult {
  if (raw.length > 2048) return refuse("url", "must be at most 2048 characters");
  // the URL parser drops tabs and newlines silently; a URL that holds one is refused, not repaired
  if (!isSingleLine(raw) || raw !== raw.trim()) return refuse("url", "must not contain spaces or control characters");
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return refuse("url", kind === "smtp" ? SMTP_URL_RULE : "is not a valid absolute URL");
  }
  const scheme = u.protocol.replace(/:$/, "");
  if (!SCHEMES[kind].includes(scheme)) return refuse("scheme", kind === "smtp" ? SMTP_URL_RULE : "must be an https:// (or http://) URL");
  // a scheme the URL standard does not know (smtp) keeps an opaque path: `smtp:host` has no host
  if (u.hostname === "" || !raw.slice(u.protocol.length).startsWith("//")) {
    return refuse("host", kind === "smtp" ? SMTP_URL_RULE : "must name a host");
  }
  if (u.hash !== "" || raw.includes("#"))
    return refuse("fragment", kind === "smtp" ? `must not have a fragment: ${SMTP_SHAPE}` : "must not have a fragment");
  const hasCredentials = u.username !== "" || u.password !== "";
  if (kind !== "smtp" && hasCredentials) return refuse("credentials", "must not contain credentials (user:password@)");
  if (kind !== "http" && (u.search !== "" || raw.includes("?"))) {
    return refuse("query", kind === "smtp" ? `must not have a query (?…): ${SMTP_SHAPE}` : "must not have a query (?…)");
  }
  if (kind === "smtp" && u.pathname !== "" && u.pathname !== "/") return refuse("path", `must not have a path: ${SMTP_SHAPE}`);
  const port = u.port === "" ? DEFAULT_PORTS[scheme]! : Number(u.port);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return refuse("port", "must be a port from 1 to 65535");
  const username = kind === "smtp" && u.username ? decode(u.username) : null;
  const password = kind === "smtp" && u.password ? decode(u.password) : null;
  if (username === undefined || password === undefined) return refuse("credentials", "must be percent-encoded correctly");
  const path = kind === "smtp" ? "" : `${u.pathname || "/"}${kind === "http" ? u.search : ""}`;
  const portPart = u.port === "" ? "" : `:${port}`;
  const auth = username !== null ? `${u.username}${u.password ? `:${u.password}` : ""}@` : "";
  const href = `${scheme}://${auth}${u.hostname}${portPart}${path}`;
  return { ok: true, target: { kind, scheme, host: u.hostname, port, username, password, path, href } };
}

function decode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** The host without IPv6 brackets, as sockets and DNS take it. */
export const bareHost = (host: string): string => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host);
