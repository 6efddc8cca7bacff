// Bounded storage: a periodic job, on one instance at a time (a transaction-scoped advisory lock,
// taken by each of its transactions), keeps the event log's partitions and deletes what is old.
//
// The event log is partitioned by UTC day (prisma/sql/75-event-partitions.sql, docs/scaling.md):
//  - each pass creates the day partitions a week ahead (rows that went to the DEFAULT partition for
//    want of one move into it), and
//  - drops, whole, every partition whose range is older than the longest replay window of any
//    tenant (replay.maxAgeSeconds, the default for those without), one short transaction each: the
//    events a pending webhook delivery still needs are kept (moved to the DEFAULT partition).
// What no partition can express stays row by row (docs/scaling.md says why): the events of a tenant
// whose replay.maxAgeSeconds is shorter than that longest window, once older than its own; events
// beyond the newest replay.maxEvents of their discussion; and rows of the DEFAULT partition older than
// every window. Again, never one a pending delivery still needs.
//
// It deletes as well
//  - webhook attempts older than the tenant's retention.deliveryLogDays (default 30), and the other
//    kinds' jobs (chat alerts, Akismet) sent or failed that long ago (a webhook job goes with its event),
//  - spent or expired stream tickets, an hour after their expiry,
//  - expired console sessions and links, readers' expired hosted sign-in sessions, and the hosted
//    sign-in's one-time tokens an hour after their expiry (the hour its per-address limit counts),
//  - Idempotency-Keys past their tenant's idempotency.ttlHours (a claim already treats them as new),
//  - readers' inbox items older than their tenant's inbox.retentionDays (default 90; no longer listed
//    from then on: src/modules/inbox/inbox.ts).
// Time comes from the injectable clock; each pass's deletions show in retention_deleted_total (the
// rows of a dropped partition counted as events).
// Under engine/: a pass is no tenant's request — it works on every tenant's rows at once (each kept or
// deleted by its own tenant's settings, read from the tenants table), so it runs on the app's raw
// client, never through a tenant's store; built by the composition root (src/runtime.ts).
import type { Logger } from "pino";
import { Prisma, type PrismaClient } from "../../../generated/prisma/client.js";
import type { Clock } from "../../../lib/clock.js";
import type { Metrics } from "../../../lib/metrics.js";
import { DEFAULT_SETTINGS } from "../../../tenancy/settings/tree.js";

const LOCK_ID = 4_207_311_878;
const TICKET_KEEP_MS = 60 * 60_000;
/** day partitions kept ready ahead of the clock */
export const PARTITION_DAYS_AHEAD = 7;
/**
 * How long a partition step waits for its lock: under PostgreSQL's 1 s deadlock_timeout (so a writer
 * is never the one a deadlock check aborts), and all a write may wait behind it. Not had: next pass.
 */
const PARTITION_LOCK_TIMEOUT_MS = 500;

export interface RetentionResult {
  /** events deleted: rows of dropped partitions and rows deleted one by one */
  events: number;
  /** partitions of the event log created ahead, and dropped */
  partitionsCreated: number;
  partitionsDropped: number;
  attempts: number;
  /** jobs of the other kinds (chat alerts, Akismet), sent or failed before retention.deliveryLogDays */
  alerts: number;
  tickets: number;
  /** ended console and reader sessions, expired sign-in links and tokens */
  sessions: number;
  /** expired Idempotency-Key records */
  idempotencyKeys: number;
  /** inbox items past inbox.retentionDays */
  inboxItems: number;
}

export interface RetentionJob {
  /** One pass; null when another instance holds the lock. */
  runOnce(): Promise<RetentionResult | null>;
  start(intervalMs: number): void;
  stop(): void;
}

export function createRetentionJob(deps: {
  prisma: PrismaClient;
  clock: Clock;
  log: Logger;
  metrics?: Pick<Metrics, "retentionDeleted">;
}): RetentionJob {
  const { prisma, clock } = deps;
  const d = DEFAULT_SETTINGS;
  let timer: NodeJS.Timeout | undefined;

  type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];
  /** One transaction of the pass under the job's lock; null when another instance holds it. */
  const locked = <T>(work: (tx: Tx) => Promise<T>, opts: { lockTimeoutMs?: number } = {}) =>
    prisma.$transaction(
      async (tx) => {
        const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${LOCK_ID}::bigint) AS locked`;
        if (!lock?.locked) return null;
        if (opts.lockTimeoutMs) await tx.$executeRawUnsafe(`SET LOCAL lock_timeout = ${opts.lockTimeoutMs}`);
        return { value: await work(tx) };
      },
      { timeout: 60_000, maxWait: 5_000 },
    );
  const lockTimedOut = (err: unknown) => /lock timeout|55P03/.test(String((err as { message?: string }).message ?? err));

  /** The day partitions ahead; 0 when a lock was not had in time (the next pass tries again). */
  async function createAhead(now: Date): Promise<number | null> {
    try {
      const r = await locked(
        async (tx) => {
          const [row] = await tx.$queryRaw<
            { n: number }[]
          >`SELECT eng_event_partitions_ahead(${now}::timestamptz, ${PARTITION_DAYS_AHEAD}::int) AS n`;
          return row?.n ?? 0;
        },
        { lockTimeoutMs: PARTITION_LOCK_TIMEOUT_MS },
      );
      return r === null ? null : r.value;
    } catch (err) {
      if (!lockTimedOut(err)) throw err;
      deps.log.warn("retention: creating the event log's partitions waited too long for a lock; next pass");
      return 0;
    }
  }

  /** Drops the partitions every replay window has left, oldest first, one transaction each. */
  async function dropOld(now: Date): Promise<{ dropped: number; events: number }> {
    const [w] = await prisma.$queryRaw<{ secs: number }[]>`
      SELECT COALESCE(max(COALESCE((settings -> 'replay' ->> 'maxAgeSeconds')::int, ${d.replay.maxAgeSeconds})), ${d.replay.maxAgeSeconds})::int AS secs
        FROM tenants`;
    const horizon = new Date(now.getTime() - (w?.secs ?? d.replay.maxAgeSeconds) * 1000);
    const old = await prisma.$queryRaw<{ name: string }[]>`
      SELECT c.relname::text AS name
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = to_regclass('public.events')
         AND upper(eng_event_partition_range(c.relname)) <= ${horizon}::timestamptz
       ORDER BY upper(eng_event_partition_range(c.relname))`;
    let dropped = 0;
    let events = 0;
    for (const { name } of old) {
      try {
        const r = await locked(
          async (tx) => {
            const [row] = await tx.$queryRaw<
              { r: { events: number; kept: number } | null }[]
            >`SELECT eng_drop_event_partition(${name}) AS r`;
            return row?.r ?? null;
          },
          { lockTimeoutMs: PARTITION_LOCK_TIMEOUT_MS },
        );
        if (r === null) break;
        if (r.value) {
          dropped++;
          events += r.value.events;
          deps.log.info({ partition: name, events: r.value.events, kept: r.value.kept }, "retention: event log partition dropped");
        }
      } catch (err) {
        if (!lockTimedOut(err)) throw err;
        deps.log.warn({ partition: name }, "retention: dropping an event log partition waited too long for a lock; next pass");
        break;
      }
    }
    return { dropped, events };
  }

  async function runOnce(): Promise<RetentionResult | null> {
    const now = clock.now();
    const partitioned = await prisma.$queryRaw<{ p: boolean }[]>`
      SELECT (SELECT relkind FROM pg_class WHERE oid = to_regclass('public.events')) = 'p' AS p`;
    let partitionsCreated = 0;
    let drops = { dropped: 0, events: 0 };
    if (partitioned[0]?.p) {
      const made = await createAhead(now);
      if (made === null) return null;
      partitionsCreated = made;
      drops = await dropOld(now);
    }
    const result = await prisma.$transaction(
      async (tx) => {
        const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${LOCK_ID}::bigint) AS locked`;
        if (!lock?.locked) return null;
        // the longest replay window: what the partitions are dropped by
        const [w] = await tx.$queryRaw<{ secs: number }[]>`
          SELECT COALESCE(max(COALESCE((settings -> 'replay' ->> 'maxAgeSeconds')::int, ${d.replay.maxAgeSeconds})), ${d.replay.maxAgeSeconds})::int AS secs
            FROM tenants`;
        const longest = w?.secs ?? d.replay.maxAgeSeconds;
        const needed = Prisma.sql`NOT EXISTS (SELECT 1 FROM webhook_deliveries w WHERE w.event_id = e.id AND w.status = 'pending')`;
        // a tenant whose window is shorter than the longest: its own events once older than its window
        const shorter = await tx.$executeRaw`
          DELETE FROM events e USING tenants t
           WHERE t.id = e.tenant_id
             AND COALESCE((t.settings -> 'replay' ->> 'maxAgeSeconds')::int, ${d.replay.maxAgeSeconds}) < ${longest}::int
             AND e.occurred_at < ${now}::timestamptz
                   - make_interval(secs => COALESCE((t.settings -> 'replay' ->> 'maxAgeSeconds')::int, ${d.replay.maxAgeSeconds}))
             AND ${needed}`;
        // beyond the newest replay.maxEvents of their discussion
        const beyond = await tx.$executeRaw`
          DELETE FROM events e USING discussions ds, tenants t
           WHERE t.id = ds.tenant_id
             AND ds.seq > COALESCE((t.settings -> 'replay' ->> 'maxEvents')::int, ${d.replay.maxEvents})
             AND e.tenant_id = ds.tenant_id AND e.discussion_id = ds.id
             AND e.seq <= ds.seq - COALESCE((t.settings -> 'replay' ->> 'maxEvents')::int, ${d.replay.maxEvents})
             AND ${needed}`;
        // the DEFAULT partition's rows older than every window (kept for a delivery, or written where no
        // partition was; an unpartitioned log's old rows, before its migration)
        const unpartitioned = partitioned[0]?.p
          ? await tx.$executeRaw`DELETE FROM events_default e WHERE e.occurred_at < ${now}::timestamptz - make_interval(secs => ${longest}::int) AND ${needed}`
          : await tx.$executeRaw`DELETE FROM events e WHERE e.occurred_at < ${now}::timestamptz - make_interval(secs => ${longest}::int) AND ${needed}`;
        const events = drops.events + shorter + beyond + unpartitioned;
        const attempts = await tx.$executeRaw`
          DELETE FROM webhook_attempts a USING tenants t
           WHERE t.id = a.tenant_id
             AND a.created_at < ${now}::timestamptz
                 - make_interval(days => COALESCE((t.settings -> 'retention' ->> 'deliveryLogDays')::int, ${d.retention.deliveryLogDays}))`;
        const alerts = await tx.$executeRaw`
          DELETE FROM webhook_deliveries w USING tenants t
           WHERE t.id = w.tenant_id AND w.kind <> 'webhook' AND w.status <> 'pending'
             AND w.updated_at < ${now}::timestamptz
                 - make_interval(days => COALESCE((t.settings -> 'retention' ->> 'deliveryLogDays')::int, ${d.retention.deliveryLogDays}))`;
        const tickets = await tx.$executeRaw`
          DELETE FROM stream_tickets
           WHERE GREATEST(expires_at, resume_until) < ${new Date(now.getTime() - TICKET_KEEP_MS)}::timestamptz`;
        const sessions =
          (await tx.$executeRaw`DELETE FROM console_sessions WHERE expires_at < ${now}::timestamptz`) +
          (await tx.$executeRaw`DELETE FROM console_links WHERE expires_at < ${now}::timestamptz`) +
          (await tx.$executeRaw`DELETE FROM reader_sessions WHERE expires_at < ${now}::timestamptz`) +
          (await tx.$executeRaw`DELETE FROM sign_in_tokens WHERE expires_at < ${new Date(now.getTime() - TICKET_KEEP_MS)}::timestamptz`);
        const idempotencyKeys = await tx.$executeRaw`DELETE FROM idempotency_keys WHERE expires_at <= ${now}::timestamptz`;
        const inboxItems = await tx.$executeRaw`
          DELETE FROM inbox_items i USING tenants t
           WHERE t.id = i.tenant_id
             AND i.created_at < ${now}::timestamptz
                 - make_interval(days => COALESCE((t.settings -> 'inbox' ->> 'retentionDays')::int, ${d.inbox.retentionDays}))`;
        return {
          events,
          partitionsCreated,
          partitionsDropped: drops.dropped,
          attempts,
          alerts,
          tickets,
          sessions,
          idempotencyKeys,
          inboxItems,
        };
      },
      { timeout: 60_000, maxWait: 5_000 },
    );
    if (result) {
      const { partitionsCreated: _made, partitionsDropped, ...rows } = result;
      for (const [what, n] of Object.entries({ ...rows, event_partitions: partitionsDropped }))
        if (n > 0) deps.metrics?.retentionDeleted.inc({ what }, n);
      if (Object.values(result).some((n) => n > 0)) deps.log.info(result, "retention: old rows deleted");
    }
    return result;
  }

  return {
    runOnce,
    start(intervalMs) {
      if (timer) return;
      timer = setInterval(() => void runOnce().catch((err: unknown) => deps.log.warn({ err }, "retention pass failed")), intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
