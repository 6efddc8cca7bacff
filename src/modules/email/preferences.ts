// A reader's email preferences (contract section 15): how often they hear of replies to their
// comments — `immediate`, `daily` or `off` — read and changed by the reader themself
// (GET/PATCH /api/v1/me/notifications with their identity; publishable keys allowed). A reader who
// has not chosen follows the tenant's `email.defaultReplies`. Kept on the reader's row
// (`readers.reply_emails`), so erasing the reader erases the choice.
import { loadTenant, requireReader, type RequestContext, store } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { REPLY_EMAIL_CHOICES, resolveSettings, type ReplyEmails } from "../../tenancy/settings-model.js";

export interface NotificationPreferences {
  replies: ReplyEmails;
  /** whether the reader chose it (false: the tenant's default) */
  chosen: boolean;
}

const READ = `SELECT reply_emails::text AS "replyEmails" FROM readers WHERE tenant_id = $1 AND id = $2`;

// a reader seen for the first time is written with the name and avatar their identity gives
const WRITE = `INSERT INTO readers (tenant_id, id, name, avatar_url, reply_emails, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5::"ReplyEmails", $6, $6)
  ON CONFLICT (tenant_id, id) DO UPDATE SET reply_emails = EXCLUDED.reply_emails, updated_at = EXCLUDED.updated_at`;

export async function getMyNotifications(ctx: RequestContext): Promise<NotificationPreferences> {
  const reader = await requireReader(ctx);
  const [rows, tenant] = await Promise.all([
    store(ctx).sql.query<{ replyEmails: ReplyEmails | null }>(READ, [reader.id], "reader_reply_emails"),
    loadTenant(ctx),
  ]);
  const chosen = rows[0]?.replyEmails ?? null;
  return { replies: chosen ?? resolveSettings(tenant.settings).email.defaultReplies, chosen: chosen !== null };
}

export async function updateMyNotifications(ctx: RequestContext, input: { replies?: unknown }): Promise<NotificationPreferences> {
  const reader = await requireReader(ctx);
  const replies = input.replies;
  if (typeof replies !== "string" || !(REPLY_EMAIL_CHOICES as readonly string[]).includes(replies)) {
    throw errors.validation([{ path: "replies", message: `must be one of ${REPLY_EMAIL_CHOICES.join(", ")}` }]);
  }
  await store(ctx).sql.query(WRITE, [reader.id, reader.name, reader.avatarUrl, replies, ctx.app.clock.now()], "reader_reply_emails_set");
  return { replies: replies as ReplyEmails, chosen: true };
}
