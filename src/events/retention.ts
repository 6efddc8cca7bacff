// Bounded storage: a periodic job, on one instance at a time (a transaction-scoped advisory lock),
// deletes
//  - event rows outside every replay window (older than the tenant's replay.maxAgeSeconds, or
//    beyond the newest replay.maxEvents of their discussion) that no pending delivery still needs,
//  - webhook attempts older than the tenant's retention.deliveryLogDays (default 30), and the other
//    kinds' jobs (chat alerts, Akismet) sent or failed that long ago (a webhook job goes with its event),
//  - spent or expired stream tickets, an hour after their expiry,
//  - expired console sessions and links, readers' expired hosted sign-in sessions, and the hosted
//    sign-in's one-time tokens an hour after their expiry (the hour its per-address limit counts),
//  - Idempotency-Keys past their tenant's idempotency.ttlHours (a claim already treats them as new),
//  - readers' inbox items older than their tenant's inbox.retentionDays (default 90; no longer listed
//    from then on: src/modules/inbox/inbox.ts).
// Time comes from the injectable clock; each pass's deletions show in retention_deleted_total.
import type { Logger } from "pino";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import type { Metrics } from "../lib/metrics.js";
import { DEFAULT_SETTINGS } from "../tenancy/settings/tree.js";

const LOCK_ID = 4_207_311_878;
const TICKET_KEEP_MS = 60 * 60_000;

export interface RetentionResult {
  events: number;
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

  async function runOnce(): Promise<RetentionResult | null> {
    const now = clock.now();
    const result = await prisma.$transaction(
      async (tx) => {
        const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${LOCK_ID}::bigint) AS locked`;
        if (!lock?.locked) return null;
        const events = await tx.$executeRaw`
          DELETE FROM events e
           USING discussions ds, tenants t
           WHERE ds.tenant_id = e.tenant_id AND ds.id = e.discussion_id AND t.id = e.tenant_id
             AND (e.occurred_at < ${now}::timestamptz
                    - make_interval(secs => COALESCE((t.settings -> 'replay' ->> 'maxAgeSeconds')::int, ${d.replay.maxAgeSeconds}))
                  OR e.seq <= ds.seq - COALESCE((t.settings -> 'replay' ->> 'maxEvents')::int, ${d.replay.maxEvents}))
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries w WHERE w.event_id = e.id AND w.status = 'pending')`;
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
        return { events, attempts, alerts, tickets, sessions, idempotencyKeys, inboxItems };
      },
      { timeout: 60_000, maxWait: 5_000 },
    );
    if (result) {
      for (const [what, n] of Object.entries(result)) if (n > 0) deps.metrics?.retentionDeleted.inc({ what }, n);
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
