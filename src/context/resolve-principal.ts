// Who is calling: X-API-Key (an API key, with its tenant row), Authorization: Bearer (the admin
// JWT) or the console's session cookie (an operator). Invalid credentials fail the request; no
// credentials at all is null.
import type { Tenant } from "../generated/prisma/client.js";
import { AppError, errors } from "../lib/errors.js";
import { authenticateSession, csrfMatches, CSRF_HEADER, sessionCookieOf, sessionPolicy } from "../auth/console-session.js";
import type { Principal } from "../auth/principal.js";
import { authenticateApiKey } from "../auth/key-auth.js";
import { authenticateAdminToken } from "../auth/admin-jwt.js";
import type { AppServices } from "./services.js";
import { header, type HeaderBag } from "./headers.js";

/**
 * CSRF (a browser sending the session cookie on its own, for another site's page): a request that
 * may change something must carry the console's X-CSRF-Token, or come from the service's own origin
 * by the browser's own word (Sec-Fetch-Site: same-origin, else an Origin naming this host). A request
 * with neither header was not made by a browser page, so it cannot be forged by one (and the
 * SameSite=Strict cookie is not even sent cross-site).
 */
function sameOrigin(headers: HeaderBag): boolean {
  const site = header(headers, "sec-fetch-site");
  if (site) return site === "same-origin";
  const origin = header(headers, "origin");
  if (!origin) return true;
  try {
    return new URL(origin).host === header(headers, "host");
  } catch {
    return false;
  }
}

/**
 * Resolves the caller from X-API-Key or Authorization: Bearer. Invalid credentials fail the
 * request. An API key lookup also yields the tenant row, which seeds the request's cache.
 */
export async function resolvePrincipal(
  app: AppServices,
  headers: HeaderBag,
  opts: { method?: string } = {},
): Promise<{ principal: Principal; tenant?: Tenant } | null> {
  const apiKey = header(headers, "x-api-key");
  if (apiKey) return authenticateApiKey(app.prisma, apiKey.trim(), app.clock, app.authCache);
  const authz = header(headers, "authorization");
  if (authz) {
    const m = /^Bearer\s+(\S+)$/i.exec(authz.trim());
    if (!m?.[1]) throw errors.unauthenticated("Authorization must be 'Bearer <admin JWT>'.");
    return {
      principal: await authenticateAdminToken(app.prisma, m[1], app.adminJwtSecret, app.clock, app.authCache, app.config.ADMIN_JWT_MAX_TTL),
    };
  }
  const session = sessionCookieOf(header(headers, "cookie"));
  if (session) {
    const s = await authenticateSession(app.prisma, session, app.clock, sessionPolicy(app));
    const safe = opts.method === "GET" || opts.method === "HEAD";
    if (!safe && !csrfMatches(header(headers, CSRF_HEADER), s.csrfToken) && !sameOrigin(headers)) {
      throw new AppError(403, "csrf_failed", "This request needs the console's X-CSRF-Token.");
    }
    return { principal: s.principal };
  }
  return null;
}
