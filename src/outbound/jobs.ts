/**
 * The delivery queue: one `webhook_deliveries` row per (endpoint, event), in the service's own
 * database.
 *
 * Why not pg-boss, graphile-worker or BullMQ: the service has two storage modes with one code path,
 * PostgreSQL and the embedded PGlite database (DATABASE_URL unset), and Redis is optional.
 *  - BullMQ needs Redis, which embedded mode (and a PostgreSQL-only deployment) does not have.
 *  - pg-boss and graphile-worker open their own `pg` pools, install their own schemas and rely on
 *    LISTEN/NOTIFY and advisory locks across connections; PGlite is an in-process, single-connection
 *    database they cannot connect to, so embedded mode would still need a second queue.
 *  - Jobs must be created in the SAME transaction as the event (an interactive Prisma transaction),
 *    so an event can never commit without its jobs or the reverse; a library with its own
 *    connection cannot join that transaction.
 *  - The claim must skip jobs of endpoints whose circuit is open or that are disabled/unverified
 *    (a join on the endpoint row); with a library those jobs would be fetched and re-scheduled
 *    over and over.
 * What remains is small and standard: claim with
 *   UPDATE … FROM (SELECT … FOR UPDATE SKIP LOCKED LIMIT n) SET locked_until = now + lease RETURNING
 * which works on PostgreSQL and PGlite alike. Any number of workers (processes or instances) can
 * claim at once without ever holding the same job: SKIP LOCKED makes concurrent claimers take
 * disjoint rows, and a claimed row carries a lease (`locked_until`) and a `claim_token`. If a worker
 * is killed mid-delivery, its lease simply expires and another worker claims the job again (same
 * idempotency key, new delivery id). Recording an outcome requires the claim token, so a worker
 * that lost its lease cannot overwrite the newer claim's outcome (completions.ts).
 *
 * The same rows carry the tenants' chat alerts (kind `alert`, src/modules/alerts/): a message to a
 * Slack or Discord URL, queued by the write that held or reported a comment; and a moderator's
 * verdict told to Akismet (kind `akismet`, src/modules/moderation/engine/akismet-feedback.ts). The claim
 * takes them beside due webhook jobs, and all go through the one lease, outcome and retry path; they
 * have no endpoint, event, breaker or attempt log (the row keeps its attempts and last error).
 */
import { Prisma, type PrismaClient } from "../generated/prisma/client.js";
import { DeliveryKind } from "../generated/prisma/enums.js";
import type { Sql } from "../db/sql.js";
import { envelopeTextOf } from "../events/stored-envelope.js";

/** What a delivery row sends (the DeliveryKind enum of prisma/schema.prisma). */
export type JobKind = DeliveryKind;
/** Every kind of job. */
export const ALL_KINDS: readonly JobKind[] = Object.values(DeliveryKind);

export interface ClaimedJob {
  id: string;
  tenantId: string;
  kind: JobKind;
  /**
   * A webhook job's endpoint; for another kind the target its slots are counted by (slots.ts): an
   * alert's is `alert:<tenantId>:<alertId>`, so one chat URL that stalls cannot take every slot.
   */
  endpointId: string;
  /** a webhook job's event; null for another kind */
  eventId: string | null;
  /** attempts recorded so far (the next one is attempts + 1) */
  attempts: number;
  claimToken: string;
}

/**
 * A claimed job with what delivering it needs, read in the same statement as the claim. The endpoint,
 * secret and event members are a webhook job's (null for another kind); `message` is another kind's.
 */
export interface ClaimedRow extends Omit<ClaimedJob, "endpointId"> {
  /** null for an alert (batchContext names its target) */
  endpointId: string | null;
  /** another kind's own data: an alert's {alertId, trigger, commentId, reason}, Akismet's {call, commentId} */
  message: unknown;
  createdAt: Date;
  url: string | null;
  verified: boolean;
  state: "active" | "circuit_open" | "disabled";
  consecutiveFailures: number;
  circuitOpenUntil: Date | null;
  /** the endpoint's delivery overrides */
  delivery: unknown;
  tenantSettings: unknown;
  /** the secret that signs now (null only if the endpoint has none) */
  kid: string | null;
  secretEnc: string | null;
  /** secrets rotated out but still valid (their 24 h overlap): the Standard Webhooks signature lists them too */
  previousSecrets: { kid: string; secretEnc: string; validUntil: string }[] | null;
  eventType: string;
  /** the stored envelope's text (API.md §5; src/events/stored-envelope.ts), null for a job without an event */
  envelope: string | null;
}

/**
 * Claims up to `limit` due jobs whose endpoint may receive now (verified, not disabled, circuit
 * closed or its cooldown over), and returns them with their endpoint, signing secret, event and
 * tenant settings: one round trip per batch. Times come from the worker's clock, not the
 * database's, so an injected clock drives scheduling end to end.
 */
export async function claimJobs(
  sql: Sql,
  opts: {
    now: Date;
    leaseUntil: Date;
    limit: number;
    workerId: string;
    /** fairness: at most this many of one endpoint's / one tenant's jobs held by this worker */
    maxPerEndpoint?: number;
    maxPerTenant?: number;
    /** what this worker already holds, by endpoint and by tenant */
    busyEndpoints?: ReadonlyMap<string, number>;
    busyTenants?: ReadonlyMap<string, number>;
    /** the kinds of job claimed (default: every kind) */
    kinds?: readonly JobKind[];
  },
): Promise<ClaimedRow[]> {
  const { now, leaseUntil, limit, workerId } = opts;
  const [epIds, epBusy] = unzip(opts.busyEndpoints);
  const [tIds, tBusy] = unzip(opts.busyTenants);
  const kinds = opts.kinds ?? ALL_KINDS;
  return sql.query<ClaimedRow>(
    CLAIM,
    [epIds, epBusy, tIds, tBusy, opts.maxPerEndpoint ?? limit, now, opts.maxPerTenant ?? limit, limit, leaseUntil, workerId, kinds],
    "eng_webhook_claim",
  );
}

// Candidates are taken per endpoint that may receive now, at most its remaining share each, from
// the (endpoint_id, status, next_attempt_at) index: the cost follows the number of endpoints, not
// the size of the backlog. They are then ranked per tenant (oldest due first) so one batch takes no
// more of a tenant's jobs than its remaining share, and locked with SKIP LOCKED (a window function
// cannot be combined with FOR UPDATE in one SELECT). A named prepared statement: parsed and planned
// once per connection.
//   $1/$2 endpoint ids / jobs held, $3/$4 tenant ids / jobs held, $5 per-endpoint cap, $6 now,
//   $7 per-tenant cap, $8 limit, $9 lease end, $10 worker id, $11 the kinds claimed (a worker of its
//   own takes the webmentions' verifications: src/outbound/webhook-runtime.ts)
const CLAIM = `
    WITH ep_busy AS (
      SELECT * FROM unnest($1::text[], $2::int[]) AS b(endpoint_id, n)
    ), t_busy AS (
      SELECT * FROM unnest($3::text[], $4::int[]) AS b(tenant_id, n)
    ), eligible AS (
      SELECT w.id, w.tenant_id, $5::int - COALESCE(eb.n, 0) AS room
        FROM webhook_endpoints w
        LEFT JOIN ep_busy eb ON eb.endpoint_id = w.id
       -- a pre-filter mirroring breaker.canAttempt (the decision is canAttempt's, in deliver.ts)
       WHERE w.verified AND w.state <> 'disabled' AND 'webhook'::"DeliveryKind" = ANY($11::"DeliveryKind"[])
         AND (w.state = 'active' OR w.circuit_open_until IS NULL OR w.circuit_open_until <= $6::timestamptz)
    ), ranked AS (
      SELECT j.id, j.next_attempt_at,
             row_number() OVER (PARTITION BY e.tenant_id ORDER BY j.next_attempt_at) + COALESCE(tb.n, 0) AS t_load
        FROM eligible e
        CROSS JOIN LATERAL (
          SELECT d.id, d.next_attempt_at
            FROM webhook_deliveries d
           WHERE d.endpoint_id = e.id AND d.status = 'pending'
             AND d.next_attempt_at <= $6::timestamptz
             AND (d.locked_until IS NULL OR d.locked_until <= $6::timestamptz)
           ORDER BY d.next_attempt_at
           LIMIT GREATEST(e.room, 0)
        ) j
        LEFT JOIN t_busy tb ON tb.tenant_id = e.tenant_id
       WHERE e.room > 0
    ), others AS (
      -- due jobs of the other kinds (chat alerts, Akismet, ActivityPub, webmentions: no endpoint; an
      -- ActivityPub domain's circuit is its composer's), from the (kind, status, next_attempt_at) index
      SELECT d.id, d.next_attempt_at
        FROM webhook_deliveries d
       WHERE d.kind = ANY($11::"DeliveryKind"[]) AND d.kind <> 'webhook' AND d.status = 'pending'
         AND d.next_attempt_at <= $6::timestamptz
         AND (d.locked_until IS NULL OR d.locked_until <= $6::timestamptz)
       ORDER BY d.next_attempt_at
       LIMIT $8::int
    ), candidates AS (
      SELECT id FROM (
        SELECT id, next_attempt_at FROM ranked WHERE t_load <= $7::int
        UNION ALL
        SELECT id, next_attempt_at FROM others
      ) due
       ORDER BY next_attempt_at
       LIMIT $8::int
    ), picked AS (
      -- each candidate locked by its primary key alone, its state checked on the locked row: with the
      -- state in the locking scan's condition, a planner whose statistics counted few pending jobs
      -- walked every pending job on the status index once per candidate (80 ms for 32 jobs mid-drain)
      SELECT d.id
        FROM candidates c
        CROSS JOIN LATERAL (
          -- LIMIT: keeps the planner from pushing the state check below into this scan
          SELECT d.id, d.status, d.locked_until FROM webhook_deliveries d WHERE d.id = c.id LIMIT 1 FOR UPDATE SKIP LOCKED
        ) d
       WHERE d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until <= $6::timestamptz)
    ), claimed AS (
      UPDATE webhook_deliveries d
         SET locked_until = $9::timestamptz, claim_token = gen_random_uuid(), locked_by = $10::text
        FROM picked
       WHERE d.id = picked.id
      RETURNING d.id, d.tenant_id, d.kind, d.endpoint_id, d.event_id, d.message, d.attempts, d.claim_token, d.created_at
    )
    SELECT c.id::text AS id, c.tenant_id AS "tenantId", c.kind::text AS kind, c.endpoint_id AS "endpointId",
           c.event_id::text AS "eventId", c.message, c.created_at AS "createdAt",
           c.attempts, c.claim_token::text AS "claimToken",
           w.url, w.verified, w.state::text AS state, w.consecutive_failures AS "consecutiveFailures",
           w.circuit_open_until AS "circuitOpenUntil", w.delivery,
           t.settings AS "tenantSettings", s.kid, s.secret_enc AS "secretEnc", p.previous AS "previousSecrets",
           ev.type AS "eventType", ${envelopeTextOf("ev")} AS envelope
      FROM claimed c
      LEFT JOIN webhook_endpoints w ON w.id = c.endpoint_id
      LEFT JOIN events ev ON ev.id = c.event_id
      JOIN tenants t ON t.id = c.tenant_id
      LEFT JOIN LATERAL (
        SELECT kid, secret_enc FROM webhook_secrets
         WHERE endpoint_id = w.id AND valid_until IS NULL
         ORDER BY created_at DESC LIMIT 1
      ) s ON true
      LEFT JOIN LATERAL (
        SELECT json_agg(json_build_object('kid', kid, 'secretEnc', secret_enc, 'validUntil', valid_until) ORDER BY valid_until DESC) AS previous
          FROM webhook_secrets
         WHERE endpoint_id = w.id AND valid_until > $6::timestamptz
      ) p ON true`;

function unzip(m: ReadonlyMap<string, number> | undefined): [string[], number[]] {
  const entries = [...(m ?? new Map<string, number>()).entries()].filter(([, n]) => n > 0);
  return [entries.map(([k]) => k), entries.map(([, n]) => n)];
}

/** Gives a claimed job back not attempted, due again at `until` (its attempts unchanged): a composer's deferral. */
export async function deferJob(sql: Sql, job: ClaimedJob, until: Date): Promise<void> {
  await sql.query(
    `UPDATE webhook_deliveries SET locked_until = NULL, claim_token = NULL, locked_by = NULL, next_attempt_at = $3::timestamptz
      WHERE id = $1::uuid AND claim_token = $2::uuid`,
    [job.id, job.claimToken, until],
    "eng_webhook_defer",
  );
}

/**
 * The INSERT of jobs of `kind` from the rows of `from` (a common table expression, or a subquery, of
 * the caller's statement), each a SQL expression over them: its id (default a new one), tenant,
 * message (default `{}`), and when it is made and due (`at`); `where` filters the rows. The one text
 * that writes job rows outside the database functions, for a room whose statement queues a job beside
 * a row of its own (an email with its message, a sign-in link with its token, a received webmention),
 * so that both are written or neither.
 */
export function jobInsert(
  kind: Exclude<JobKind, "webhook">,
  from: string,
  row: { id?: string; tenantId: string; message?: string; at: string; where?: string },
): string {
  return `INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
    SELECT ${row.id ?? "gen_random_uuid()"}, ${row.tenantId}, '${kind}', ${row.message ?? "'{}'::jsonb"}, ${row.at}, ${row.at}, ${row.at}
      FROM ${from}${row.where ? ` WHERE ${row.where}` : ""}`;
}

/**
 * Takes a claimed job's unique key (`key`, a member of its message under a partial unique index: an
 * email compose job's `composeKey`) off it, in the caller's transaction: from its commit a job of the
 * same key may be queued again, and while it runs a statement queuing that key waits for it (the
 * locking: eng_queue_email). False when the job no longer holds the key (taken before: a claim whose
 * end was lost) or is no longer held by this claim; the job's message otherwise.
 */
export async function takeJobKey(
  db: Pick<PrismaClient, "$queryRaw">,
  job: { id: string; tenantId: string; claimToken: string },
  key: string,
): Promise<Record<string, unknown> | false> {
  const [row] = await db.$queryRaw<{ message: Record<string, unknown> }[]>`
    UPDATE webhook_deliveries SET message = message - ${key}::text
     WHERE id = ${job.id}::uuid AND tenant_id = ${job.tenantId} AND claim_token = ${job.claimToken}::uuid AND message ? ${key}::text
    RETURNING message`;
  return row ? row.message : false;
}

/**
 * Queues jobs of another kind than webhook, one per message, due at `now`: what a feature sends
 * outside a write's event (an inbox's answer to a Follow; an inbound activity the inbox stored, with
 * the ids it chose). A job whose unique key is already queued (a partial unique index of the kind's:
 * an inbound activity's `inboundKey`) is not queued again. Answers the ids queued. A write's own
 * effects are enqueued by its statement (eng_event_jobs).
 */
export async function enqueueMessages(
  sql: Sql,
  kind: Exclude<JobKind, "webhook">,
  jobs: readonly { id?: string; tenantId: string; message: unknown }[],
  now: Date,
): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const rows = await sql.query<{ id: string }>(
    `${jobInsert(kind, "unnest($1::uuid[], $2::text[], $3::jsonb[]) AS j(id, tenant_id, message)", {
      id: "coalesce(j.id, gen_random_uuid())",
      tenantId: "j.tenant_id",
      message: "j.message",
      at: "$4::timestamptz",
    })}
     ON CONFLICT DO NOTHING RETURNING id::text AS id`,
    [jobs.map((j) => j.id ?? null), jobs.map((j) => j.tenantId), jobs.map((j) => JSON.stringify(j.message)), now],
    // named per kind: the kind is in its text
    `eng_outbound_enqueue_${kind}`,
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Ends a claimed job `succeeded` and inserts, in the same statement, the jobs it becomes (a composer's
 * `split`): `messages` as jobs of `kind` of the job's tenant, due at `now`. Answers how many were
 * inserted, or null when the claim no longer held the job (nothing written).
 */
export async function splitJob(
  sql: Sql,
  job: ClaimedJob,
  split: { kind: Exclude<JobKind, "webhook">; messages: unknown[] },
  now: Date,
): Promise<number | null> {
  const [r] = await sql.query<{ kept: number; made: number }>(
    `WITH parent AS (
       UPDATE webhook_deliveries
          SET status = 'succeeded', attempts = attempts + 1, next_attempt_at = $3::timestamptz, last_error = NULL,
              locked_until = NULL, claim_token = NULL, locked_by = NULL, updated_at = $3::timestamptz
        WHERE id = $1::uuid AND claim_token = $2::uuid AND status = 'pending'
       RETURNING tenant_id
     ), made AS (
       INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
       SELECT gen_random_uuid(), parent.tenant_id, $4::"DeliveryKind", m.value, $3::timestamptz, $3::timestamptz, $3::timestamptz
         FROM parent, jsonb_array_elements($5::jsonb) m
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM parent)::int AS kept, (SELECT count(*) FROM made)::int AS made`,
    [job.id, job.claimToken, now, split.kind, JSON.stringify(split.messages)],
    "eng_outbound_split",
  );
  return r && r.kept > 0 ? r.made : null;
}

/** Gives a claimed job back untouched (not attempted): another claim may take it at once. */
export async function releaseJob(sql: Sql, job: ClaimedJob): Promise<void> {
  await sql.query(
    `UPDATE webhook_deliveries SET locked_until = NULL, claim_token = NULL, locked_by = NULL
      WHERE id = $1::uuid AND claim_token = $2::uuid`,
    [job.id, job.claimToken],
    "eng_webhook_release",
  );
}

export interface AttemptRecord {
  deliveryId: string;
  eventType: string;
  idempotencyKey: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  at: Date;
}

export interface JobOutcome {
  status: "pending" | "succeeded" | "failed";
  nextAttemptAt: Date;
  lastError: string | null;
}

/**
 * Queues events for one endpoint again (redelivery): a new job, or the existing one reset to
 * pending with a fresh attempt budget. The idempotency key derives from the event, so it is the
 * same as before. Returns how many jobs were queued.
 */
/** The events a redelivery takes (oldest first, at most `max`): the one selection queueing and counting share. */
function redeliverable(opts: { tenantId: string; eventIds?: string[]; since?: Date; types: string[] | "*"; max: number }): Prisma.Sql {
  const byIds = opts.eventIds?.length ? Prisma.sql`AND ev.id IN (${Prisma.join(opts.eventIds)})` : Prisma.empty;
  const bySince = opts.since ? Prisma.sql`AND ev.occurred_at >= ${opts.since}::timestamptz` : Prisma.empty;
  const byType = opts.types === "*" ? Prisma.empty : Prisma.sql`AND ev.type IN (${Prisma.join(opts.types)})`;
  return Prisma.sql`SELECT id FROM events ev
             WHERE ev.tenant_id = ${opts.tenantId} AND ev.audience <> 'reader' AND ev.type <> 'notification_reply'
                   ${byIds} ${bySince} ${byType}
             ORDER BY ev.occurred_at, ev.id
             LIMIT ${opts.max}`;
}

/** How many events a redelivery with these options would queue (the console shows it first). */
/** Raw statements of a client: the app's, a transaction's, or a tenant's store (whose raw statements the tenant guard checks). */
type RawClient = Pick<PrismaClient, "$queryRaw" | "$executeRaw">;

export async function countRedeliverable(
  db: RawClient,
  opts: { tenantId: string; eventIds?: string[]; since?: Date; types: string[] | "*"; max: number },
): Promise<number> {
  const [row] = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM (${redeliverable(opts)}) ev`;
  return row?.n ?? 0;
}

export async function requeueEvents(
  db: RawClient,
  opts: { tenantId: string; endpointId: string; now: Date; eventIds?: string[]; since?: Date; types: string[] | "*"; max: number },
): Promise<number> {
  const { tenantId, endpointId, now } = opts;
  return db.$executeRaw`
    INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, next_attempt_at, created_at, updated_at)
    SELECT gen_random_uuid(), ${tenantId}, ${endpointId}, ev.id, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
      FROM (${redeliverable(opts)}) ev
    ON CONFLICT (endpoint_id, event_id) DO UPDATE
       SET status = 'pending', attempts = 0, next_attempt_at = EXCLUDED.next_attempt_at, last_error = NULL,
           locked_until = NULL, claim_token = NULL, locked_by = NULL, updated_at = EXCLUDED.updated_at
     WHERE webhook_deliveries.tenant_id = EXCLUDED.tenant_id`;
}
