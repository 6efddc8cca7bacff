// The one way domain code changes state: a tenant-scoped transaction that may append events; the
// events are published only after the commit succeeds.
import type { AppServices } from "../context/request.js";
import type { ScopedTx } from "../db/tenant-scope.js";
import { appendEvent, type NewEvent } from "./log.js";
import type { StoredEvent } from "./types.js";

export type { ScopedTx };

export interface EventSink {
  append(e: Omit<NewEvent, "occurredAt" | "tenantId"> & { occurredAt?: Date }): Promise<StoredEvent>;
}

export async function writeTx<T>(
  app: AppServices,
  tenantId: string,
  fn: (tx: ScopedTx, events: EventSink) => Promise<T>,
): Promise<T> {
  const appended: StoredEvent[] = [];
  const result = await app.scoped(tenantId).$transaction(
    async (tx) =>
      fn(tx, {
        append: async (e) => {
          const stored = await appendEvent(tx, { ...e, tenantId, occurredAt: e.occurredAt ?? app.clock.now() });
          appended.push(stored);
          return stored;
        },
      }),
    { timeout: 15_000, maxWait: 10_000 },
  );
  if (appended.length) app.events.publish(appended);
  return result;
}
