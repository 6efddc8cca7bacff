// An `activitypub_announce` job (../announce.ts: POST /api/v1/federation/announce) worked by the
// outbound worker: every discussion of its site with a url and no announcement yet (no row in
// federation_discussions) is announced through eng_federate_discussion (its Create(Article) one
// `activitypub_fanout` job, made into deliveries by outbound.ts, as for POST
// /discussions/{id}/federate), ANNOUNCE_BATCH at a time, oldest first. Each batch is one statement:
// it takes the job's row under this claim (a claim lost to another worker does nothing), announces
// the batch and adds its count to the job's message. A job redone after a crash resumes, as what it
// announced has its row. It ends done; while the site does not federate (turned off meanwhile) it
// stops, its count saying what it did.
import type { TenantStore } from "../../../db/tenant-store.js";
import type { MessageComposer } from "../../../outbound/composers.js";

/** Discussions announced per statement. */
export const ANNOUNCE_BATCH = 200;

const BATCH = `WITH job AS (
    SELECT j.id FROM webhook_deliveries j
     WHERE j.tenant_id = $1 AND j.id = $2::uuid AND j.claim_token = $3::uuid AND j.kind = 'activitypub_announce'
       FOR UPDATE
  ), picked AS (
    SELECT d.id, d.created_at FROM discussions d
     WHERE d.tenant_id = $1 AND d.url IS NOT NULL AND EXISTS (SELECT 1 FROM job)
       AND ($5::timestamptz IS NULL OR (d.created_at, d.id) > ($5::timestamptz, $6::text))
       AND NOT EXISTS (SELECT 1 FROM federation_discussions f WHERE f.tenant_id = $1 AND f.discussion_id = d.id)
     ORDER BY d.created_at, d.id
     LIMIT $4
  ), done AS (
    SELECT count(*) FILTER (WHERE eng_federate_discussion($1, p.id, true, $7::timestamptz) = 1)::int AS announced,
           count(*)::int AS seen
      FROM picked p
  ), last AS (
    SELECT p.created_at, p.id FROM picked p ORDER BY p.created_at DESC, p.id DESC LIMIT 1
  )
  UPDATE webhook_deliveries j
     SET message = jsonb_set(j.message, '{announced}', to_jsonb(COALESCE((j.message ->> 'announced')::int, 0) + done.announced)),
         updated_at = $7::timestamptz
    FROM done
   WHERE j.tenant_id = $1 AND j.id = $2::uuid AND j.claim_token = $3::uuid
  RETURNING done.announced, done.seen, (SELECT created_at FROM last) AS "lastAt", (SELECT id FROM last) AS "lastId"`;

interface BatchRow {
  announced: number;
  seen: number;
  lastAt: Date | null;
  lastId: string | null;
}

export function createAnnounceComposer(deps: { stores: (tenantId: string) => TenantStore }): MessageComposer {
  return {
    async compose(job, now) {
      const sql = deps.stores(job.tenantId).sql;
      let after = null as { at: Date; id: string } | null;
      let announced = 0;
      for (;;) {
        const [r]: BatchRow[] = await sql.query<BatchRow>(
          BATCH,
          [job.id, job.claimToken, ANNOUNCE_BATCH, after?.at ?? null, after?.id ?? null, now],
          "federation_announce_batch",
        );
        // the claim no longer holds the job: its outcome is not ours to write
        if (!r) return { done: "its lease passed to another claim" };
        announced += r.announced;
        if (r.seen < ANNOUNCE_BATCH || r.lastAt === null || r.lastId === null) return { done: `${announced} discussions announced` };
        // a batch of which nothing was announced: the site no longer federates
        if (r.announced === 0) return { done: `${announced} discussions announced; the site stopped federating` };
        after = { at: r.lastAt, id: r.lastId };
      }
    },
  };
}
