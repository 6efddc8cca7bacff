// POST /api/v1/federation/announce (manage_settings; GraphQL announceDiscussions): every discussion
// with a url not yet announced is announced to the site's followers (Create(Article)), in the
// background: one job of the outbound queue (kind `activitypub_announce`), worked by
// engine/announce-job.ts a batch at a time through eng_federate_discussion, as POST
// /discussions/{id}/federate does one. The job is the resource GET /api/v1/federation/announce/{id}
// answers (GraphQL federationAnnouncement): its state and counts, read from its row. One runs at a
// time for a site (a partial unique index of the queue: webhook_deliveries_announce_pending): asked
// again while one is pending, the answer is that one.
import { randomUUID } from "node:crypto";
import { loadTenant, store, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { jobInsert } from "../../outbound/jobs.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { recordAudit } from "../audit/audit.js";
import { federationServed } from "./paths.js";

/** What an announcement job keeps in its message: its counts. */
export interface AnnounceMessage {
  /** discussions it queued an announcement of */
  announced: number;
  /** discussions with a url already announced (or queued) when it was asked for */
  alreadyAnnounced: number;
}

export type AnnouncementState = "running" | "succeeded" | "failed";

export interface FederationAnnouncement extends AnnounceMessage {
  id: string;
  state: AnnouncementState;
  /** why it failed (its last attempt's error), else null */
  failure: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

interface JobRow {
  id: string;
  status: "pending" | "succeeded" | "failed";
  message: Partial<AnnounceMessage> | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const count = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0);

function announcementOf(r: JobRow): FederationAnnouncement {
  const state: AnnouncementState = r.status === "pending" ? "running" : r.status;
  return {
    id: r.id,
    state,
    announced: count(r.message?.announced),
    alreadyAnnounced: count(r.message?.alreadyAnnounced),
    failure: state === "failed" ? (r.lastError ?? "failed") : null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: state === "running" ? null : r.updatedAt,
  };
}

const JOB_COLUMNS = `id::text AS id, status::text AS status, message, last_error AS "lastError", created_at AS "createdAt", updated_at AS "updatedAt"`;

export async function announceDiscussions(ctx: RequestContext): Promise<FederationAnnouncement> {
  const tenant = await loadTenant(ctx);
  const federation = resolveSettings(tenant.settings).federation;
  if (!federation.enabled || !federation.handle) throw errors.federationDisabled();
  if (!federationServed(ctx.app.config)) throw errors.federationUnavailable();
  const now = ctx.app.clock.now();
  // one pending for a site (a partial unique index): asked again while one is, the answer is that one
  for (let tries = 0; tries < 3; tries++) {
    const [made] = await store(ctx).sql.query<JobRow>(ENQUEUE, [randomUUID(), now], "federation_announce_enqueue");
    if (made) {
      ctx.app.webhooks.worker.nudge();
      await recordAudit(ctx, "federation.announce", { type: "announcement", id: made.id });
      return announcementOf(made);
    }
    const [running] = await store(ctx).sql.query<JobRow>(
      `SELECT ${JOB_COLUMNS} FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'activitypub_announce' AND status = 'pending' LIMIT 1`,
      [],
      "federation_announce_running",
    );
    if (running) return announcementOf(running);
  }
  throw errors.unavailable();
}

/** The job, with the count of the site's discussions with a url already announced (or queued); none when one is pending. */
const ENQUEUE = `${jobInsert(
  "activitypub_announce",
  `(SELECT $2::uuid AS id, jsonb_build_object('announced', 0, 'alreadyAnnounced', (
      SELECT count(*) FROM discussions d JOIN federation_discussions f ON f.tenant_id = d.tenant_id AND f.discussion_id = d.id
       WHERE d.tenant_id = $1 AND d.url IS NOT NULL)) AS message) AS j`,
  { id: "j.id", tenantId: "$1", message: "j.message", at: "$3::timestamptz" },
)}
  ON CONFLICT (tenant_id) WHERE kind = 'activitypub_announce' AND status = 'pending' DO NOTHING
  RETURNING ${JOB_COLUMNS}`;

export async function getAnnouncement(ctx: RequestContext, id: string): Promise<FederationAnnouncement> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw errors.notFound("Announcement");
  const [row] = await store(ctx).sql.query<JobRow>(
    `SELECT ${JOB_COLUMNS} FROM webhook_deliveries WHERE tenant_id = $1 AND id = $2::uuid AND kind = 'activitypub_announce'`,
    [id],
    "federation_announcement",
  );
  if (!row) throw errors.notFound("Announcement");
  return announcementOf(row);
}
