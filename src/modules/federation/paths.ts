// The federation's paths (Fedify's router templates; ids are these on PUBLIC_URL): one declaration,
// read by the dispatchers (engine/federation.ts), the Fastify mount (http-routes.ts) and the
// outbound activities (engine/activities.ts).
export const PATHS = {
  actor: "/ap/actors/{identifier}",
  inbox: "/ap/actors/{identifier}/inbox",
  sharedInbox: "/ap/inbox",
  outbox: "/ap/actors/{identifier}/outbox",
  followers: "/ap/actors/{identifier}/followers",
  article: "/ap/actors/{tenant}/articles/{discussion}",
  note: "/ap/actors/{tenant}/notes/{comment}",
  nodeinfo: "/nodeinfo/2.1",
} as const;

/** What the mount hands to Fedify: these prefixes and the two well-known documents. */
export const FEDERATION_PREFIXES = ["/ap/", "/nodeinfo/", "/.well-known/webfinger", "/.well-known/nodeinfo"] as const;
