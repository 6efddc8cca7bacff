// A reader's email preferences (contract section 15): how often they hear of replies to their
// comments — `immediate`, `daily` or `off` — read and changed by the reader themself
// (GET/PATCH /api/v1/me/notifications with their identity; publishable keys allowed). A reader who
// has not chosen follows the tenant's `email.defaultReplies`. Kept on the reader's row
// (`readers.reply_emails`), so erasing the reader erases the choice. Likewise how they hear of new
// comments in discussions they follow (contract section 19, `subscriptions`: `immediate`, `daily` or
// `off`, the default whatever the tenant; `readers.subscription_emails`).
import { loadTenant, requireReader, type RequestContext, store } from "../../context/request.js";
import { errors, type FieldError } from "../../lib/errors.js";
import { REPLY_EMAIL_CHOICES, type ReplyEmails } from "../../tenancy/settings/email.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";

export interface NotificationPreferences {
  replies: ReplyEmails;
  /** whether the reader chose `replies` (false: the tenant's default) */
  chosen: boolean;
  /** emails of new comments in the discussions they follow (`off` unless they chose otherwise) */
  subscriptions: ReplyEmails;
}

const READ = `SELECT reply_emails::text AS "replyEmails", subscription_emails::text AS "subscriptionEmails" FROM readers WHERE tenant_id = $1 AND id = $2`;

// a reader seen for the first time is written with the name and avatar their identity gives; a field
// not named ($5 or $6 null) keeps its value
const WRITE = `INSERT INTO readers (tenant_id, id, name, avatar_url, reply_emails, subscription_emails, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5::"ReplyEmails", coalesce($6::"ReplyEmails", 'off'), $7, $7)
  ON CONFLICT (tenant_id, id) DO UPDATE SET reply_emails = coalesce($5::"ReplyEmails", readers.reply_emails),
    subscription_emails = coalesce($6::"ReplyEmails", readers.subscription_emails), updated_at = EXCLUDED.updated_at
  RETURNING reply_emails::text AS "replyEmails", subscription_emails::text AS "subscriptionEmails"`;

interface PreferenceRow {
  replyEmails: ReplyEmails | null;
  subscriptionEmails: ReplyEmails;
}

function preferencesOf(row: PreferenceRow | undefined, settings: unknown): NotificationPreferences {
  const chosen = row?.replyEmails ?? null;
  return {
    replies: chosen ?? resolveSettings(settings).email.defaultReplies,
    chosen: chosen !== null,
    subscriptions: row?.subscriptionEmails ?? "off",
  };
}

export async function getMyNotifications(ctx: RequestContext): Promise<NotificationPreferences> {
  const reader = await requireReader(ctx);
  const [rows, tenant] = await Promise.all([
    store(ctx).sql.query<PreferenceRow>(READ, [reader.id], "reader_reply_emails"),
    loadTenant(ctx),
  ]);
  return preferencesOf(rows[0], tenant.settings);
}

/** Changes the fields named (`replies`, `subscriptions`; at least one), keeping the other. */
export async function updateMyNotifications(
  ctx: RequestContext,
  input: { replies?: unknown; subscriptions?: unknown },
): Promise<NotificationPreferences> {
  const reader = await requireReader(ctx);
  const problems: FieldError[] = [];
  const choice = (path: "replies" | "subscriptions"): ReplyEmails | null => {
    const v = input[path];
    if (v === undefined || v === null) return null;
    if (typeof v !== "string" || !(REPLY_EMAIL_CHOICES as readonly string[]).includes(v)) {
      problems.push({ path, message: `must be one of ${REPLY_EMAIL_CHOICES.join(", ")}` });
      return null;
    }
    return v as ReplyEmails;
  };
  const replies = choice("replies");
  const subscriptions = choice("subscriptions");
  if (!problems.length && replies === null && subscriptions === null) {
    problems.push({ path: "replies", message: 'give "replies" or "subscriptions" (immediate, daily or off)' });
  }
  if (problems.length) throw errors.validation(problems);
  const [rows, tenant] = await Promise.all([
    store(ctx).sql.query<PreferenceRow>(
      WRITE,
      [reader.id, reader.name, reader.avatarUrl, replies, subscriptions, ctx.app.clock.now()],
      "reader_reply_emails_set",
    ),
    loadTenant(ctx),
  ]);
  return preferencesOf(rows[0], tenant.settings);
}
