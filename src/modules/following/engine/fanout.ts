// The follow worker (contract section 19): a new visible comment in a discussion that someone else
// follows with `all` leaves ONE follow_jobs row, written by the comment's own statement
// (eng_follow_enqueue: an EXISTS on the partial index of followers), so the writer's cost does not
// grow with the number of followers. After commit, this worker claims due jobs under a lease, as the
// email sender claims messages (UPDATE … FROM (SELECT … FOR UPDATE SKIP LOCKED) with a claim token:
// several instances never work one job at once), and works each job a batch of followers at a time
// (eng_follow_fanout: one transaction each, set-based; every follower gets a new_comment item with
// their own inbox seq, and an email item if they want one; the job records the last reader done and
// renews its lease). A worker killed mid-job leaves the job locked until its lease ends; another then
// resumes after the last batch committed, and a batch redone adds nothing twice (a follower who has
// an item of the comment, a reply item included, gets none). A failed batch is retried with backoff.
// After each batch the readers who got an item are announced to their live streams (announceInboxItems, src/modules/inbox/announce.ts).
// Under engine/: it crosses tenants, no tenant's request, claiming whatever jobs are due, of every
// tenant, on the app's raw SQL (each job carries its tenant).
import { announceInboxItems } from "../../inbox/announce.js";
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { AppServices } from "../../../context/services.js";
import { retryDelayMs } from "../../../outbound/backoff.js";
import { pollLoop } from "../../../lib/poll-loop.js";

export interface FollowWorkerOptions {
  pollMs: number;
  /** how long a claim holds a job; each batch renews it */
  leaseMs: number;
  /** followers per batch (one transaction) */
  batchSize: number;
  /** jobs claimed at once */
  claimSize: number;
  workerId: string;
  /** a hook between batches (tests: a crash mid-job) */
  afterBatch?: (job: ClaimedFollowJob, readers: string[]) => Promise<void> | void;
}

export interface ClaimedFollowJob {
  id: string;
  tenantId: string;
  claimToken: string;
  attempts: number;
}

export interface FollowPassResult {
  /** jobs finished */
  jobs: number;
  /** items written */
  items: number;
  /** jobs given back for a retry */
  retried: number;
}

export interface FollowWorker {
  /** Claims what is due and works it to the end; resolves when every claimed job is done or given back. */
  runOnce(): Promise<FollowPassResult>;
  start(): void;
  stop(): Promise<void>;
}

const BACKOFF_BASE_MS = 5_000;

export function createFollowWorker(app: AppServices, opts: Partial<FollowWorkerOptions> = {}): FollowWorker {
  const o: FollowWorkerOptions = {
    pollMs: app.config.FOLLOW_POLL_MS,
    leaseMs: 60_000,
    batchSize: 1_000,
    claimSize: 10,
    workerId: `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`,
    ...opts,
  };
  async function claim(): Promise<ClaimedFollowJob[]> {
    const now = app.clock.now();
    return app.sql.query<ClaimedFollowJob>(
      `UPDATE follow_jobs j
          SET locked_until = $1, locked_by = $2, claim_token = gen_random_uuid(), attempts = j.attempts + 1
        WHERE j.id IN (SELECT id FROM follow_jobs
                        WHERE next_attempt_at <= $3 AND (locked_until IS NULL OR locked_until <= $3)
                        ORDER BY next_attempt_at LIMIT ${o.claimSize}
                        FOR UPDATE SKIP LOCKED)
       RETURNING j.id::text AS id, j.tenant_id AS "tenantId", j.claim_token::text AS "claimToken", j.attempts`,
      [new Date(now.getTime() + o.leaseMs), o.workerId, now],
      "follow_claim",
    );
  }

  /** Works a claimed job batch by batch; the items written, or null when its lease was lost. */
  async function work(job: ClaimedFollowJob): Promise<number | null> {
    let items = 0;
    for (;;) {
      const now = app.clock.now();
      const rows = await app
        .stores(job.tenantId)
        .sql.query<{ r: { readers: string[]; done: boolean } | null }>(
          `SELECT eng_follow_fanout($1, $2::uuid, $3::uuid, $4, $5, $6) AS r`,
          [job.id, job.claimToken, o.batchSize, new Date(now.getTime() + o.leaseMs), now],
          "follow_fanout",
        );
      const r = rows[0]?.r ?? null;
      if (!r) return null;
      items += r.readers.length;
      if (r.readers.length) announceInboxItems(app, job.tenantId, r.readers);
      await o.afterBatch?.(job, r.readers);
      if (r.done) return items;
    }
  }

  async function giveBack(job: ClaimedFollowJob, err: unknown): Promise<void> {
    const next = new Date(app.clock.now().getTime() + retryDelayMs(job.attempts, BACKOFF_BASE_MS));
    await app.sql.query(
      `UPDATE follow_jobs SET next_attempt_at = $3, locked_until = NULL, last_error = $4
        WHERE id = $1::uuid AND claim_token = $2::uuid`,
      [job.id, job.claimToken, next, err instanceof Error ? err.message : String(err)],
      "follow_give_back",
    );
  }

  async function runOnce(): Promise<FollowPassResult> {
    const result: FollowPassResult = { jobs: 0, items: 0, retried: 0 };
    for (;;) {
      const jobs = await claim();
      if (jobs.length === 0) return result;
      for (const job of jobs) {
        try {
          const items = await work(job);
          if (items !== null) {
            result.jobs++;
            result.items += items;
          }
        } catch (err) {
          app.log.warn({ err: err instanceof Error ? err.message : String(err), job: job.id }, "follow job failed");
          await giveBack(job, err).catch(() => undefined);
          result.retried++;
        }
      }
      if (jobs.length < o.claimSize) return result;
    }
  }

  const loop = pollLoop(runOnce, o.pollMs, (err) =>
    app.log.warn({ err: err instanceof Error ? err.message : String(err) }, "follow worker pass failed"),
  );

  return { runOnce, start: loop.start, stop: loop.stop };
}
