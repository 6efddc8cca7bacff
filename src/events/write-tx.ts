// A tenant-scoped interactive transaction for writes that append no events (keys, settings, webhook
// endpoints). Writes that append events are single statements: src/events/statement.ts.
import type { ScopedPrisma, ScopedTx } from "../db/tenant-scope.js";

export type { ScopedTx };

/** What a write needs of the app's services. */
export interface WriteServices {
  scoped: (tenantId: string) => ScopedPrisma;
}

export async function writeTx<T>(app: WriteServices, tenantId: string, fn: (tx: ScopedTx) => Promise<T>): Promise<T> {
  return app.scoped(tenantId).$transaction(fn, { timeout: 15_000, maxWait: 10_000 });
}
