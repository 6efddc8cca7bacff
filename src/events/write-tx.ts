// A tenant-scoped interactive transaction for writes that append no events (keys, settings, webhook
// endpoints). Writes that append events are single statements: src/events/statement.ts. Under an
// Idempotency-Key the transaction also records its result for the key (sealed: it may hold a secret
// shown once), and a repeat of a request whose answer was lost gets that result back instead of
// writing again (src/idempotency/records.ts).
import type { ScopedPrisma, ScopedTx } from "../db/tenant-scope.js";
import { errors } from "../lib/errors.js";
import type { IdempotencyRecords, IdempotencyScope } from "../idempotency/records.js";

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

export async function writeTx<T>(caller: TxCaller, tenantId: string, fn: (tx: ScopedTx) => Promise<T>): Promise<T> {
  const { app, idempotency: scope } = caller;
  if (scope && scope.writes < scope.replay.length) return app.idempotency.openResult(scope.replay[scope.writes++]) as T;
  // short limits: a stalled database answers 503 in seconds (src/db/failures.ts), never a hang
  const result = await app.scoped(tenantId).$transaction(
    async (tx) => {
      const value = await fn(tx);
      if (scope) {
        const recorded = JSON.stringify(app.idempotency.sealResult(value));
        const n = await tx.$executeRaw`
          UPDATE idempotency_keys SET results = results || jsonb_build_array(${recorded}::jsonb)
           WHERE tenant_id = ${scope.tenantId} AND key = ${scope.key} AND owner = ${scope.owner} AND status IS NULL`;
        // another request took the key over (this one was given up as dead): roll this one back
        if (n !== 1) throw errors.idempotencyInProgress(1);
      }
      return value;
    },
    { timeout: 5_000, maxWait: 4_000 },
  );
  if (scope) scope.writes++;
  return result;
}
