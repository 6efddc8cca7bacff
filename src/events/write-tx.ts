// The one way domain code changes state: a tenant-scoped transaction that may append events. Each
// event's in-transaction steps (webhook jobs) run in the same transaction; the events are published
// and the after-commit work runs only after the commit succeeds.
import type { ScopedPrisma, ScopedTx } from "../db/tenant-scope.js";
import type { Clock } from "../lib/clock.js";
import { appendEvent, type NewEvent } from "./log.js";
import type { AfterCommit, EventPipeline } from "./pipeline.js";
import type { StoredEvent } from "./types.js";

export type { ScopedTx };

export interface EventSink {
  append(e: Omit<NewEvent, "occurredAt" | "tenantId"> & { occurredAt?: Date }): Promise<StoredEvent>;
}

/** What a write needs of the app's services. */
export interface WriteServices {
  scoped: (tenantId: string) => ScopedPrisma;
  clock: Clock;
  events: EventPipeline;
}

export async function writeTx<T>(
  app: WriteServices,
  tenantId: string,
  fn: (tx: ScopedTx, events: EventSink) => Promise<T>,
): Promise<T> {
  const appended: StoredEvent[] = [];
  const afterCommit = new Set<AfterCommit>();
  const result = await app.scoped(tenantId).$transaction(
    async (tx) =>
      fn(tx, {
        append: async (e) => {
          const stored = await appendEvent(tx, { ...e, tenantId, occurredAt: e.occurredAt ?? app.clock.now() });
          for (const then of await app.events.inTransaction(tx, stored)) afterCommit.add(then);
          appended.push(stored);
          return stored;
        },
      }),
    { timeout: 15_000, maxWait: 10_000 },
  );
  if (appended.length) app.events.publish(appended);
  for (const then of afterCommit) then();
  return result;
}
