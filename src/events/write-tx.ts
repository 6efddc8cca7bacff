// A tenant-scoped interactive transaction for writes that append no events (keys, settings, webhook
// endpoints). Writes that append events are single statements: src/events/statement.ts.
import type { ScopedPrisma, ScopedTx } from "../db/tenant-scope.js";

export type { ScopedTx };

/** What a write needs of the app's services. */
export interface WriteServices {
  scoped: (tenantId: string) => ScopedPrisma;
}

export async function writeTx<T>(app: WriteServices, tenantId: string, fn: (tx: ScopedTx) => Promise<T>): Promise<T> {
  // short limits: a stalled database answers 503 in seconds (src/db/errors.ts), never a hang
  return app.scoped(tenantId).$transaction(fn, { timeout: 5_000, maxWait: 4_000 });
}
