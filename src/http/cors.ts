// CORS for the browser-facing surface (contract section 7): answered only for the allowed origins
// (CORS_ORIGINS now; per-tenant allowedOrigins build on this), never reflecting an arbitrary
// origin, never with credentials (browsers authenticate with keys, tickets and assertions, not
// cookies). One policy serves /graphql, the REST routes and the stream.
import type { FastifyInstance } from "fastify";

export const BROWSER_REQUEST_HEADERS = [
  "Content-Type",
  "X-API-Key",
  "X-Service-Identity",
  "Last-Event-ID",
  "Cache-Control",
  "X-Request-Id",
];
export const BROWSER_EXPOSED_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After", "ETag", "X-Request-Id"];
const METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";

export interface CorsPolicy {
  allows(origin: string | null | undefined): origin is string;
  /** The response headers for an allowed origin, or null (no CORS headers at all). */
  headers(origin: string | null | undefined): Record<string, string> | null;
}

/** Origins as the browser sends them (scheme://host[:port]); malformed entries are ignored. */
export function parseOrigins(list: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of list) {
    try {
      const u = new URL(raw.trim());
      if (u.protocol === "http:" || u.protocol === "https:") out.push(u.origin);
    } catch {
      // not an origin
    }
  }
  return out;
}

export function createCorsPolicy(origins: readonly string[]): CorsPolicy {
  const allowed = new Set(parseOrigins(origins));
  const policy: CorsPolicy = {
    allows: (origin): origin is string => typeof origin === "string" && allowed.has(origin),
    headers(origin) {
      if (!policy.allows(origin)) return null;
      return {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Expose-Headers": BROWSER_EXPOSED_HEADERS.join(", "),
        Vary: "Origin",
      };
    },
  };
  return policy;
}

/** CORS on every /api/v1 answer for allowed origins, and their preflights. */
export function mountRestCors(fastify: FastifyInstance, policy: CorsPolicy): void {
  fastify.addHook("onRequest", async (req, reply) => {
    if (!req.url.startsWith("/api/v1/")) return;
    const headers = policy.headers(req.headers.origin);
    if (headers) reply.headers(headers);
  });
  fastify.options("/api/v1/*", async (req, reply) => {
    if (policy.allows(req.headers.origin)) {
      reply.headers({
        "Access-Control-Allow-Methods": METHODS,
        "Access-Control-Allow-Headers": BROWSER_REQUEST_HEADERS.join(", "),
        "Access-Control-Max-Age": "600",
      });
    }
    return reply.status(204).send();
  });
}
