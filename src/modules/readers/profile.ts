// A reader as a moderator sees them (moderate_content, declared by the GraphQL field): profile, how
// many comments they have of each status, the open reports against their comments, the sanction in
// force (judged at the app clock's now), their latest comments of any status, the discussions they
// follow or have silenced (contract section 19), how many items their inbox keeps, and how they last
// signed in through the service's hosted sign-in (contract section 20; src/auth/reader-sessions.ts).
// Four statements.
import { loadTenant, type RequestContext, store } from "../../context/request.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { type ReplyEmails } from "../../tenancy/settings/email.js";
import { type SignInMethod } from "../../tenancy/settings/sign-in.js";
import { isGuestReader, lastSignIn } from "../../auth/reader-sessions.js";
import { errors } from "../../lib/errors.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "../comments/comment-row.js";
import { CONTEXT_COLUMNS, CONTEXT_JOINS, contextOf, type CommentInContext, type ContextSqlRow } from "../comments/moderation-context.js";
import type { Sanction } from "./sanctions.js";
import type { TrustLevel } from "./trust.js";

/** How many of the reader's latest comments the profile shows. */
export const RECENT_COMMENTS = 20;
/** How many of the discussions they follow (or silenced) it shows, latest choice first. */
export const FOLLOWED_SHOWN = 50;

/** A discussion the reader chose a mode other than the default `replies` for (replies is kept as no row). */
export interface FollowedDiscussion {
  discussionId: string;
  title: string | null;
  mode: "all" | "off";
  since: Date;
}

/** How a reader last signed in through the hosted sign-in. */
export interface ReaderSignIn {
  method: SignInMethod;
  /** the OIDC provider's id (method oidc), and its label in today's settings (null once removed) */
  provider: string | null;
  providerLabel: string | null;
  /** when their latest session began; null: every session of theirs was signed out (its row is gone) */
  at: Date | null;
}

/**
 * How the hosted sign-in names its readers (contract section 20): `guest:…`, `email:…`, `<provider
 * id>:…`; what a reader whose sessions are all signed out is known by. Null: none of these.
 */
function methodOfId(readerId: string, providers: readonly { id: string }[]): Omit<ReaderSignIn, "providerLabel" | "at"> | null {
  if (isGuestReader(readerId)) return { method: "guest", provider: null };
  if (readerId.startsWith("email:")) return { method: "email", provider: null };
  const provider = providers.find((p) => readerId.startsWith(`${p.id}:`));
  return provider ? { method: "oidc", provider: provider.id } : null;
}

export interface ReaderCommentCounts {
  approved: number;
  pending: number;
  rejected: number;
  deleted: number;
}

export interface ReaderProfile {
  id: string;
  name: string;
  avatarUrl: string | null;
  /** the badge shown by their name (contract section 21), and who set it */
  badge: string | null;
  badgeSource: "claim" | "moderator" | null;
  /** how the write path treats their comments (contract section 21; ./trust.ts) */
  trustLevel: TrustLevel;
  createdAt: Date;
  commentCounts: ReaderCommentCounts;
  openReports: number;
  sanction: Sanction | null;
  /** the reader's address for reply emails (never shown): none, verified (from their identity), or suppressed after an SMTP 5xx */
  emailStatus: "none" | "verified" | "suppressed";
  /** how often they hear of replies: their choice, else the tenant's email.defaultReplies */
  replyEmails: ReplyEmails;
  replyEmailsChosen: boolean;
  recentComments: CommentInContext[];
  /** the discussions they follow (`all`) or silenced (`off`), latest first, at most FOLLOWED_SHOWN */
  following: FollowedDiscussion[];
  /** how many discussions they follow (mode all) */
  followingCount: number;
  /** items their inbox keeps (within retention), and how many of them are unread */
  inboxItems: number;
  inboxUnread: number;
  /** their latest hosted sign-in; null: never (a reader the site's own sign-in identifies) */
  signIn: ReaderSignIn | null;
}

const PROFILE = `SELECT r.id, r.name, r.avatar_url, r.badge, r.badge_source, r.trust_level::text AS trust_level, r.created_at, r.reply_emails::text AS reply_emails,
    CASE WHEN r.email IS NULL THEN 'none' WHEN r.email_suppressed_at IS NOT NULL THEN 'suppressed' ELSE 'verified' END AS email_status,
    (SELECT json_build_object('approved', count(*) FILTER (WHERE status = 'approved'), 'pending', count(*) FILTER (WHERE status = 'pending'),
            'rejected', count(*) FILTER (WHERE status = 'rejected'), 'deleted', count(*) FILTER (WHERE status = 'deleted'))
       FROM comments WHERE tenant_id = r.tenant_id AND author_id = r.id) AS counts,
    (SELECT count(*)::int FROM comment_reports cr JOIN comments c ON c.tenant_id = cr.tenant_id AND c.id = cr.comment_id
      WHERE cr.tenant_id = r.tenant_id AND c.author_id = r.id AND cr.status = 'open') AS open_reports,
    (SELECT eng_sanction_json(s) FROM reader_sanctions s
      WHERE s.tenant_id = r.tenant_id AND s.reader_id = r.id AND s.lifted_at IS NULL AND (s.until IS NULL OR s.until > $3)
      ORDER BY s.created_at DESC LIMIT 1) AS sanction,
    (SELECT count(*)::int FROM discussion_subscriptions f WHERE f.tenant_id = r.tenant_id AND f.reader_id = r.id AND f.mode = 'all') AS following_count,
    (SELECT json_build_object('items', count(*), 'unread', count(*) FILTER (WHERE i.read_at IS NULL))
       FROM inbox_items i WHERE i.tenant_id = r.tenant_id AND i.reader_id = r.id) AS inbox
  FROM readers r WHERE r.tenant_id = $1 AND r.id = $2`;

const RECENT = `SELECT ${COMMENT_COLUMNS}, ${CONTEXT_COLUMNS} FROM comments c JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
  ${CONTEXT_JOINS}
  WHERE c.tenant_id = $1 AND c.author_id = $2 ORDER BY c.created_at DESC, c.id DESC LIMIT ${RECENT_COMMENTS}`;

const FOLLOWED = `SELECT f.discussion_id, d.title, f.mode::text AS mode, f.updated_at FROM discussion_subscriptions f
  LEFT JOIN discussions d ON d.tenant_id = f.tenant_id AND d.id = f.discussion_id
  WHERE f.tenant_id = $1 AND f.reader_id = $2 ORDER BY f.updated_at DESC, f.discussion_id LIMIT ${FOLLOWED_SHOWN}`;

interface FollowedSqlRow {
  discussion_id: string;
  title: string | null;
  mode: "all" | "off";
  updated_at: Date;
}

interface ProfileSqlRow {
  id: string;
  name: string;
  avatar_url: string | null;
  badge: string | null;
  badge_source: string | null;
  trust_level: TrustLevel;
  created_at: Date;
  counts: ReaderCommentCounts;
  open_reports: number;
  sanction: Sanction | null;
  reply_emails: ReplyEmails | null;
  email_status: ReaderProfile["emailStatus"];
  following_count: number;
  inbox: { items: number; unread: number };
}

/** The reader's profile; 404 when the tenant has no such reader. */
export async function getReaderProfile(ctx: RequestContext, readerId: string): Promise<ReaderProfile> {
  const [profile, recent, followed, tenant, signIn] = await Promise.all([
    store(ctx).sql.query<ProfileSqlRow>(PROFILE, [readerId, ctx.app.clock.now()], "reader_profile"),
    store(ctx).sql.query<CommentSqlRow & ContextSqlRow>(RECENT, [readerId], "reader_recent_comments"),
    store(ctx).sql.query<FollowedSqlRow>(FOLLOWED, [readerId], "reader_followed"),
    loadTenant(ctx),
    lastSignIn(store(ctx), readerId),
  ]);
  const p = profile[0];
  if (!p) throw errors.notFound("Reader");
  const settings = resolveSettings(tenant.settings);
  const how = signIn ?? methodOfId(p.id, settings.signIn.oidc);
  const providerLabel = how?.provider ? (settings.signIn.oidc.find((o) => o.id === how.provider)?.label ?? null) : null;
  return {
    id: p.id,
    name: p.name,
    avatarUrl: p.avatar_url,
    badge: p.badge,
    badgeSource: p.badge_source as ReaderProfile["badgeSource"],
    trustLevel: p.trust_level,
    createdAt: p.created_at,
    commentCounts: p.counts,
    openReports: p.open_reports,
    sanction: p.sanction,
    emailStatus: p.email_status,
    replyEmails: p.reply_emails ?? settings.email.defaultReplies,
    replyEmailsChosen: p.reply_emails !== null,
    recentComments: recent.map((r) => ({ ...rowToComment(r), moderation: contextOf(r) })),
    following: followed.map((f) => ({ discussionId: f.discussion_id, title: f.title, mode: f.mode, since: f.updated_at })),
    followingCount: p.following_count,
    inboxItems: p.inbox.items,
    inboxUnread: p.inbox.unread,
    signIn: how ? { method: how.method, provider: how.provider, providerLabel, at: signIn?.at ?? null } : null,
  };
}
