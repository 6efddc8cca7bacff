/**
 * Records attempt outcomes in batches: every attempt's log row (webhook_attempts) and its job's new
 * state (webhook_deliveries) are written by ONE statement per batch instead of one per attempt.
 * While a batch is being written, new outcomes queue up and go in the next one, so under load the
 * batches grow by themselves and when idle an outcome is written at once (no timer, no delay).
 *
 * A job's update applies only while the claim that made the attempt still holds it (claim_token),
 * so a worker whose lease ran out cannot overwrite a newer claim's outcome; its log row is kept
 * either way (the attempt did happen). Only webhook jobs have a log (an endpoint's deliveries); an
 * alert's row keeps its own attempts and last error.
 */
import type { Sql } from "../db/sql.js";
import type { AttemptRecord, ClaimedJob, JobOutcome } from "./jobs.js";

interface Pending {
  job: ClaimedJob;
  a: AttemptRecord;
  outcome: JobOutcome;
  resolve: (kept: boolean) => void;
  reject: (err: unknown) => void;
}

/** Rows per statement. */
const MAX_BATCH = 500;

export interface CompletionWriter {
  /** Resolves once written: true when the job's state was updated (the claim still held it). */
  complete(job: ClaimedJob, a: AttemptRecord, outcome: JobOutcome): Promise<boolean>;
}

/** One row of the batch; the whole batch travels as ONE jsonb parameter (cheap to encode). */
function row(p: Pending) {
  const { job, a, outcome } = p;
  return {
    job_id: job.id,
    claim_token: job.claimToken,
    tenant_id: job.tenantId,
    kind: job.kind,
    endpoint_id: job.endpointId,
    event_id: job.eventId,
    event_type: a.eventType,
    idempotency_key: a.idempotencyKey,
    delivery_id: a.deliveryId,
    attempt: a.attempt,
    status_code: a.statusCode,
    duration_ms: a.durationMs,
    error: a.error,
    at: a.at.toISOString(),
    status: outcome.status,
    next_attempt_at: outcome.nextAttemptAt.toISOString(),
    last_error: outcome.lastError,
  };
}

async function write(sql: Sql, batch: Pending[]): Promise<Set<string>> {
  const kept = await sql.query<{ id: string }>(WRITE, [JSON.stringify(batch.map(row))], "eng_webhook_complete");
  return new Set(kept.map((k) => k.id));
}

const WRITE = `
    WITH v AS (
      SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
        job_id uuid, claim_token uuid, tenant_id text, kind text, endpoint_id text, event_id text, event_type text,
        idempotency_key text, delivery_id uuid, attempt int, status_code int, duration_ms int, error text,
        at timestamptz, status "DeliveryStatus", next_attempt_at timestamptz, last_error text)
    ), logged AS (
      INSERT INTO webhook_attempts (id, tenant_id, endpoint_id, job_id, event_id, event_type, idempotency_key,
                                    delivery_id, attempt, status_code, duration_ms, error, created_at)
      SELECT gen_random_uuid(), tenant_id, endpoint_id, job_id, event_id, event_type, idempotency_key,
             delivery_id, attempt, status_code, duration_ms, error, at
        FROM v
       WHERE v.kind = 'webhook'
         AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = v.endpoint_id) -- deleted meanwhile: no log
    )
    UPDATE webhook_deliveries d
       SET status = v.status, attempts = v.attempt, next_attempt_at = v.next_attempt_at, last_error = v.last_error,
           locked_until = NULL, claim_token = NULL, locked_by = NULL, updated_at = v.at
      FROM v
     WHERE d.id = v.job_id AND d.claim_token = v.claim_token
    RETURNING d.id::text AS id`;

export function createCompletionWriter(sql: Sql): CompletionWriter {
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
          const kept = await write(sql, batch);
          for (const p of batch) p.resolve(kept.has(p.job.id));
        } catch (err) {
          if (batch.length === 1) {
            batch[0]!.reject(err);
            continue;
          }
          // one bad row must not fail the others: write them one by one
          await Promise.all(
            batch.map((p) =>
              write(sql, [p]).then(
                (kept) => p.resolve(kept.has(p.job.id)),
                (e: unknown) => p.reject(e),
              ),
            ),
          );
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
