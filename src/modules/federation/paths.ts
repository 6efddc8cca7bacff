// The federation's paths (Fedify's router templates; ids are these on PUBLIC_URL): one declaration,
// read by the dispatchers (engine/federation.ts), the Fastify mount (http-routes.ts) and the
// outbound activities (engine/activities.ts). Under a PUBLIC_URL with a path (a proxy's prefix, such
// as https://example.com/comments) every template but the well-known ones starts with that path: the
// ids are built on it, and the mount puts it back in front of what the proxy forwards without it.

/** The templates under `prefix` (PUBLIC_URL's path without its trailing slash; "" at the host's root). */
export const federationPaths = (prefix: string) =>
  ({
    actor: `${prefix}/ap/actors/{identifier}`,
    inbox: `${prefix}/ap/actors/{identifier}/inbox`,
    sharedInbox: `${prefix}/ap/inbox`,
    outbox: `${prefix}/ap/actors/{identifier}/outbox`,
    followers: `${prefix}/ap/actors/{identifier}/followers`,
    article: `${prefix}/ap/actors/{tenant}/articles/{discussion}`,
    note: `${prefix}/ap/actors/{tenant}/notes/{comment}`,
    nodeinfo: `${prefix}/nodeinfo/2.1`,
  }) as const;

/** The templates at the host's root. */
export const PATHS = federationPaths("");

/** PUBLIC_URL's path as a prefix: "" for none (or "/"), else the path without its trailing slash. */
export function pathPrefixOf(publicUrl: string | undefined): string {
  if (!publicUrl) return "";
  return new URL(publicUrl).pathname.replace(/\/+$/, "");
}

/** What the mount hands to Fedify: these prefixes and the two well-known documents. */
export const FEDERATION_PREFIXES = ["/ap/", "/nodeinfo/", "/.well-known/webfinger", "/.well-known/nodeinfo"] as const;

/**
 * Whether an instance serves federation at all: ids are built on PUBLIC_URL, so in production
 * (NODE_ENV=production) one without it serves no federation route and announces nothing (contract
 * section 28); elsewhere the server's own address stands in for it (development, tests).
 */
export const federationServed = (config: { PUBLIC_URL?: string | undefined; NODE_ENV: string }): boolean =>
  config.PUBLIC_URL !== undefined || config.NODE_ENV !== "production";
