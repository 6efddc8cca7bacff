// The per-request context shared by GraphQL resolvers, REST routes and the stream: who is calling,
// for which tenant, and the app's services (src/context/services.ts).
import type { Tenant } from "../generated/prisma/client.js";
import { errors } from "../lib/errors.js";
import type { Principal } from "../auth/principal.js";
import { verifyIdentity, type ReaderIdentity } from "../auth/identity.js";
import { isProviderToken, type ProviderIdentity } from "../auth/identity-providers.js";
import { isSessionToken, verifySession, type SessionReader } from "../auth/reader-sessions.js";
import type { RateLimitInfo } from "../auth/rate-limit.js";
import type { ScopedPrisma } from "../db/tenant-scope.js";
import type { TenantStore } from "../db/tenant-store.js";
import { runWrite, type TenantWrite, type TenantWriteArgs } from "../events/statement.js";
import type { WriteRow } from "../events/write-results.js";
import type { IdempotencyScope } from "../idempotency/records.js";
import type { AppServices } from "./services.js";
import { resolvePrincipal } from "./resolve-principal.js";
import { header, type HeaderBag } from "./headers.js";
import { resolveSettings } from "../tenancy/settings/resolve.js";
import { tenantRow } from "../auth/auth-cache.js";
import type { Replica } from "../db/replicas/replica-set.js";
import { CONSISTENCY_HEADER } from "../db/replicas/consistency-token.js";
import { readConsistencyOf, type ReadConsistency } from "./read-routing.js";

export type { AppServices };

export interface RequestContext {
  app: AppServices;
  principal: Principal | null;
  identityToken: string | null;
  rateLimit?: RateLimitInfo;
  /** told when the request's rate-limit state changes (GraphQL: more root fields counted) */
  onRateLimit?: (info: RateLimitInfo) => void;
  /** the request's Idempotency-Key, claimed (src/http/idempotency.ts): its writes record their results for it */
  idempotency?: IdempotencyScope | undefined;
  /**
   * The reader's own IP address and user agent, for Akismet's check of a new comment and nothing else
   * (never stored): a backend names them in X-Service-Reader-Ip / X-Service-Reader-Agent; behind a
   * publishable key they are the browser's own (the client's address, its User-Agent).
   */
  readerClient?: { ip: string | null; userAgent: string | null };
  /**
   * The client's address (the connection's peer, or the client a TRUST_PROXY peer names:
   * src/http/client-address.ts): a stream's presence counts a reader-less stream by it (src/stream-engine/presence-people.ts).
   */
  clientAddress?: string | null;
  /** a publishable key's request from a browser: its Origin, admitted by the tenant's allowedOrigins (else null) */
  browserOrigin?: string | null;
  /** what the request's headers say of its reads (X-Service-Consistency, a recent write): with replicas only */
  readConsistency?: ReadConsistency | undefined;
  /**
   * The request carried X-Service-Consistency: a read of what is projected from the event log off the
   * write path (comment search's documents) waits, briefly, until it holds the events committed before
   * the request (src/modules/comments/search.ts).
   */
  readsItsWrites?: boolean;
  /** the read replica `store(ctx)` and `db(ctx)` read through (absent: the primary); set only by `routeReads` (src/context/read-routing.ts) */
  readsFrom?: Replica;
  /** memoised lookups */
  cache: { tenant?: Promise<Tenant>; reader?: Promise<ReaderIdentity | null> };
}

export async function createRequestContext(
  app: AppServices,
  headers: HeaderBag,
  opts: { method?: string; ip?: string | undefined } = {},
): Promise<RequestContext> {
  const caller = await resolvePrincipal(app, headers, opts);
  const principal = caller?.principal ?? null;
  const rateLimit = principal ? await app.rateLimiter.consume(principal, caller?.tenant?.settings) : undefined;
  const ctx: RequestContext = {
    app,
    principal,
    identityToken: header(headers, "x-service-identity"),
    cache: caller?.tenant ? { tenant: Promise.resolve(caller.tenant) } : {},
    ...(rateLimit ? { rateLimit } : {}),
    clientAddress: opts.ip ?? null,
    readConsistency: readConsistencyOf(app, headers, principal?.tenantId ?? null),
    readsItsWrites: header(headers, CONSISTENCY_HEADER.toLowerCase()) !== null,
    readerClient:
      principal?.kind === "publishable"
        ? { ip: opts.ip ?? null, userAgent: header(headers, "user-agent") }
        : { ip: header(headers, "x-service-reader-ip"), userAgent: header(headers, "x-service-reader-agent") },
  };
  if (principal?.kind === "publishable") {
    const origin = header(headers, "origin");
    await admitBrowser(ctx, origin);
    ctx.browserOrigin = origin;
  }
  return ctx;
}

/** What an engine acts as in a tenant it found itself: a principal of that tenant, without its id. */
export type ActingAs = Principal extends infer P ? (P extends { tenantId: string } ? Omit<P, "tenantId"> : never) : never;

/**
 * The request context of code that is not a tenant's request but acts in one tenant it found itself
 * (an engine, a worker, a door that finds the tenant: the CLI's render, an inbound fediverse
 * activity, a chat alert's link): `as` is what it acts as, `reader` the reader it acts for. No
 * headers, so no rate limit spent, no Idempotency-Key, no reads routed: the tenant's primary.
 */
export function contextForTenant(app: AppServices, tenant: Tenant, as: ActingAs, reader?: ReaderIdentity): RequestContext {
  return {
    app,
    principal: { ...as, tenantId: tenant.id } as Principal,
    identityToken: null,
    cache: { tenant: Promise.resolve(tenant), ...(reader ? { reader: Promise.resolve(reader) } : {}) },
  };
}

/**
 * A publishable key is used from the tenant's pages: from a browser (an Origin header) only on an
 * origin its tenant allows, and each reader behind it has a budget of its own.
 */
async function admitBrowser(ctx: RequestContext, origin: string | null): Promise<void> {
  const tenant = await loadTenant(ctx);
  if (origin && !ctx.app.origins.tenantAllows(resolveSettings(tenant.settings), origin)) {
    ctx.app.origins.refused(origin, tenant.id);
    throw errors.originNotAllowed(origin);
  }
  // an invalid assertion is refused by whatever needs the reader; it counts against the key only
  const reader = await currentReader(ctx).catch(() => null);
  if (reader) await ctx.app.rateLimiter.consumeReader(tenant.id, reader.id, tenant.settings);
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
  return ctx.app.scoped(tenantIdOf(ctx), ctx.readsFrom);
}

/** A tenant's store as a request uses it: its writes also record their results under the request's Idempotency-Key. */
export interface RequestStore extends TenantStore {
  /**
   * An event-appending write (src/events/statement.ts): the database function `fn` with its
   * arguments by name but the tenant's, which the store binds as `$1`; one statement, checked by the
   * tenant guard, its events published after the commit. Returns the function's row.
   */
  write<F extends TenantWrite>(fn: F, args: TenantWriteArgs<F>): Promise<WriteRow<F>>;
}

/**
 * The caller's tenant's store (src/db/tenant-store.ts): the scoped Prisma client, plain SQL whose
 * `$1` is the tenant's id, and the event-appending writes, every statement checked by the tenant
 * guard. Feature code reaches tenant data only through this (or `db(ctx)`, its Prisma client).
 */
export function store(ctx: RequestContext): RequestStore {
  const { tenantId, prisma, sql } = ctx.app.stores(tenantIdOf(ctx), ctx.readsFrom);
  // reads on the request's replica when it has one (src/context/read-routing.ts); writes always on the primary
  const primarySql = ctx.readsFrom ? ctx.app.stores(tenantId).sql : sql;
  return { tenantId, prisma, sql, write: (fn, args) => runWrite(ctx.app, primarySql, ctx.idempotency, fn, args) };
}

export function loadTenant(ctx: RequestContext): Promise<Tenant> {
  const tenantId = tenantIdOf(ctx);
  ctx.cache.tenant ??= (async () => {
    const tenant = await tenantRow(ctx.app, tenantId);
    if (!tenant) throw errors.unauthenticated();
    return tenant;
  })();
  return ctx.cache.tenant;
}

/** The reader asserted by X-Service-Identity, or null when the header is absent. Invalid → 401. */
export function currentReader(ctx: RequestContext): Promise<ReaderIdentity | null> {
  ctx.cache.reader ??= (async () => {
    if (!ctx.identityToken) return null;
    return verifyReaderToken(ctx.app, await loadTenant(ctx), ctx.identityToken);
  })();
  return ctx.cache.reader;
}

/**
 * A reader token verified as a request's X-Service-Identity is (also the settings' "Test token"): a
 * reader session of the hosted sign-in (`rs_…`, src/auth/reader-sessions.ts), one signed with a public
 * key by the tenant's identity providers, HS256 with the tenant's secrets. Invalid → 401
 * invalid_identity with the reason.
 */
export function verifyReaderToken(
  app: AppServices,
  tenant: Tenant,
  token: string,
): Promise<ReaderIdentity | ProviderIdentity | SessionReader> {
  if (isSessionToken(token)) return verifySession(app.stores(tenant.id), app.clock, token);
  if (isProviderToken(token)) return app.identityProviders.verify(token, resolveSettings(tenant.settings).identity.providers);
  return verifyIdentity(token, identitySecrets(app, tenant), app.clock);
}

/** The tenant's identity secrets: the current one, then the one before it while its overlap lasts. */
function identitySecrets(app: AppServices, tenant: Tenant): string[] {
  const secrets = [app.secretBox.open(tenant.identitySecretEnc)];
  const until = tenant.previousIdentitySecretExpiresAt;
  if (tenant.previousIdentitySecretEnc && until && until.getTime() > app.clock.now().getTime()) {
    secrets.push(app.secretBox.open(tenant.previousIdentitySecretEnc));
  }
  return secrets;
}

export async function requireReader(ctx: RequestContext): Promise<ReaderIdentity> {
  const reader = await currentReader(ctx);
  if (!reader) throw errors.invalidIdentity("This action needs the reader's identity assertion in X-Service-Identity.");
  // the address for reply emails, recorded when the reader acts (src/context/reader-addresses.ts)
  await ctx.app.readerAddresses.note(tenantIdOf(ctx), reader);
  return reader;
}
