// A reader's data export (contract section 13, docs/privacy.md): every datum the service holds about
// one reader, as one JSON document — the profile, every comment of theirs in any status with the
// bodies the event log still holds for it (the comments table keeps only the current body), their
// reactions (on comments, and on discussions: page reactions) and votes, the reports they made, the
// sanctions imposed on them, the discussions they follow or silenced (contract section 19), their
// sessions of the hosted sign-in (how and when; never a token: only its hash is kept), their passkeys
// (label and dates; never a key), and notification preferences (the service keeps none beyond the
// profile's: an empty object). Read with eleven statements, none of them locking anything.
import { type RequestContext, store } from "../../context/request.js";
import { ENVELOPE_JSON } from "../../events/stored-envelope.js";
import { errors } from "../../lib/errors.js";
import type { CommentStatus } from "../../generated/prisma/enums.js";

/** The export's format, named in the document so a later change of shape can be told apart. */
export const EXPORT_FORMAT = "engagement.reader-export.v1";

export interface ReaderExport {
  format: string;
  readerId: string;
  exportedAt: string;
  profile: {
    id: string;
    name: string;
    avatarUrl: string | null;
    badge: string | null;
    replyEmails: string | null;
    /** emails of new comments in followed discussions (immediate, daily, off) */
    subscriptionEmails: string;
    email: string | null;
    emailSuppressedAt: string | null;
    createdAt: string;
    updatedAt: string;
  } | null;
  comments: ExportedComment[];
  reactions: { commentId: string; discussionId: string; kind: string; createdAt: string }[];
  /** their reactions on discussions themselves (page reactions, contract section 18) */
  pageReactions: { discussionId: string; kind: string; createdAt: string }[];
  /** the reader's votes on comments: 1 or -1 */
  votes: { commentId: string; discussionId: string; value: number; createdAt: string; updatedAt: string }[];
  reports: {
    id: string;
    commentId: string;
    reason: string;
    note: string | null;
    status: string;
    createdAt: string;
    dismissedAt: string | null;
  }[];
  sanctions: { until: string | null; reason: string | null; createdAt: string; liftedAt: string | null }[];
  /** the discussions they follow (`all`) or silenced (`off`); `replies`, the default, is not kept */
  subscriptions: { discussionId: string; mode: string; createdAt: string; updatedAt: string }[];
  /** their sessions of the hosted sign-in (contract section 20): method (email, oidc, guest), the OIDC provider, when */
  sessions: { method: string; provider: string | null; createdAt: string; expiresAt: string }[];
  /** their passkeys (contract section 29): id, label, when added and last used */
  passkeys: { id: string; label: string; createdAt: string; lastUsedAt: string | null }[];
  notificationPreferences: Record<string, never>;
}

interface ExportedComment {
  id: string;
  discussionId: string;
  parentId: string | null;
  /** the author name an import gave this comment (comments.author_name); null: the profile's name */
  authorName: string | null;
  body: string;
  /** its rendering (null only before the start-up backfill reached it) */
  bodyHtml: string | null;
  status: CommentStatus;
  pinned: boolean;
  createdAt: string;
  editedAt: string | null;
  deletedAt: string | null;
  publishedAt: string | null;
  reactions: Record<string, number>;
  replyCount: number;
  moderationReason?: unknown;
  /** the bodies the event log still holds for it (within the replay window): at creation and after each edit */
  history: { event: string; at: string; body: string }[];
}

const PROFILE = `SELECT id, name, avatar_url AS "avatarUrl", badge, reply_emails::text AS "replyEmails", subscription_emails::text AS "subscriptionEmails", email, eng_iso(email_suppressed_at) AS "emailSuppressedAt", eng_iso(created_at) AS "createdAt", eng_iso(updated_at) AS "updatedAt"
  FROM readers WHERE tenant_id = $1 AND id = $2`;
const COMMENTS = `SELECT id, discussion_id AS "discussionId", parent_id AS "parentId", author_name AS "authorName", body, body_html AS "bodyHtml", status::text AS status, pinned,
    eng_iso(created_at) AS "createdAt", eng_iso(edited_at) AS "editedAt", eng_iso(deleted_at) AS "deletedAt",
    eng_iso(published_at) AS "publishedAt", reaction_counts AS reactions, reply_count AS "replyCount", moderation_reason AS "moderationReason"
  FROM comments WHERE tenant_id = $1 AND author_id = $2 ORDER BY created_at, id`;
// the bodies kept in the log, by the discussions the reader wrote in
const HISTORY = `SELECT e.payload #>> '{data,comment,id}' AS "commentId", e.type AS event, eng_iso(e.occurred_at) AS at,
    e.payload #>> '{data,comment,body}' AS body
  FROM (SELECT seq, type, occurred_at, ${ENVELOPE_JSON} AS payload FROM events
         WHERE tenant_id = $1 AND type IN ('comment_created', 'comment_edited')
           AND discussion_id IN (SELECT DISTINCT discussion_id FROM comments WHERE tenant_id = $1 AND author_id = $2)) e
 WHERE e.payload #>> '{data,comment,author,id}' = $2
 ORDER BY e.occurred_at, e.seq`;
const REACTIONS = `SELECT r.comment_id AS "commentId", c.discussion_id AS "discussionId", r.kind, eng_iso(r.created_at) AS "createdAt"
  FROM reactions r JOIN comments c ON c.tenant_id = r.tenant_id AND c.id = r.comment_id
 WHERE r.tenant_id = $1 AND r.reader_id = $2 ORDER BY r.created_at, r.comment_id, r.kind`;
const PAGE_REACTIONS = `SELECT discussion_id AS "discussionId", kind, eng_iso(created_at) AS "createdAt"
  FROM page_reactions WHERE tenant_id = $1 AND reader_id = $2 ORDER BY created_at, discussion_id, kind`;

const VOTES = `SELECT v.comment_id AS "commentId", c.discussion_id AS "discussionId", v.value, eng_iso(v.created_at) AS "createdAt",
    eng_iso(v.updated_at) AS "updatedAt"
  FROM votes v JOIN comments c ON c.tenant_id = v.tenant_id AND c.id = v.comment_id
 WHERE v.tenant_id = $1 AND v.reader_id = $2 ORDER BY v.created_at, v.comment_id`;
const REPORTS = `SELECT id, comment_id AS "commentId", reason::text AS reason, note, status::text AS status,
    eng_iso(created_at) AS "createdAt", eng_iso(dismissed_at) AS "dismissedAt"
  FROM comment_reports WHERE tenant_id = $1 AND reader_id = $2 ORDER BY created_at, id`;
const SANCTIONS = `SELECT eng_iso(until) AS until, reason, eng_iso(created_at) AS "createdAt", eng_iso(lifted_at) AS "liftedAt"
  FROM reader_sanctions WHERE tenant_id = $1 AND reader_id = $2 ORDER BY created_at, id`;

const SUBSCRIPTIONS = `SELECT discussion_id AS "discussionId", mode::text AS mode, eng_iso(created_at) AS "createdAt", eng_iso(updated_at) AS "updatedAt"
  FROM discussion_subscriptions WHERE tenant_id = $1 AND reader_id = $2 ORDER BY discussion_id`;
const SESSIONS = `SELECT method, provider, eng_iso(created_at) AS "createdAt", eng_iso(expires_at) AS "expiresAt"
  FROM reader_sessions WHERE tenant_id = $1 AND reader_id = $2 ORDER BY created_at`;
const PASSKEYS = `SELECT id, label, eng_iso(created_at) AS "createdAt", eng_iso(last_used_at) AS "lastUsedAt"
  FROM reader_passkeys WHERE tenant_id = $1 AND reader_id = $2 ORDER BY created_at, id`;

/** A comment the reader wrote as COMMENTS reads it; its history comes from HISTORY. */
type HeldCommentRow = Omit<ExportedComment, "history">;

/**
 * Everything held about the reader. `forModerators` adds each comment's moderationReason (what rules,
 * the hook or a moderator decided), which readers are never shown. `known`: an unknown reader is a 404
 * (the reader routes), else an export with a null profile and empty lists (`me/export`).
 */
export async function exportReader(
  ctx: RequestContext,
  readerId: string,
  opts: { forModerators: boolean; mustExist: boolean },
): Promise<ReaderExport> {
  const args = [readerId];
  const q = <T>(text: string, name: string) => store(ctx).sql.query<T & Record<string, unknown>>(text, args, name);
  const [profile, comments, history, reactions, pageReactions, votes, reports, sanctions, subscriptions, sessions, passkeys] =
    await Promise.all([
      q<NonNullable<ReaderExport["profile"]>>(PROFILE, "reader_export_profile"),
      q<HeldCommentRow>(COMMENTS, "reader_export_comments"),
      q<{ commentId: string; event: string; at: string; body: string }>(HISTORY, "reader_export_history"),
      q<ReaderExport["reactions"][number]>(REACTIONS, "reader_export_reactions"),
      q<ReaderExport["pageReactions"][number]>(PAGE_REACTIONS, "reader_export_page_reactions"),
      q<ReaderExport["votes"][number]>(VOTES, "reader_export_votes"),
      q<ReaderExport["reports"][number]>(REPORTS, "reader_export_reports"),
      q<ReaderExport["sanctions"][number]>(SANCTIONS, "reader_export_sanctions"),
      q<ReaderExport["subscriptions"][number]>(SUBSCRIPTIONS, "reader_export_subscriptions"),
      q<ReaderExport["sessions"][number]>(SESSIONS, "reader_export_sessions"),
      q<ReaderExport["passkeys"][number]>(PASSKEYS, "reader_export_passkeys"),
    ]);
  const held =
    profile.length +
    comments.length +
    reactions.length +
    pageReactions.length +
    votes.length +
    reports.length +
    sanctions.length +
    subscriptions.length +
    sessions.length +
    passkeys.length;
  if (opts.mustExist && held === 0) throw errors.notFound("Reader");
  const byComment = new Map<string, ExportedComment["history"]>();
  for (const h of history) {
    const list = byComment.get(h.commentId) ?? [];
    list.push({ event: h.event, at: h.at, body: h.body });
    byComment.set(h.commentId, list);
  }
  return {
    format: EXPORT_FORMAT,
    readerId,
    exportedAt: ctx.app.clock.now().toISOString(),
    profile: profile[0] ?? null,
    comments: comments.map(({ moderationReason, ...c }) => ({
      ...c,
      ...(opts.forModerators ? { moderationReason: moderationReason ?? null } : {}),
      history: byComment.get(c.id) ?? [],
    })),
    reactions,
    pageReactions,
    votes,
    reports,
    sanctions,
    subscriptions,
    sessions,
    passkeys,
    notificationPreferences: {},
  };
}
