// The tenant's store: everything feature code (src/modules/**) reads or writes of a tenant's data goes
// through one, bound to the request's tenant (`store(ctx)` in src/context/request.ts):
// - `prisma`: the tenant-scoped Prisma client (src/db/tenant-scope.ts), every model query filtered by
//   the tenant and every raw statement passed through the tenant guard;
// - `sql`: plain SQL for the hot paths, the tenant's id always `$1` (the caller passes the rest, from
//   `$2`), each statement text passed through the tenant guard (src/db/tenant-guard.ts) the first time
//   it is seen; a statement that could read or change another tenant's rows is refused before it runs.
// Work that crosses tenants (the email and webhook workers, retention, import staging) is not feature
// code: it lives in engine files (`engine/` folders) and uses the app's raw clients by name.
import type { Sql } from "./sql.js";
import { guardedStatement } from "./guarded-statement.js";
import type { ScopedPrisma } from "./tenant-scope.js";
import type { Replica } from "./replicas/replica-set.js";

/** Plain SQL bound to one tenant: `$1` is the tenant's id; `values` are `$2`, `$3`, … */
export interface TenantSql {
  readonly tenantId: string;
  query<R>(text: string, values: unknown[], name?: string): Promise<R[]>;
  /** maintenance work with a limit of its own (Sql.long) */
  long<R>(text: string, values: unknown[], timeoutMs: number): Promise<R[]>;
}

export interface TenantStore {
  readonly tenantId: string;
  readonly prisma: ScopedPrisma;
  readonly sql: TenantSql;
}

const FIRST = new Set([1]);

export function tenantSql(sql: Sql, tenantId: string): TenantSql {
  return {
    tenantId,
    async query<R>(text: string, values: unknown[], name?: string) {
      guardedStatement(text, FIRST, "1");
      return sql.query<R>(text, [tenantId, ...values], name);
    },
    async long<R>(text: string, values: unknown[], timeoutMs: number) {
      guardedStatement(text, FIRST, "1");
      return sql.long<R>(text, [tenantId, ...values], timeoutMs);
    },
  };
}

/**
 * Stores are cached per tenant (at most `max`), as scoped Prisma clients are, for the primary and
 * for each read replica (a read route's request reads through a replica's: src/context/read-routing.ts).
 */
export function createTenantStores(
  scoped: (tenantId: string, replica?: Replica | null) => ScopedPrisma,
  sql: Sql,
  max = 1000,
): (tenantId: string, replica?: Replica | null) => TenantStore {
  const caches = new Map<Replica | null, Map<string, TenantStore>>();
  return (tenantId, replica = null) => {
    let cache = caches.get(replica);
    if (!cache) caches.set(replica, (cache = new Map()));
    let s = cache.get(tenantId);
    if (!s) {
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      s = { tenantId, prisma: scoped(tenantId, replica), sql: tenantSql(replica?.sql ?? sql, tenantId) };
      cache.set(tenantId, s);
    }
    return s;
  };
}
