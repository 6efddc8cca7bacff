// From queued replies to rendered messages (contract section 15). A published reply to someone
// else's comment leaves an email_items row in its own transaction (eng_insert_event): due 2 minutes
// later for a reader who wants replies at once, at the tenant's digest hour for one who wants a daily
// digest. When a reader's first item is due, everything queued for them becomes one message; a pass
// takes up to 200 readers in one transaction that deletes the items it uses — two instances composing
// at once cannot both have them.
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
import type { Clock } from "../../../lib/clock.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import { type ReplyEmails } from "../../../tenancy/settings/email.js";
import { renderReplyEmail, type ReplyItem } from "../templates.js";
import { queueingJobs } from "./sender.js";

export interface ComposeDeps {
  prisma: PrismaClient;
  clock: Clock;
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

const DAY_MS = 86_400_000;
/** readers composed per pass; the next pass takes the rest */
const READERS_PER_PASS = 200;

interface ReaderRow {
  tenantId: string;
  readerId: string;
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

type ReplyRow = ReplyItem & { tenantId: string };

const keyOf = (tenantId: string, readerId: string) => `${tenantId}\n${readerId}`;
/** what a queued item tells of: a reply (`reply`) or a new comment in a followed discussion (`new_comment`) */
type Source = "reply" | "new_comment";

/**
 * Composes the messages of up to READERS_PER_PASS readers with an item due, in one transaction:
 * it takes (deletes) every item of those readers queued until now, so a second composer running at
 * once waits for the rows and then finds them gone. Call again until it composes and drops nothing.
 */
export async function composeDue(deps: ComposeDeps): Promise<ComposeResult> {
  const now = deps.clock.now();
  return deps.prisma.$transaction(async (tx) => {
    const items = await tx.$queryRawUnsafe<{ tenantId: string; readerId: string; commentId: string; mode: string; source: Source }[]>(
      `DELETE FROM email_items i
        USING (SELECT DISTINCT tenant_id, reader_id FROM email_items WHERE due_at <= $1 LIMIT ${READERS_PER_PASS}) due
        WHERE i.tenant_id = due.tenant_id AND i.reader_id = due.reader_id AND i.created_at <= $1
       RETURNING i.tenant_id AS "tenantId", i.reader_id AS "readerId", i.comment_id AS "commentId", i.mode, i.source`,
      now,
    );
    if (items.length === 0) return { messages: 0, dropped: 0 };
    // one message per reader and source: replies, and new comments of followed discussions
    const byReader = new Map<string, typeof items>();
    for (const item of items) {
      const k = `${keyOf(item.tenantId, item.readerId)}\n${item.source}`;
      byReader.set(k, [...(byReader.get(k) ?? []), item]);
    }
    const pairs = [...new Map(items.map((i) => [keyOf(i.tenantId, i.readerId), i])).values()];
    const readers = await tx.$queryRawUnsafe<ReaderRow[]>(
      `SELECT r.tenant_id AS "tenantId", r.id AS "readerId", r.name, r.email, r.email_suppressed_at IS NOT NULL AS suppressed,
              coalesce(r.reply_emails::text, t.settings #>> '{email,defaultReplies}', 'off') AS mode,
              r.subscription_emails::text AS "subscriptionMode",
              t.name AS "tenantName", t.settings,
              (SELECT count(*)::int FROM email_messages m
                WHERE m.tenant_id = r.tenant_id AND m.reader_id = r.id AND m.created_at > $3
                  AND m.state IN ('queued', 'sent', 'outbox')) AS recent
         FROM unnest($1::text[], $2::text[]) AS k(tenant_id, reader_id)
         JOIN readers r ON r.tenant_id = k.tenant_id AND r.id = k.reader_id
         JOIN tenants t ON t.id = r.tenant_id`,
      pairs.map((p) => p.tenantId),
      pairs.map((p) => p.readerId),
      new Date(now.getTime() - DAY_MS),
    );
    const replies = await tx.$queryRawUnsafe<ReplyRow[]>(
      `SELECT c.tenant_id AS "tenantId", c.id AS "commentId", coalesce(c.author_name, ra.name, 'Someone') AS "authorName", c.body, c.body_html AS "bodyHtml",
              CASE WHEN p.deleted_at IS NULL THEN p.body END AS "parentBody",
              d.title AS "discussionTitle", d.url AS "discussionUrl"
         FROM unnest($1::text[], $2::text[]) AS k(tenant_id, comment_id)
         JOIN comments c ON c.tenant_id = k.tenant_id AND c.id = k.comment_id
         JOIN discussions d ON d.tenant_id = c.tenant_id AND d.id = c.discussion_id
         LEFT JOIN readers ra ON ra.tenant_id = c.tenant_id AND ra.id = c.author_id
         LEFT JOIN comments p ON p.tenant_id = c.tenant_id AND p.id = c.parent_id
        WHERE c.status = 'approved' AND c.deleted_at IS NULL
        ORDER BY c.published_at, c.id`,
      items.map((i) => i.tenantId),
      items.map((i) => i.commentId),
    );
    const replyByKey = new Map(replies.map((r) => [keyOf(r.tenantId, r.commentId), r]));
    const rows: unknown[][] = [];
    let dropped = 0;
    for (const reader of readers) {
      let recent = reader.recent;
      for (const source of ["reply", "new_comment"] as const) {
        const group = `${keyOf(reader.tenantId, reader.readerId)}\n${source}`;
        const queued = byReader.get(group);
        if (!queued) continue;
        const limit = resolveSettings(reader.settings).email.maxPerReaderPerDay;
        // in the order they were published
        const wanted = new Set(queued.map((i) => replyByKey.get(keyOf(i.tenantId, i.commentId))));
        const found = replies.filter((r) => wanted.has(r));
        const mode = source === "reply" ? reader.mode : reader.subscriptionMode;
        if (!deps.canSend(reader.settings) || !reader.email || reader.suppressed || mode === "off" || recent >= limit || found.length === 0)
          continue;
        dropped += queued.length - found.length;
        byReader.delete(group);
        recent++;
        const digest = queued.some((i) => i.mode === "daily");
        const following = source === "new_comment";
        const kind = following ? (digest ? "following_digest" : "following") : digest ? "digest" : "replies";
        const unsubscribeUrl = deps.unsubscribeUrl(reader.tenantId, reader.readerId, following ? "subscriptions" : "replies");
        // a new comment is told of for itself, not as an answer to the reader
        const items = found.map(({ tenantId: _t, ...item }) => (following ? { ...item, parentBody: null } : item));
        const m = renderReplyEmail({
          tenantName: reader.tenantName,
          readerName: reader.name,
          kind: digest ? "digest" : "replies",
          about: following ? "following" : "replies",
          items,
          unsubscribeUrl,
        });
        rows.push([
          randomUUID(),
          reader.tenantId,
          reader.readerId,
          kind,
          reader.email,
          m.subject,
          m.text,
          m.html,
          unsubscribeUrl,
          items.length,
        ]);
      }
    }
    // what no message took: a reader gone, without an address, unsubscribed, over the limit, or replies gone
    for (const left of byReader.values()) dropped += left.length;
    if (rows.length) {
      const col = (i: number) => rows.map((r) => r[i]);
      // each message and, unless kept in the outbox, its job of the outbound queue (kind `email`)
      await tx.$executeRawUnsafe(
        queueingJobs(`INSERT INTO email_messages (id, tenant_id, reader_id, kind, to_address, subject, text_body, html_body,
                                     unsubscribe_url, item_count, state, created_at)
         SELECT m.id::uuid, m.tenant_id, m.reader_id, m.kind, m.to_address, m.subject, m.text_body, m.html_body,
                m.unsubscribe_url, m.item_count, $11, $12
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[])
             AS m(id, tenant_id, reader_id, kind, to_address, subject, text_body, html_body, unsubscribe_url, item_count)`),
        ...Array.from({ length: 10 }, (_, i) => col(i)),
        deps.outbox ? "outbox" : "queued",
        now,
      );
    }
    return { messages: rows.length, dropped };
  });
}
