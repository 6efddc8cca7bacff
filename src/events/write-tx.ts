// A tenant-scoped interactive transaction for writes that append no events (keys, settings, webhook
// endpoints). Writes that append events are single statements: src/events/statement.ts. Under an
// Idempotency-Key the transaction also records its result for the key (sealed: it may hold a secret
// shown once), and a repeat of a request whose answer was lost gets that result back instead of
// writing again (src/idempotency/records.ts).
//
// Feature code writes as the request's tenant: `writeTx(ctx, fn)` takes the tenant from the caller
// (its principal, as `store(ctx)` does), so no call site names a tenant by hand. Naming it,
// `writeTx(caller, tenantId, fn)`, is for work that crosses tenants (an engine/ folder, saying why)
// and the tests that drive the transaction alone; lint refuses it in feature code. Either way the
// transaction is the tenant's scoped client: its model queries are filtered by the tenant and its
// raw statements pass the tenant guard (src/db/tenant-scope.ts) before they run.
import type { ScopedPrisma, ScopedTx } from "../db/tenant-scope.js";
import { databaseRefusal, errors } from "../lib/errors.js";
import type { Principal } from "../auth/principal.js";
import type { IdempotencyRecords, IdempotencyScope } from "../idempotency/records.js";
import { claimPendingKey } from "./statement.js";

export type { ScopedTx };

/** What a write needs of the app's services. */
export interface WriteServices {
  scoped: (tenantId: string) => ScopedPrisma;
  idempotency: Pick<IdempotencyRecords, "sealResult" | "openResult">;
}

/** Who writes: the app's services, and the request's Idempotency-Key when it carries one. */
export interface TxCaller {
  app: WriteServices;
  idempotency?: IdempotencyScope | undefined;
}

/** A request's caller: whose tenant it writes (no principal: 401, as `tenantIdOf(ctx)` answers). */
export interface TenantTxCaller extends TxCaller {
  principal: Pick<Principal, "tenantId"> | null;
}

/** A transaction of the caller's own tenant (the request's principal's). */
export function writeTx<T>(ctx: TenantTxCaller, fn: (tx: ScopedTx) => Promise<T>): Promise<T>;
/** A transaction of a tenant named by hand: engines only (work across tenants), and tests. */
export function writeTx<T>(caller: TxCaller, tenantId: string, fn: (tx: ScopedTx) => Promise<T>): Promise<T>;
export function writeTx<T>(
  caller: TxCaller | TenantTxCaller,
  tenantOrFn: string | ((tx: ScopedTx) => Promise<T>),
  fn?: (tx: ScopedTx) => Promise<T>,
): Promise<T> {
  if (typeof tenantOrFn === "string") return tenantTx(caller, tenantOrFn, fn!);
  const principal = (caller as TenantTxCaller).principal;
  if (!principal) return Promise.reject(errors.unauthenticated());
  return tenantTx(caller, principal.tenantId, tenantOrFn);
}

async function tenantTx<T>(caller: TxCaller, tenantId: string, fn: (tx: ScopedTx) => Promise<T>): Promise<T> {
  const { app, idempotency: scope } = caller;
  // a key its first write was to claim: a transaction claims it first, in a statement of its own
  const pending = scope?.pending;
  if (scope && pending) {
    scope.pending = undefined;
    await claimPendingKey(scope, pending);
  }
  if (scope && scope.writes < scope.replay.length) return app.idempotency.openResult(scope.replay[scope.writes++]) as T;
  // short limits: a stalled database answers 503 in seconds (src/db/failures.ts), never a hang
  const result = await app
    .scoped(tenantId)
    .$transaction(
      async (tx) => {
        const value = await fn(tx);
        if (scope) {
          // the same fenced record the one-statement writes make (eng_idempotency_record in prisma/sql):
          // refused when another request took the key over, rolling this one back
          const recorded = JSON.stringify(app.idempotency.sealResult(value));
          await tx.$queryRaw`SELECT eng_idempotency_record(${scope.tenantId}, ${scope.key}, ${scope.owner}, ${recorded}::json)::text AS r`;
        }
        return value;
      },
      { timeout: 5_000, maxWait: 4_000 },
    )
    .catch((err: unknown) => {
      throw databaseRefusal(err) ?? err;
    });
  if (scope) scope.writes++;
  return result;
}
