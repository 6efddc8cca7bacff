// Tenant analytics per day or hour, computed from the event log (events) and the webhook attempt log
// (webhook_attempts), and follows from discussion_subscriptions (not events: following is a reader's
// own setting), with date_trunc + GROUP BY GROUPING SETS: one row per bucket plus the totals row.
//
// GET /api/v1/analytics?from=&to=&discussionId=&interval=day|hour → 200
// {
//   "from": "2026-11-01T00:00:00.000Z",  // start of the first bucket: `from` truncated to the interval (UTC)
//   "to": "2026-11-21T10:30:00.000Z",    // end of the range, exclusive (default: now)
//   "interval": "day",                   // default day; default range: the last 30 days (day), 24 hours (hour)
//   "discussionId": null,                // or the discussion the numbers are limited to
//   "followers": 7,                      // readers following now (subscription mode all), of the discussion or all
//   "totals": Metrics,                   // over the whole range (activeReaders: distinct over the range)
//   "buckets": [{ "start": "2026-11-01T00:00:00.000Z", ...Metrics }]  // every interval, oldest first, zeros included
// }
// Metrics = {
//   "comments": 12,               // comments published (comment_created to all readers: when posted, or
//                                 //   at first approval under pre-moderation), replies included
//   "replies": 5,                 // of which replies (parentId set)
//   "reactions": {"like": 3},     // reactions added on comments (reaction_toggled with active: true), by kind
//   "pageReactions": {"up": 2},   // page reactions added (on discussions themselves: commentId null), by kind
//   "activeReaders": 4,           // distinct readers who commented, edited a comment or reacted
//   "moderationActions": 2,       // approve, reject, pin, unpin, lock, unlock, archive
//   "webhookDeliveries": {"ok": 9, "failed": 1}, // delivery attempts: 2xx vs non-2xx, timeout or error
//   "newFollowers": 2             // follows (mode all) chosen in the interval and still in force
// }
import { z } from "zod";
import { db, tenantIdOf, type RequestContext } from "../../context/request.js";
import { Prisma } from "../../generated/prisma/client.js";
import { errors, fieldErrorsFromZod, type FieldError } from "../../lib/errors.js";
import { ENVELOPE_JSON } from "../../events/stored-envelope.js";
import { DISCUSSION_ID_RE } from "../../lib/ids.js";
import { isoTimestamp } from "../../lib/timestamps.js";

export type AnalyticsInterval = "day" | "hour";

export interface AnalyticsMetrics {
  comments: number;
  replies: number;
  reactions: Record<string, number>;
  pageReactions: Record<string, number>;
  activeReaders: number;
  moderationActions: number;
  webhookDeliveries: { ok: number; failed: number };
  newFollowers: number;
}

export interface AnalyticsReport {
  from: Date;
  to: Date;
  interval: AnalyticsInterval;
  discussionId: string | null;
  followers: number;
  totals: AnalyticsMetrics;
  buckets: (AnalyticsMetrics & { start: Date })[];
}

const STEP_MS: Record<AnalyticsInterval, number> = { day: 86_400_000, hour: 3_600_000 };
const DEFAULT_SPAN_MS: Record<AnalyticsInterval, number> = { day: 30 * 86_400_000, hour: 86_400_000 };
const MAX_BUCKETS: Record<AnalyticsInterval, number> = { day: 366, hour: 744 };

/**
 * A shadow-banned reader's post or edit (contract section 21): the only events told to their author
 * alone that show a comment published (eng_post_comment, eng_edit_comment). Analytics count nothing of them.
 */
const SHADOW_BANNED_POST = Prisma.sql`(type IN ('comment_created', 'comment_edited') AND audience = 'reader' AND payload #>> '{data,comment,status}' = 'approved')`;

const MODERATION_TYPES = [
  "comment_approved",
  "comment_rejected",
  "comment_pinned",
  "comment_unpinned",
  "discussion_locked",
  "discussion_unlocked",
  "discussion_archived",
];

const Params = z.object({
  from: isoTimestamp("must be an ISO 8601 timestamp").nullish(),
  to: isoTimestamp("must be an ISO 8601 timestamp").nullish(),
  interval: z.enum(["day", "hour"], { message: "must be day or hour" }).nullish(),
  discussionId: z.string().regex(DISCUSSION_ID_RE, "must be 1–128 characters of A-Z a-z 0-9 . _ : -").nullish(),
});

export type AnalyticsParams = z.input<typeof Params>;

const truncate = (d: Date, interval: AnalyticsInterval) => new Date(Math.floor(d.getTime() / STEP_MS[interval]) * STEP_MS[interval]);

function parseParams(ctx: RequestContext, args: AnalyticsParams) {
  const parsed = Params.safeParse(args);
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  const interval = parsed.data.interval ?? "day";
  const to = parsed.data.to ? new Date(parsed.data.to) : ctx.app.clock.now();
  const from = truncate(parsed.data.from ? new Date(parsed.data.from) : new Date(to.getTime() - DEFAULT_SPAN_MS[interval]), interval);
  const problems: FieldError[] = [];
  if (from.getTime() >= to.getTime()) problems.push({ path: "from", message: "must be before 'to'" });
  else if ((to.getTime() - from.getTime()) / STEP_MS[interval] > MAX_BUCKETS[interval]) {
    problems.push({ path: "from", message: `the range may span at most ${MAX_BUCKETS[interval]} ${interval}s` });
  }
  if (problems.length) throw errors.validation(problems);
  return { interval, from, to, discussionId: parsed.data.discussionId ?? null };
}

const emptyMetrics = (): AnalyticsMetrics => ({
  comments: 0,
  replies: 0,
  reactions: {},
  pageReactions: {},
  activeReaders: 0,
  moderationActions: 0,
  webhookDeliveries: { ok: 0, failed: 0 },
  newFollowers: 0,
});

/** bucket_ms is null on the totals row of GROUPING SETS. */
type Row<T> = T & { bucket_ms: bigint | number | null };

export async function getAnalytics(ctx: RequestContext, args: AnalyticsParams): Promise<AnalyticsReport> {
  const { interval, from, to, discussionId } = parseParams(ctx, args);
  const tenantId = tenantIdOf(ctx);
  const client = db(ctx);
  const bucketOf = (column: string) =>
    Prisma.sql`(extract(epoch FROM date_trunc(${interval}, ${Prisma.raw(column)} AT TIME ZONE 'UTC')) * 1000)::bigint`;
  const inDiscussion = discussionId ? Prisma.sql`AND discussion_id = ${discussionId}` : Prisma.empty;

  const [activity, reactions, deliveries, follows, following] = await Promise.all([
    client.$queryRaw<Row<{ comments: number; replies: number; moderation: number; readers: number }>[]>`
      WITH e AS (
        SELECT ${bucketOf("occurred_at")} AS bucket_ms, type, audience, ${Prisma.raw(ENVELOPE_JSON)} AS payload
        FROM events
        WHERE tenant_id = ${tenantId} AND occurred_at >= ${from} AND occurred_at < ${to} ${inDiscussion}
      )
      SELECT bucket_ms,
        count(*) FILTER (WHERE type = 'comment_created' AND audience = 'all')::int AS comments,
        count(*) FILTER (WHERE type = 'comment_created' AND audience = 'all'
          AND payload #>> '{data,comment,parentId}' IS NOT NULL)::int AS replies,
        count(*) FILTER (WHERE type IN (${Prisma.join(MODERATION_TYPES)}))::int AS moderation,
        count(DISTINCT COALESCE(payload #>> '{data,comment,author,id}', payload #>> '{data,reaction,readerId}'))
          FILTER (WHERE type IN ('comment_created', 'comment_edited', 'reaction_toggled') AND NOT ${SHADOW_BANNED_POST})::int AS readers
      FROM e
      GROUP BY GROUPING SETS ((bucket_ms), ())`,
    client.$queryRaw<Row<{ page: boolean; kind: string; n: number }>[]>`
      WITH e AS (
        SELECT ${bucketOf("occurred_at")} AS bucket_ms, payload #>> '{data,reaction,kind}' AS kind,
               (payload #>> '{data,reaction,commentId}') IS NULL AS page
        FROM (SELECT occurred_at, ${Prisma.raw(ENVELOPE_JSON)} AS payload FROM events
               WHERE tenant_id = ${tenantId} AND occurred_at >= ${from} AND occurred_at < ${to} ${inDiscussion}
                 AND type = 'reaction_toggled') toggled
        WHERE payload #>> '{data,reaction,active}' = 'true'
      )
      SELECT bucket_ms, page, kind, count(*)::int AS n
      FROM e
      GROUP BY GROUPING SETS ((bucket_ms, page, kind), (page, kind))`,
    client.$queryRaw<Row<{ ok: number; total: number }>[]>`
      WITH a AS (
        SELECT ${bucketOf("a.created_at")} AS bucket_ms, a.status_code, a.error
        FROM webhook_attempts a
        WHERE a.tenant_id = ${tenantId} AND a.created_at >= ${from} AND a.created_at < ${to}
          AND a.event_type <> 'verification'
          ${
            discussionId
              ? Prisma.sql`AND EXISTS (SELECT 1 FROM events ev WHERE ev.tenant_id = a.tenant_id
                  AND ev.id::text = a.event_id AND ev.discussion_id = ${discussionId})`
              : Prisma.empty
          }
      )
      SELECT bucket_ms,
        count(*) FILTER (WHERE status_code BETWEEN 200 AND 299 AND error IS NULL)::int AS ok,
        count(*)::int AS total
      FROM a
      GROUP BY GROUPING SETS ((bucket_ms), ())`,
    client.$queryRaw<Row<{ n: number }>[]>`
      WITH f AS (
        SELECT ${bucketOf("updated_at")} AS bucket_ms
        FROM discussion_subscriptions
        WHERE tenant_id = ${tenantId} AND mode = 'all' AND updated_at >= ${from} AND updated_at < ${to} ${inDiscussion}
      )
      SELECT bucket_ms, count(*)::int AS n FROM f GROUP BY GROUPING SETS ((bucket_ms), ())`,
    client.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM discussion_subscriptions WHERE tenant_id = ${tenantId} AND mode = 'all' ${inDiscussion}`,
  ]);

  const totals = emptyMetrics();
  const buckets = new Map<number, AnalyticsMetrics & { start: Date }>();
  for (let t = from.getTime(); t < to.getTime(); t += STEP_MS[interval]) {
    buckets.set(t, { start: new Date(t), ...emptyMetrics() });
  }
  const target = (ms: bigint | number | null): AnalyticsMetrics | undefined => (ms === null ? totals : buckets.get(Number(ms)));

  for (const r of activity) {
    const m = target(r.bucket_ms);
    if (!m) continue;
    m.comments = r.comments;
    m.replies = r.replies;
    m.moderationActions = r.moderation;
    m.activeReaders = r.readers;
  }
  for (const r of reactions) {
    const m = target(r.bucket_ms);
    if (m && r.kind) (r.page ? m.pageReactions : m.reactions)[r.kind] = r.n;
  }
  for (const r of deliveries) {
    const m = target(r.bucket_ms);
    if (m) m.webhookDeliveries = { ok: r.ok, failed: r.total - r.ok };
  }
  for (const r of follows) {
    const m = target(r.bucket_ms);
    if (m) m.newFollowers = r.n;
  }
  return { from, to, interval, discussionId, followers: following[0]?.n ?? 0, totals, buckets: [...buckets.values()] };
}
