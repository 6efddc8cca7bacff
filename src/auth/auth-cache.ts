// Authentication without a database round trip in steady state: API keys (by the sha256 of the raw
// key, with their tenant's row) and tenant rows (admin JWTs, settings, identity secrets) are kept in
// process. Expiry is checked against the clock on every use, cached or not; revocation, settings
// changes and identity-secret rotation drop the tenant's entries on this instance at once and on
// every other instance through a Redis message (within milliseconds). Entries also expire after
// `ttlMs` (60 s) as a safety net, and while the invalidation channel is not connected nothing is
// served from the cache at all, so a lost message can never keep a revoked key alive. Unknown keys
// are never cached, so random keys cannot grow memory; the cache holds at most `maxEntries`.
import { createControlChannel } from "../lib/control-channel.js";
import type { RedisClient, RedisTarget } from "../lib/redis-connection.js";
import type { Logger } from "pino";
import type { PrismaClient, Tenant } from "../generated/prisma/client.js";

export interface CachedKey {
  id: string;
  tenantId: string;
  capabilities: string[];
  kind: "secret" | "publishable";
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  tenant: Tenant;
}

export interface AuthCache {
  key(hash: string): CachedKey | undefined;
  putKey(hash: string, key: CachedKey): void;
  tenant(id: string): Tenant | undefined;
  putTenant(tenant: Tenant): void;
  /** Drops everything cached for the tenant here, and tells every other instance to do the same. */
  invalidateTenant(tenantId: string): void;
  close(): Promise<void>;
}

export const AUTH_INVALIDATION_CHANNEL = "eng:auth:invalidate";

/** Reads of tenant rows in flight, by cache and tenant: a burst of misses (a reconnect storm) reads once. */
const reading = new WeakMap<AuthCache, Map<string, Promise<Tenant | null>>>();

/** A tenant's row: the cached one, else read (once for concurrent callers) and cached; null when there is no such tenant. */
export function tenantRow(deps: { prisma: PrismaClient; authCache: AuthCache }, tenantId: string): Promise<Tenant | null> {
  const cached = deps.authCache.tenant(tenantId);
  if (cached) return Promise.resolve(cached);
  let inFlight = reading.get(deps.authCache);
  if (!inFlight) reading.set(deps.authCache, (inFlight = new Map()));
  const pending = inFlight.get(tenantId);
  if (pending) return pending;
  const read = deps.prisma.tenant
    .findUnique({ where: { id: tenantId } })
    .then((tenant) => {
      if (tenant) deps.authCache.putTenant(tenant);
      return tenant;
    })
    .finally(() => inFlight.delete(tenantId));
  inFlight.set(tenantId, read);
  return read;
}

interface Entry<T> {
  value: T;
  at: number;
}

export function createAuthCache(opts: {
  /** where Redis is when several instances share the database; absent = one instance */
  redisTarget?: RedisTarget | undefined;
  /** the command connection, for publishing invalidations */
  redis?: RedisClient | undefined;
  log: Logger;
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}): AuthCache {
  const ttlMs = opts.ttlMs ?? 60_000;
  const maxEntries = opts.maxEntries ?? 10_000;
  const now = opts.now ?? Date.now;
  const keys = new Map<string, Entry<CachedKey>>();
  const tenants = new Map<string, Entry<Tenant>>();
  const keysOfTenant = new Map<string, Set<string>>();
  let listening = false;

  const control = createControlChannel({
    channel: AUTH_INVALIDATION_CHANNEL,
    redis: opts.redisTarget,
    publisher: opts.redis,
    log: opts.log,
    onMessage: (tenantId) => dropTenant(tenantId),
    onListening(now) {
      clearAll(); // anything may have changed while we were not listening
      listening = now;
    },
  });

  function clearAll(): void {
    keys.clear();
    tenants.clear();
    keysOfTenant.clear();
  }

  function dropTenant(tenantId: string): void {
    tenants.delete(tenantId);
    for (const hash of keysOfTenant.get(tenantId) ?? []) keys.delete(hash);
    keysOfTenant.delete(tenantId);
  }

  function fresh<T>(map: Map<string, Entry<T>>, id: string): T | undefined {
    if (!listening) return undefined;
    const e = map.get(id);
    if (!e) return undefined;
    if (now() - e.at >= ttlMs) {
      map.delete(id);
      return undefined;
    }
    return e.value;
  }

  function bound<T>(map: Map<string, Entry<T>>): void {
    while (map.size > maxEntries) {
      const oldest = map.keys().next().value;
      if (oldest === undefined) break;
      map.delete(oldest);
    }
  }

  return {
    key: (hash) => fresh(keys, hash),
    putKey(hash, key) {
      if (!listening) return;
      keys.delete(hash);
      keys.set(hash, { value: key, at: now() });
      let set = keysOfTenant.get(key.tenantId);
      if (!set) keysOfTenant.set(key.tenantId, (set = new Set()));
      set.add(hash);
      bound(keys);
      // the key's tenant row came with it: tenant lookups (stream settings, admin JWTs) use it too
      tenants.delete(key.tenant.id);
      tenants.set(key.tenant.id, { value: key.tenant, at: now() });
      bound(tenants);
    },
    tenant: (id) => fresh(tenants, id),
    putTenant(tenant) {
      if (!listening) return;
      tenants.delete(tenant.id);
      tenants.set(tenant.id, { value: tenant, at: now() });
      bound(tenants);
    },
    invalidateTenant(tenantId) {
      dropTenant(tenantId); // here at once; every instance (this one too) again when the message arrives
      control.publish(tenantId);
    },
    async close() {
      listening = false;
      clearAll();
      control.close();
    },
  };
}
