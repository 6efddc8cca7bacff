// CORS for the browser-facing surface (contract section 7): answered only for the allowed origins
// (CORS_ORIGINS and the tenants' allowedOrigins, src/auth/origins.ts), never reflecting an arbitrary
// origin, never with credentials (browsers authenticate with keys, tickets and assertions, not
// cookies). One policy serves /graphql, the REST routes and the stream.
import type { FastifyInstance } from "fastify";
import type { OriginIndex } from "../auth/origins.js";

export const BROWSER_REQUEST_HEADERS = [
  "Content-Type",
  "X-API-Key",
  "X-Service-Identity",
  "Last-Event-ID",
  "Cache-Control",
  "X-Request-Id",
  "If-None-Match",
  "Idempotency-Key",
  "X-Service-Consistency",
];
export const BROWSER_EXPOSED_HEADERS = [
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "Retry-After",
  "ETag",
  "X-Request-Id",
  "Idempotent-Replayed",
  "X-Service-Consistency",
];
const METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";

export interface CorsPolicy {
  allows(origin: string | null | undefined): origin is string;
  /** The response headers for an allowed origin, or null (no CORS headers at all). */
  headers(origin: string | null | undefined): Record<string, string> | null;
  /** A preflight: whether to answer it; one from an origin no tenant lists is logged (once per origin). */
  preflight(origin: string | null | undefined): origin is string;
}

/**
 * CORS answers go to origins that CORS_ORIGINS or some tenant's `allowedOrigins` lists; whether the
 * caller's own tenant lists it is checked once the caller is known (src/auth/origins.ts).
 */
export function createCorsPolicy(origins: Pick<OriginIndex, "anyAllows" | "refused">): CorsPolicy {
  const policy: CorsPolicy = {
    allows: (origin): origin is string => origins.anyAllows(origin),
    headers(origin) {
      if (!policy.allows(origin)) return null;
      return {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Expose-Headers": BROWSER_EXPOSED_HEADERS.join(", "),
        Vary: "Origin",
      };
    },
    preflight(origin): origin is string {
      if (policy.allows(origin)) return true;
      if (origin) origins.refused(origin, null);
      return false;
    },
  };
  return policy;
}

/** CORS on every /api/v1 answer for allowed origins, and their preflights. */
export function mountRestCors(fastify: FastifyInstance, policy: CorsPolicy): void {
  // a callback hook: an async one costs every request a promise
  fastify.addHook("onRequest", (req, reply, done) => {
    if (req.url.startsWith("/api/v1/")) {
      const headers = policy.headers(req.headers.origin);
      if (headers) reply.headers(headers);
    }
    done();
  });
  fastify.options("/api/v1/*", async (req, reply) => {
    if (policy.preflight(req.headers.origin)) {
      reply.headers({
        "Access-Control-Allow-Methods": METHODS,
        "Access-Control-Allow-Headers": BROWSER_REQUEST_HEADERS.join(", "),
        "Access-Control-Max-Age": "600",
      });
    }
    return reply.status(204).send();
  });
}
