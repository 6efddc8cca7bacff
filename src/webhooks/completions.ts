/**
 * Records attempt outcomes in batches: every attempt's log row (webhook_attempts) and its job's new
 * state (webhook_deliveries) are written by ONE statement per batch instead of one per attempt.
 * While a batch is being written, new outcomes queue up and go in the next one, so under load the
 * batches grow by themselves and when idle an outcome is written at once (no timer, no delay).
 *
 * A job's update applies only while the claim that made the attempt still holds it (claim_token),
 * so a worker whose lease ran out cannot overwrite a newer claim's outcome; its log row is kept
 * either way (the attempt did happen).
 */
import { Prisma, type PrismaClient } from "../generated/prisma/client.js";
import type { AttemptRecord, ClaimedJob, JobOutcome } from "./jobs.js";

interface Pending {
  job: ClaimedJob;
  a: AttemptRecord;
  outcome: JobOutcome;
  resolve: (kept: boolean) => void;
  reject: (err: unknown) => void;
}

/** Rows per statement (16 parameters each, well under PostgreSQL's 65,535). */
const MAX_BATCH = 500;

export interface CompletionWriter {
  /** Resolves once written: true when the job's state was updated (the claim still held it). */
  complete(job: ClaimedJob, a: AttemptRecord, outcome: JobOutcome): Promise<boolean>;
}

function row(p: Pending): Prisma.Sql {
  const { job, a, outcome } = p;
  return Prisma.sql`(${job.id}::uuid, ${job.claimToken}::uuid, ${job.tenantId}::text, ${job.endpointId}::text,
    ${job.eventId}::text, ${a.eventType}::text, ${a.idempotencyKey}::text, ${a.deliveryId}::uuid, ${a.attempt}::int,
    ${a.statusCode}::int, ${a.durationMs}::int, ${a.error}::text, ${a.at}::timestamptz,
    ${outcome.status}::"DeliveryStatus", ${outcome.nextAttemptAt}::timestamptz, ${outcome.lastError}::text)`;
}

async function write(prisma: PrismaClient, batch: Pending[]): Promise<Set<string>> {
  const kept = await prisma.$queryRaw<{ id: string }[]>`
    WITH v (job_id, claim_token, tenant_id, endpoint_id, event_id, event_type, idempotency_key, delivery_id, attempt,
            status_code, duration_ms, error, at, status, next_attempt_at, last_error) AS (
      VALUES ${Prisma.join(batch.map(row))}
    ), logged AS (
      INSERT INTO webhook_attempts (id, tenant_id, endpoint_id, job_id, event_id, event_type, idempotency_key,
                                    delivery_id, attempt, status_code, duration_ms, error, created_at)
      SELECT gen_random_uuid(), tenant_id, endpoint_id, job_id, event_id, event_type, idempotency_key,
             delivery_id, attempt, status_code, duration_ms, error, at
        FROM v
    )
    UPDATE webhook_deliveries d
       SET status = v.status, attempts = v.attempt, next_attempt_at = v.next_attempt_at, last_error = v.last_error,
           locked_until = NULL, claim_token = NULL, locked_by = NULL, updated_at = v.at
      FROM v
     WHERE d.id = v.job_id AND d.claim_token = v.claim_token
    RETURNING d.id::text AS id`;
  return new Set(kept.map((k) => k.id));
}

export function createCompletionWriter(prisma: PrismaClient): CompletionWriter {
  let queue: Pending[] = [];
  let writing = false;

  async function drain(): Promise<void> {
    if (writing) return;
    writing = true;
    try {
      while (queue.length) {
        const batch = queue.slice(0, MAX_BATCH);
        queue = queue.slice(batch.length);
        try {
          const kept = await write(prisma, batch);
          for (const p of batch) p.resolve(kept.has(p.job.id));
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      writing = false;
    }
  }

  return {
    complete(job, a, outcome) {
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ job, a, outcome, resolve, reject });
        void drain();
      });
    },
  };
}
