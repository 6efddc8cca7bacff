// Reported comments, as moderators see them (moderate_content, declared by the GraphQL fields): each
// comment with its reports of one status, how many, per reason, the latest notes. `open` lists the
// comments whose open reports reached the tenant's reportThreshold (the reported queue), `dismissed`
// those with dismissed reports; newest report first, keyset-paginated on (latest report, comment id).
// Dismissing closes a comment's open reports and leaves its status as it is (docs/safety.md).
import { requirePrincipal, loadTenant, type RequestContext, store } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { checkLimit, decodeTimeIdCursor, timeIdCursor, toPage, type Page, type PageArgs } from "../../lib/pagination.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "../comments/comment-row.js";
import { CONTEXT_COLUMNS, CONTEXT_JOINS, contextOf, type CommentInContext, type ContextSqlRow } from "../comments/moderation-context.js";
import { actorOf, recordAudit } from "../audit/audit.js";
import { REPORT_REASONS, REPORT_STATUSES, type ReportReason, type ReportStatus } from "./reports.js";

/** How many of the latest notes a reported comment shows. */
export const NOTES_SHOWN = 5;

export interface ReportNote {
  reason: ReportReason;
  note: string;
  createdAt: string;
}

export interface ReportedComment {
  comment: CommentInContext;
  status: ReportStatus;
  reportCount: number;
  /** per reason, the reasons given at least once */
  reasons: Partial<Record<ReportReason, number>>;
  /** the latest notes, newest first */
  notes: ReportNote[];
  lastReportedAt: Date | null;
  dismissedAt: Date | null;
}

interface SummarySqlRow extends CommentSqlRow, ContextSqlRow {
  report_count: number;
  reason_counts: Record<ReportReason, number>;
  notes: ReportNote[] | null;
  last_at: Date | null;
  dismissed_at: Date | null;
}

/**
 * $1 tenant, $2 status, then for a list $3 the least count, $4 limit + 1 (, $5 $6 the cursor's
 * latest report and comment id); for one comment $3 its id (a row even when it has no such report).
 */
function summaryText(kind: "list" | "list_after" | "one"): string {
  const one = kind === "one";
  const groups = `SELECT comment_id, count(*)::int AS report_count, max(created_at) AS last_at, max(dismissed_at) AS dismissed_at,
      json_build_object(${REPORT_REASONS.map((r) => `'${r}', count(*) FILTER (WHERE reason = '${r}')`).join(", ")}) AS reason_counts
    FROM comment_reports WHERE tenant_id = $1 AND status = $2::"ReportStatus" ${one ? "AND comment_id = $3" : ""}
   GROUP BY comment_id ${one ? "" : "HAVING count(*) >= $3"}`;
  const from = one
    ? `comments c LEFT JOIN (${groups}) g ON g.comment_id = c.id`
    : `(${groups}) g JOIN comments c ON c.tenant_id = $1 AND c.id = g.comment_id`;
  const where = one ? "c.tenant_id = $1 AND c.id = $3" : kind === "list_after" ? "(g.last_at, g.comment_id) < ($5, $6)" : "true";
  return `SELECT ${COMMENT_COLUMNS}, ${CONTEXT_COLUMNS}, COALESCE(g.report_count, 0) AS report_count, g.reason_counts, g.last_at,
      g.dismissed_at, n.notes
    FROM ${from}
    JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
    ${CONTEXT_JOINS}
    LEFT JOIN LATERAL (SELECT json_agg(json_build_object('reason', x.reason, 'note', x.note, 'createdAt', eng_iso(x.created_at))
                                       ORDER BY x.created_at DESC, x.id DESC) AS notes
        FROM (SELECT reason, note, created_at, id FROM comment_reports
               WHERE tenant_id = $1 AND comment_id = c.id AND status = $2::"ReportStatus" AND note IS NOT NULL
               ORDER BY created_at DESC, id DESC LIMIT ${NOTES_SHOWN}) x) n ON true
   WHERE ${where}
   ${one ? "" : "ORDER BY g.last_at DESC, g.comment_id DESC LIMIT $4"}`;
}

const LIST_FIRST = summaryText("list");
const LIST_AFTER = summaryText("list_after");
const ONE = summaryText("one");

function summaryOf(r: SummarySqlRow, status: ReportStatus): ReportedComment {
  const reasons: Partial<Record<ReportReason, number>> = {};
  for (const reason of REPORT_REASONS) {
    const n = r.reason_counts?.[reason] ?? 0;
    if (n > 0) reasons[reason] = n;
  }
  return {
    comment: { ...rowToComment(r), moderation: contextOf(r) },
    status,
    reportCount: r.report_count,
    reasons,
    notes: r.notes ?? [],
    lastReportedAt: r.last_at,
    dismissedAt: r.dismissed_at,
  };
}

function checkStatus(status: string | null | undefined): ReportStatus {
  const s = status ?? "open";
  if (!(REPORT_STATUSES as readonly string[]).includes(s)) {
    throw errors.validation([{ path: "status", message: `must be one of ${REPORT_STATUSES.join(", ")}` }]);
  }
  return s as ReportStatus;
}

/** Reported comments with reports of `status` (default open), newest report first. */
export async function listReported(ctx: RequestContext, args: PageArgs & { status?: string | null }): Promise<Page<ReportedComment>> {
  const status = checkStatus(args.status);
  const limit = checkLimit(args.limit);
  const tag = `reports:${status}`;
  const after = args.cursor ? decodeTimeIdCursor(args.cursor, tag) : null;
  const least = status === "open" ? resolveSettings((await loadTenant(ctx)).settings).safety.reportThreshold : 1;
  const values = [status, least, limit + 1, ...(after ?? [])];
  const rows = after
    ? await store(ctx).sql.query<SummarySqlRow>(LIST_AFTER, values, "reports_list_a")
    : await store(ctx).sql.query<SummarySqlRow>(LIST_FIRST, values, "reports_list_f");
  const items = rows.map((r) => summaryOf(r, status));
  return toPage(items, limit, (s) => timeIdCursor(s.lastReportedAt ?? new Date(0), s.comment.id, tag));
}

/** One comment's reports of `status`; 404 when the tenant has no such comment. */
export async function reportedComment(ctx: RequestContext, commentId: string, status: ReportStatus): Promise<ReportedComment> {
  const rows = await store(ctx).sql.query<SummarySqlRow>(ONE, [status, commentId], "reports_one");
  if (!rows[0]) throw errors.notFound("Comment");
  return summaryOf(rows[0], status);
}

const DISMISS = `UPDATE comment_reports SET status = 'dismissed', dismissed_at = $3, dismissed_by = $4
  WHERE tenant_id = $1 AND comment_id = $2 AND status = 'open' RETURNING id`;

/**
 * Closes the comment's open reports (status dismissed) and answers its dismissed reports. The
 * comment's status stays as it is: a moderator approves or rejects it with the moderation routes.
 * Audited (`comment.reports.dismiss`) when it closed any.
 */
export async function dismissReports(ctx: RequestContext, commentId: string): Promise<ReportedComment> {
  const principal = requirePrincipal(ctx);
  const exists = await store(ctx).sql.query<{ discussion_id: string }>(
    "SELECT discussion_id FROM comments WHERE tenant_id = $1 AND id = $2",
    [commentId],
    "reports_comment_exists",
  );
  if (!exists[0]) throw errors.notFound("Comment");
  const closed = await store(ctx).sql.query<{ id: string }>(
    DISMISS,
    [commentId, ctx.app.clock.now(), actorOf(principal).actorId],
    "reports_dismiss",
  );
  if (closed.length) {
    await recordAudit(
      ctx,
      "comment.reports.dismiss",
      { type: "comment", id: commentId },
      { discussionId: exists[0].discussion_id, dismissed: closed.length },
    );
  }
  return reportedComment(ctx, commentId, "dismissed");
}
