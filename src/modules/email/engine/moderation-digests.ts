// The moderators' digests that are due, across tenants (the email worker runs it): due operators
// taken FOR UPDATE SKIP LOCKED, each one's message written and the due time moved on, in one
// transaction; the message is sent as every other is, a job of the outbound queue (kind `email`,
// sender.ts). The choice itself: src/modules/email/moderation-digest.ts.
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "../../../generated/prisma/client.js";
import type { Clock } from "../../../lib/clock.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import { renderModerationDigest, type WaitingComment } from "../templates.js";
import { nextDigestAt, type DigestFrequency } from "../moderation-digest.js";
import { queueingJobs } from "./sender.js";

export interface DigestDeps {
  prisma: PrismaClient;
  clock: Clock;
  outbox: boolean;
  /** whether a tenant's mail can go anywhere (mail-queue.ts) */
  canSend: (settings: unknown) => boolean;
  consoleUrl: string;
  unsubscribeUrl: (tenantId: string, operatorId: string) => string;
}

interface DueOperator {
  id: string;
  tenantId: string;
  email: string;
  frequency: DigestFrequency;
  tenantName: string;
  settings: unknown;
}

/** Writes the digests that are due (up to 100 operators a call); how many were written. */
export async function composeModerationDigests(deps: DigestDeps): Promise<number> {
  const now = deps.clock.now();
  return deps.prisma.$transaction(async (tx) => {
    const due = await tx.$queryRawUnsafe<DueOperator[]>(
      `SELECT o.id, o.tenant_id AS "tenantId", o.email, o.moderation_digest AS frequency, t.name AS "tenantName", t.settings
         FROM operators o JOIN tenants t ON t.id = o.tenant_id
        WHERE o.moderation_digest <> 'off' AND o.moderation_digest_due_at <= $1
        ORDER BY o.moderation_digest_due_at LIMIT 100
        FOR UPDATE OF o SKIP LOCKED`,
      now,
    );
    let written = 0;
    const waiting = new Map<string, { pending: number; reported: number; oldest: WaitingComment[] }>();
    for (const op of due) {
      let w = waiting.get(op.tenantId);
      if (!w) {
        const [counts] = await tx.$queryRawUnsafe<{ pending: number; reported: number }[]>(
          `SELECT (SELECT count(*)::int FROM comments WHERE tenant_id = $1 AND status = 'pending') AS pending,
                  (SELECT count(DISTINCT comment_id)::int FROM comment_reports WHERE tenant_id = $1 AND status = 'open') AS reported`,
          op.tenantId,
        );
        const oldest = counts!.pending
          ? await tx.$queryRawUnsafe<WaitingComment[]>(
              `SELECT coalesce(c.author_name, r.name, c.author_id) AS "authorName", c.body, d.title AS "discussionTitle"
                 FROM comments c
                 JOIN discussions d ON d.tenant_id = c.tenant_id AND d.id = c.discussion_id
                 LEFT JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
                WHERE c.tenant_id = $1 AND c.status = 'pending'
                ORDER BY c.created_at, c.id LIMIT 5`,
              op.tenantId,
            )
          : [];
        w = { ...counts!, oldest };
        waiting.set(op.tenantId, w);
      }
      if (w.pending + w.reported > 0 && deps.canSend(op.settings)) {
        const unsubscribeUrl = deps.unsubscribeUrl(op.tenantId, op.id);
        const m = renderModerationDigest({ tenantName: op.tenantName, ...w, consoleUrl: deps.consoleUrl, unsubscribeUrl });
        await tx.$executeRawUnsafe(
          queueingJobs(`INSERT INTO email_messages (id, tenant_id, operator_id, kind, to_address, subject, text_body, html_body,
                                       unsubscribe_url, item_count, state, created_at)
           VALUES ($1::uuid, $2, $3, 'moderation', $4, $5, $6, $7, $8, $9, $10, $11)`),
          randomUUID(),
          op.tenantId,
          op.id,
          op.email,
          m.subject,
          m.text,
          m.html,
          unsubscribeUrl,
          w.pending + w.reported,
          deps.outbox ? "outbox" : "queued",
          now,
        );
        written++;
      }
      const next = nextDigestAt(op.frequency, now, resolveSettings(op.settings).email.digestHour);
      await tx.$executeRawUnsafe(`UPDATE operators SET moderation_digest_due_at = $2 WHERE id = $1`, op.id, next);
    }
    return written;
  });
}
