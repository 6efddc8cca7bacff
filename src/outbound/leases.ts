/**
 * Lease renewal for the jobs a worker holds. A claim's lease is short (10 s by
 * default), so the jobs of a worker that dies (kill -9, a lost machine) come back to the queue
 * within that time; a live worker keeps its leases by renewing every job it still holds — claimed
 * and not yet recorded — every third of a lease, with ONE statement per renewal whatever the number
 * of jobs. An attempt may therefore run for its whole `attemptTimeoutMs` (up to 60 s) under a
 * 10 s lease. A renewal applies only while the job's claim token is still the one this worker
 * holds: it never takes a job back from a newer claim.
 */
import type { Sql } from "../db/sql.js";
import type { Clock } from "../lib/clock.js";

/** Extends the lease of each (job id, claim token) still held by that claim; returns the ids renewed. */
export async function renewLeases(sql: Sql, held: ReadonlyMap<string, string>, leaseUntil: Date): Promise<Set<string>> {
  if (!held.size) return new Set();
  const rows = await sql.query<{ id: string }>(
    `UPDATE webhook_deliveries d SET locked_until = $3::timestamptz
       FROM unnest($1::uuid[], $2::uuid[]) AS h(id, token)
      WHERE d.id = h.id AND d.claim_token = h.token AND d.status = 'pending'
      RETURNING d.id::text AS id`,
    [[...held.keys()], [...held.values()], leaseUntil],
    "eng_webhook_renew_leases",
  );
  return new Set(rows.map((r) => r.id));
}

export interface LeaseKeeper {
  /** A claimed job: renewed until `release`d. */
  hold(jobId: string, claimToken: string): void;
  release(jobId: string): void;
  /** Stops the timer (the held jobs' leases then run out on their own). */
  stop(): void;
}

/**
 * Renews every held job's lease each `everyMs` while at least one job is held (no timer when idle).
 * A failed renewal is logged and tried again at the next tick; if the leases run out meanwhile, the
 * jobs may be sent again by another worker (at least once; the outcome of the older claim is not
 * written over the newer one, completions.ts).
 */
export function createLeaseKeeper(deps: {
  sql: Sql;
  clock: Clock;
  leaseMs: number;
  everyMs: number;
  onError: (err: unknown) => void;
}): LeaseKeeper {
  const held = new Map<string, string>();
  let timer: NodeJS.Timeout | null = null;
  let renewing = false;

  async function tick(): Promise<void> {
    if (renewing || !held.size) return;
    renewing = true;
    try {
      await renewLeases(deps.sql, held, new Date(deps.clock.now().getTime() + deps.leaseMs));
    } catch (err) {
      deps.onError(err);
    } finally {
      renewing = false;
    }
  }

  return {
    hold(jobId, claimToken) {
      held.set(jobId, claimToken);
      if (!timer) {
        timer = setInterval(() => void tick(), deps.everyMs);
        timer.unref();
      }
    },
    release(jobId) {
      held.delete(jobId);
      if (!held.size && timer) {
        clearInterval(timer);
        timer = null;
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
