// Telling a discussion's followers of a new comment (contract section 19): a new visible comment in a
// discussion that someone else follows with `all` leaves ONE job of the outbound queue (kind `follow`,
// src/outbound/), written by the comment's own statement (eng_follow_enqueue: an EXISTS on the partial
// index of followers), so the writer's cost does not grow with the number of followers. After commit
// the follow pool of the outbound worker (RUN_FOLLOW_WORKER, webhook-runtime.ts) claims it under a
// lease, as it claims any job, and the composer below works it a batch of followers at a time
// (eng_follow_fanout: one transaction each, set-based; every follower gets a new_comment item with
// their own inbox seq, and an email item if they want one; the job's message records the last reader
// done). A worker killed mid-job leaves the job leased until its lease ends; another then resumes
// after the last batch committed, and a batch redone adds nothing twice (a follower who has an item of
// the comment, a reply item included, gets none). A failed batch is a failed attempt, retried with the
// tenant's `delivery` backoff. After each batch the readers who got an item are announced to their
// live streams (announceInboxItems, src/modules/inbox/announce.ts).
import { announceInboxItems } from "../../inbox/announce.js";
import type { AppServices } from "../../../context/services.js";
import type { TenantStore } from "../../../db/tenant-store.js";
import type { MessageComposer } from "../../../outbound/composers.js";

export interface FollowComposerOptions {
  /** followers per batch (one transaction) */
  batchSize: number;
  /** how long each batch extends the job's lease (the worker renews it too) */
  leaseMs: number;
  /** a hook between batches (tests: a worker that dies mid-job) */
  afterBatch?: (job: { id: string; tenantId: string }, readers: string[]) => Promise<void> | void;
}

// the lease a batch extends to is the outbound worker's own (DEFAULT_WORKER_OPTIONS.leaseMs), which it renews meanwhile
export const FOLLOW_DEFAULTS: FollowComposerOptions = { batchSize: 1_000, leaseMs: 10_000 };

/** The composer of `follow` jobs: every batch of the job's followers, then done (or its lease lost: dropped from this worker). */
export function createFollowComposer(
  deps: { stores: (tenantId: string) => TenantStore; events: () => Pick<AppServices, "events"> },
  options: Partial<FollowComposerOptions> = {},
): MessageComposer {
  const o = { ...FOLLOW_DEFAULTS, ...options };
  return {
    async compose(job, now) {
      let items = 0;
      for (;;) {
        const rows = await deps
          .stores(job.tenantId)
          .sql.query<{ r: { readers: string[]; done: boolean } | null }>(
            `SELECT eng_follow_fanout($1, $2::uuid, $3::uuid, $4, $5, $6) AS r`,
            [job.id, job.claimToken, o.batchSize, new Date(now.getTime() + o.leaseMs), now],
            "follow_fanout",
          );
        const r = rows[0]?.r ?? null;
        // the claim no longer holds the job: its outcome is not ours to write (the worker finds the claim gone)
        if (!r) return { done: "its lease passed to another claim" };
        items += r.readers.length;
        if (r.readers.length) announceInboxItems(deps.events(), job.tenantId, r.readers);
        await o.afterBatch?.(job, r.readers);
        if (r.done) return { done: `${items} followers told` };
      }
    },
  };
}
