// The per-request context shared by GraphQL resolvers, REST routes and the stream: who is calling,
// for which tenant, and the app's services (db, clock, logger, bus).
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import type { PrismaClient, Tenant } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import type { SecretBox } from "../lib/secret-box.js";
import { errors } from "../lib/errors.js";
import type { Principal } from "../auth/principal.js";
import { authenticateApiKey } from "../auth/key-auth.js";
import { authenticateAdminToken } from "../auth/admin-jwt.js";
import { verifyIdentity, type ReaderIdentity } from "../auth/identity.js";
import type { EventPublisher } from "../events/publisher.js";
import type { RateLimiter, RateLimitInfo } from "../auth/rate-limit.js";
import type { ScopedPrisma } from "../db/tenant-scope.js";

export interface AppServices {
  config: Config;
  db: Database;
  prisma: PrismaClient;
  clock: Clock;
  log: Logger;
  secretBox: SecretBox;
  adminJwtSecret: string;
  events: EventPublisher;
  rateLimiter: RateLimiter;
  /** Tenant-scoped Prisma clients (src/db/tenant-scope.ts). */
  scoped: (tenantId: string) => ScopedPrisma;
}

export interface RequestContext {
  app: AppServices;
  principal: Principal | null;
  identityToken: string | null;
  rateLimit?: RateLimitInfo;
  /** memoised lookups */
  cache: { tenant?: Promise<Tenant>; reader?: Promise<ReaderIdentity | null> };
}

type HeaderBag = { get(name: string): string | null | undefined } | Record<string, string | string[] | undefined>;

function header(h: HeaderBag, name: string): string | null {
  if (typeof (h as { get?: unknown }).get === "function") {
    return ((h as { get(n: string): string | null | undefined }).get(name) ?? null) || null;
  }
  const v = (h as Record<string, string | string[] | undefined>)[name];
  return (Array.isArray(v) ? v[0] : v) || null;
}

/**
 * Resolves the caller from X-API-Key or Authorization: Bearer. Invalid credentials fail the
 * request. An API key lookup also yields the tenant row, which seeds the request's cache.
 */
export async function resolvePrincipal(
  app: AppServices,
  headers: HeaderBag,
): Promise<{ principal: Principal; tenant?: Tenant } | null> {
  const apiKey = header(headers, "x-api-key");
  if (apiKey) return authenticateApiKey(app.prisma, apiKey.trim(), app.clock);
  const authz = header(headers, "authorization");
  if (authz) {
    const m = /^Bearer\s+(\S+)$/i.exec(authz.trim());
    if (!m?.[1]) throw errors.unauthenticated("Authorization must be 'Bearer <admin JWT>'.");
    return { principal: await authenticateAdminToken(app.prisma, m[1], app.adminJwtSecret, app.clock) };
  }
  return null;
}

export async function createRequestContext(app: AppServices, headers: HeaderBag): Promise<RequestContext> {
  const caller = await resolvePrincipal(app, headers);
  const principal = caller?.principal ?? null;
  const rateLimit = principal ? await app.rateLimiter.consume(principal, caller?.tenant?.settings) : undefined;
  return {
    app,
    principal,
    identityToken: header(headers, "x-service-identity"),
    cache: caller?.tenant ? { tenant: Promise.resolve(caller.tenant) } : {},
    ...(rateLimit ? { rateLimit } : {}),
  };
}

export function requirePrincipal(ctx: RequestContext): Principal {
  if (!ctx.principal) throw errors.unauthenticated();
  return ctx.principal;
}

export function tenantIdOf(ctx: RequestContext): string {
  return requirePrincipal(ctx).tenantId;
}

/** The caller's tenant-scoped database client: every query it makes is filtered by tenant. */
export function db(ctx: RequestContext): ScopedPrisma {
  return ctx.app.scoped(tenantIdOf(ctx));
}

export function loadTenant(ctx: RequestContext): Promise<Tenant> {
  const tenantId = tenantIdOf(ctx);
  ctx.cache.tenant ??= ctx.app.prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } });
  return ctx.cache.tenant;
}

/** The reader asserted by X-Service-Identity, or null when the header is absent. Invalid → 401. */
export function currentReader(ctx: RequestContext): Promise<ReaderIdentity | null> {
  ctx.cache.reader ??= (async () => {
    if (!ctx.identityToken) return null;
    const tenant = await loadTenant(ctx);
    return verifyIdentity(ctx.identityToken, ctx.app.secretBox.open(tenant.identitySecretEnc), ctx.app.clock);
  })();
  return ctx.cache.reader;
}

export async function requireReader(ctx: RequestContext): Promise<ReaderIdentity> {
  const reader = await currentReader(ctx);
  if (!reader) throw errors.invalidIdentity("This action needs the reader's identity assertion in X-Service-Identity.");
  return reader;
}
