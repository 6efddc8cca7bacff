// From queued replies to rendered messages (contract section 15). A published reply to someone
// else's comment leaves, in its own transaction (eng_queue_email), an email_items row — due 2 minutes
// later for a reader who wants replies at once, at the tenant's digest hour for one who wants a daily
// digest — and the reader's job of the outbound queue (kind `email_compose`) due with it, unless one
// is pending already. When the job is due, everything queued for the reader becomes one message: the
// composer below takes the job's key off it and the reader's items in one transaction, so a retried
// compose finds nothing to send twice, and a reply committed meanwhile has a job of its own (the
// locking that makes this hold: eng_queue_email, prisma/sql/70-events.sql).
// At composing time the rules are checked again: the reader still wants mail and has an address that
// is not suppressed, the reply is still approved and not deleted, and the reader has had fewer than
// `email.maxPerReaderPerDay` messages in the last 24 hours. What fails them is dropped, not retried.
// Each message is written with its job of the outbound queue (kind `email`, sender.ts), which sends it.
// New comments in discussions a reader follows (contract section 19) are queued the same way by the
// follow worker (email_items.source `new_comment`, the reader's `subscriptions` choice): they make
// messages of their own (kinds `following` and `following_digest`), whose unsubscribe link stops only
// them.
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "../../../generated/prisma/client.js";
import type { MessageComposer } from "../../../outbound/composers.js";
import { takeJobKey } from "../../../outbound/jobs.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import { type ReplyEmails } from "../../../tenancy/settings/email.js";
import { renderReplyEmail, type ReplyItem } from "../templates.js";
import { queueingJobs } from "./sender.js";

export interface ComposeDeps {
  prisma: PrismaClient;
  /** builds the one-click unsubscribe URL for a reader */
  unsubscribeUrl: (tenantId: string, readerId: string, about: "replies" | "subscriptions") => string;
  /** EMAIL_OUTBOX=1: messages are kept (state `outbox`) instead of queued for sending */
  outbox: boolean;
  /** whether a tenant's mail can go anywhere (the outbox, SMTP_URL, or its own email.smtpUrl): else it is dropped */
  canSend: (settings: unknown) => boolean;
}

export interface ComposeResult {
  /** messages written */
  messages: number;
  /** queued replies dropped: no address, unsubscribed, over the daily limit, or the reply is gone */
  dropped: number;
}

/** The composer of `email_compose` jobs, with what it did since it was made (the email worker reads it). */
export interface MailComposer extends MessageComposer {
  readonly tally: Readonly<ComposeResult>;
}

const DAY_MS = 86_400_000;

interface ReaderRow {
  name: string;
  email: string | null;
  suppressed: boolean;
  mode: ReplyEmails;
  /** the reader's choice for new comments in followed discussions */
  subscriptionMode: ReplyEmails;
  tenantName: string;
  settings: unknown;
  recent: number;
}

/** what a queued item tells of: a reply (`reply`) or a new comment in a followed discussion (`new_comment`) */
type Source = "reply" | "new_comment";

/**
 * Composes a reader's queued items of one source into one message, in one transaction: the job's key
 * is taken off it first (the write queuing an item for this reader holds that row until it commits,
 * so every item committed before is seen), then every item of the reader and source is taken. Null:
 * the key is gone already — this job composed before (its end was not recorded) or is no longer held.
 */
async function composeReader(
  deps: ComposeDeps,
  job: { id: string; tenantId: string; claimToken: string },
  now: Date,
): Promise<ComposeResult | null> {
  return deps.prisma.$transaction(async (tx) => {
    const message = await takeJobKey(tx, job, "composeKey");
    if (!message) return null;
    const taken = message as { readerId: string; source: Source };
    const items = await tx.$queryRawUnsafe<{ commentId: string; mode: string }[]>(
      `DELETE FROM email_items WHERE tenant_id = $1 AND reader_id = $2 AND source = $3
       RETURNING comment_id AS "commentId", mode`,
      job.tenantId,
      taken.readerId,
      taken.source,
    );
    if (items.length === 0) return { messages: 0, dropped: 0 };
    const [reader] = await tx.$queryRawUnsafe<ReaderRow[]>(
      `SELECT r.name, r.email, r.email_suppressed_at IS NOT NULL AS suppressed,
              coalesce(r.reply_emails::text, t.settings #>> '{email,defaultReplies}', 'off') AS mode,
              r.subscription_emails::text AS "subscriptionMode",
              t.name AS "tenantName", t.settings,
              (SELECT count(*)::int FROM email_messages m
                WHERE m.tenant_id = r.tenant_id AND m.reader_id = r.id AND m.created_at > $3
                  AND m.state IN ('queued', 'sent', 'outbox')) AS recent
         FROM readers r JOIN tenants t ON t.id = r.tenant_id
        WHERE r.tenant_id = $1 AND r.id = $2`,
      job.tenantId,
      taken.readerId,
      new Date(now.getTime() - DAY_MS),
    );
    // in the order they were published
    const found = await tx.$queryRawUnsafe<ReplyItem[]>(
      `SELECT c.id AS "commentId", coalesce(c.author_name, ra.name, 'Someone') AS "authorName", c.body, c.body_html AS "bodyHtml",
              CASE WHEN p.deleted_at IS NULL THEN p.body END AS "parentBody",
              d.title AS "discussionTitle", d.url AS "discussionUrl"
         FROM comments c
         JOIN discussions d ON d.tenant_id = c.tenant_id AND d.id = c.discussion_id
         LEFT JOIN readers ra ON ra.tenant_id = c.tenant_id AND ra.id = c.author_id
         LEFT JOIN comments p ON p.tenant_id = c.tenant_id AND p.id = c.parent_id
        WHERE c.tenant_id = $1 AND c.id = ANY($2::text[]) AND c.status = 'approved' AND c.deleted_at IS NULL
        ORDER BY c.published_at, c.id`,
      job.tenantId,
      items.map((i) => i.commentId),
    );
    const mode = !reader ? "off" : taken.source === "reply" ? reader.mode : reader.subscriptionMode;
    // a reader gone, without an address, unsubscribed, over the limit, or the replies gone: dropped
    if (
      !reader ||
      !deps.canSend(reader.settings) ||
      !reader.email ||
      reader.suppressed ||
      mode === "off" ||
      reader.recent >= resolveSettings(reader.settings).email.maxPerReaderPerDay ||
      found.length === 0
    )
      return { messages: 0, dropped: items.length };
    const digest = items.some((i) => i.mode === "daily");
    const following = taken.source === "new_comment";
    const kind = following ? (digest ? "following_digest" : "following") : digest ? "digest" : "replies";
    const unsubscribeUrl = deps.unsubscribeUrl(job.tenantId, taken.readerId, following ? "subscriptions" : "replies");
    // a new comment is told of for itself, not as an answer to the reader
    const told = following ? found.map((item) => ({ ...item, parentBody: null })) : found;
    const m = renderReplyEmail({
      tenantName: reader.tenantName,
      readerName: reader.name,
      kind: digest ? "digest" : "replies",
      about: following ? "following" : "replies",
      items: told,
      unsubscribeUrl,
    });
    // the message and, unless kept in the outbox, its job of the outbound queue (kind `email`)
    await tx.$executeRawUnsafe(
      queueingJobs(`INSERT INTO email_messages (id, tenant_id, reader_id, kind, to_address, subject, text_body, html_body,
                                   unsubscribe_url, item_count, state, created_at)
       VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`),
      randomUUID(),
      job.tenantId,
      taken.readerId,
      kind,
      reader.email,
      m.subject,
      m.text,
      m.html,
      unsubscribeUrl,
      told.length,
      deps.outbox ? "outbox" : "queued",
      now,
    );
    return { messages: 1, dropped: items.length - found.length };
  });
}

/** The composer of `email_compose` jobs (src/outbound/composers.ts): a reader's due items made into their message. */
export function createMailComposer(deps: ComposeDeps): MailComposer {
  const tally: ComposeResult = { messages: 0, dropped: 0 };
  return {
    tally,
    async compose(job, now) {
      const r = await composeReader(deps, job, now);
      if (r === null) return { done: "composed already" };
      tally.messages += r.messages;
      tally.dropped += r.dropped;
      return { done: r.messages > 0 ? "composed" : `nothing to send (${r.dropped} dropped)` };
    },
  };
}
