// From queued replies to rendered messages (contract section 15). A published reply to someone
// else's comment leaves an email_items row in its own transaction (eng_insert_event): due 2 minutes
// later for a reader who wants replies at once, at the tenant's digest hour for one who wants a daily
// digest. When a reader's first item is due, everything queued for them becomes one message, in one
// transaction that deletes the items it uses — two instances composing at once cannot both have them.
// At composing time the rules are checked again: the reader still wants mail and has an address that
// is not suppressed, the reply is still approved and not deleted, and the reader has had fewer than
// `email.maxPerReaderPerDay` messages in the last 24 hours. What fails them is dropped, not retried.
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "../../generated/prisma/client.js";
import type { Clock } from "../../lib/clock.js";
import { resolveSettings, type ReplyEmails } from "../../tenancy/settings-model.js";
import { renderReplyEmail, type ReplyItem } from "./templates.js";

export interface ComposeDeps {
  prisma: PrismaClient;
  clock: Clock;
  /** builds the one-click unsubscribe URL for a reader */
  unsubscribeUrl: (tenantId: string, readerId: string) => string;
  /** EMAIL_OUTBOX=1: messages are kept (state `outbox`) instead of queued for sending */
  outbox: boolean;
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
  name: string;
  email: string | null;
  suppressed: boolean;
  mode: ReplyEmails;
  tenantName: string;
  settings: unknown;
  recent: number;
}

/** Readers with an item due now. */
export async function dueReaders(prisma: PrismaClient, now: Date): Promise<{ tenantId: string; readerId: string }[]> {
  return prisma.$queryRawUnsafe(
    `SELECT DISTINCT tenant_id AS "tenantId", reader_id AS "readerId" FROM email_items WHERE due_at <= $1 LIMIT ${READERS_PER_PASS}`,
    now,
  );
}

/** Composes every due reader's message. */
export async function composeDue(deps: ComposeDeps): Promise<ComposeResult> {
  const total: ComposeResult = { messages: 0, dropped: 0 };
  const now = deps.clock.now();
  for (const { tenantId, readerId } of await dueReaders(deps.prisma, now)) {
    const r = await composeFor(deps, tenantId, readerId, now);
    total.messages += r.messages;
    total.dropped += r.dropped;
  }
  return total;
}

/** One reader's queued replies as one message (or none, with the reason the rules give). */
export async function composeFor(deps: ComposeDeps, tenantId: string, readerId: string, now: Date): Promise<ComposeResult> {
  return deps.prisma.$transaction(async (tx) => {
    // taken by this transaction: a second composer's DELETE waits, then finds them gone
    const items = await tx.$queryRawUnsafe<{ commentId: string; mode: string }[]>(
      `DELETE FROM email_items WHERE tenant_id = $1 AND reader_id = $2 AND created_at <= $3
       RETURNING comment_id AS "commentId", mode`,
      tenantId,
      readerId,
      now,
    );
    if (items.length === 0) return { messages: 0, dropped: 0 };
    const drop = { messages: 0, dropped: items.length };
    const [reader] = await tx.$queryRawUnsafe<ReaderRow[]>(
      `SELECT r.name, r.email, r.email_suppressed_at IS NOT NULL AS suppressed,
              coalesce(r.reply_emails::text, t.settings #>> '{email,defaultReplies}', 'off') AS mode,
              t.name AS "tenantName", t.settings,
              (SELECT count(*)::int FROM email_messages m
                WHERE m.tenant_id = r.tenant_id AND m.reader_id = r.id AND m.created_at > $3
                  AND m.state IN ('queued', 'sent', 'outbox')) AS recent
         FROM readers r JOIN tenants t ON t.id = r.tenant_id
        WHERE r.tenant_id = $1 AND r.id = $2`,
      tenantId,
      readerId,
      new Date(now.getTime() - DAY_MS),
    );
    if (!reader || !reader.email || reader.suppressed || reader.mode === "off") return drop;
    const email = resolveSettings(reader.settings).email;
    if (reader.recent >= email.maxPerReaderPerDay) return drop;
    const replies = await tx.$queryRawUnsafe<ReplyItem[]>(
      `SELECT c.id AS "commentId", coalesce(ra.name, 'Someone') AS "authorName", c.body,
              CASE WHEN p.deleted_at IS NULL THEN p.body END AS "parentBody",
              d.title AS "discussionTitle", d.url AS "discussionUrl"
         FROM comments c
         JOIN discussions d ON d.tenant_id = c.tenant_id AND d.id = c.discussion_id
         LEFT JOIN readers ra ON ra.tenant_id = c.tenant_id AND ra.id = c.author_id
         LEFT JOIN comments p ON p.tenant_id = c.tenant_id AND p.id = c.parent_id
        WHERE c.tenant_id = $1 AND c.id = ANY($2::text[]) AND c.status = 'approved' AND c.deleted_at IS NULL
        ORDER BY c.published_at, c.id`,
      tenantId,
      items.map((i) => i.commentId),
    );
    if (replies.length === 0) return drop;
    const kind = items.some((i) => i.mode === "daily") ? "digest" : "replies";
    const unsubscribeUrl = deps.unsubscribeUrl(tenantId, readerId);
    const rendered = renderReplyEmail({ tenantName: reader.tenantName, readerName: reader.name, kind, items: replies, unsubscribeUrl });
    await tx.$executeRawUnsafe(
      `INSERT INTO email_messages (id, tenant_id, reader_id, kind, to_address, subject, text_body, html_body,
                                   unsubscribe_url, item_count, state, next_attempt_at, created_at)
       VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`,
      randomUUID(),
      tenantId,
      readerId,
      kind,
      reader.email,
      rendered.subject,
      rendered.text,
      rendered.html,
      unsubscribeUrl,
      replies.length,
      deps.outbox ? "outbox" : "queued",
      now,
    );
    return { messages: 1, dropped: items.length - replies.length };
  });
}
