// What a chat alert's link does (contract section 21): opening it (GET) reads the link and the comment
// and changes nothing — link unfurlers and mail scanners fetch GETs; its form's POST decides. An
// alert's Approve and Reject links are one decision, made once: the POST's one statement
// (eng_decide_by_alert_link, under the discussion's lock) spends both of them and, only if the comment
// is still at the revision its alert was queued at, approves or rejects it as a moderator would
// (eng_set_comment_status: events, counts, Akismet's feedback), acting as the link (actor
// `alert_link`, its id the alert job's) — so of two uses at once, on any instances, one decides. A
// link whose decision was made (by it or the other link: 410 alert_link_used), whose comment was
// decided since (a moderator, another alert's link, an edit, a deletion: 409 alert_link_decided) or
// that expired (410) changes nothing, says what became of the comment and who decided it
// (decided.ts), and is audited as `alert_link.refused`. If the action refuses (the discussion
// archived), the statement is rolled back: nothing is spent.
// Under engine/: the tenant comes from the token, not from a key's request context.
import type { AppServices } from "../../../context/services.js";
import { contextForTenant, store as storeOf, type RequestContext } from "../../../context/request.js";
import type { Tenant } from "../../../generated/prisma/client.js";
import { tenantRow } from "../../../auth/auth-cache.js";
import { AppError, errors } from "../../../lib/errors.js";
import { recordAudit } from "../../audit/audit.js";
import { auditCommentStatus } from "../../moderation/moderation.js";
import { commentFromRow, type CommentWithAuthor } from "../../comments/dto.js";
import { readCommentSubject, type CommentSubject } from "../../comments/engine/subject.js";
import { readAlertLink, tenantOfToken, type AlertLinkData, type StoredAlertLink } from "./links.js";
import { describeDecided } from "./decided.js";

/** The tenant a token names; alert_link_unknown for no token or no such tenant. */
async function tenantOf(app: AppServices, token: string): Promise<Tenant> {
  const tenantId = tenantOfToken(token);
  const tenant = tenantId === null ? null : await tenantRow(app, tenantId);
  if (!tenant) throw errors.alertLinkUnknown();
  return tenant;
}

const CHATS = { slack: "Slack", discord: "Discord" } as const;

/** The request context of a link's use: the link acting as a moderator of its tenant. */
const linkContext = (app: AppServices, tenant: Tenant, link: AlertLinkData): RequestContext =>
  contextForTenant(app, tenant, {
    kind: "alert_link",
    alertJobId: link.jobId,
    label: `${CHATS[link.chat]} alert`,
    capabilities: new Set(["moderate_content"]),
  });

/** The revision a link acts on (0 for a link made before revisions were kept). */
const revisionOf = (link: AlertLinkData): number => link.revision ?? 0;

/** When its alert was queued: what decided the comment is looked for from then. */
const queuedAt = (stored: StoredAlertLink): Date => (stored.data.queuedAt ? new Date(stored.data.queuedAt) : stored.createdAt);

/** Whether the comment was decided since the link's alert was queued (or is gone). */
const decidedSince = (link: AlertLinkData, comment: CommentSubject | null): boolean =>
  !comment || comment.status === "deleted" || comment.revision !== revisionOf(link);

/**
 * Why the link cannot act, as the problem its page shows, with who decided: null when it can. `spent`:
 * this request spent the decision (the comment was decided since, so nothing else was done).
 */
async function refusalOf(
  ctx: RequestContext,
  stored: StoredAlertLink,
  comment: CommentSubject | null,
  now: Date,
  spent = false,
): Promise<{ error: AppError; by: string | null } | null> {
  if (!spent && stored.usedAt !== null) {
    const decided = await describeDecided(ctx, stored.data, comment, queuedAt(stored));
    return { error: errors.alertLinkUsed(stored.usedAt, decided.sentence), by: decided.by };
  }
  if (!spent && stored.expiresAt.getTime() <= now.getTime()) return { error: errors.alertLinkExpired(stored.expiresAt), by: null };
  if (spent || decidedSince(stored.data, comment)) {
    const decided = await describeDecided(ctx, stored.data, comment, queuedAt(stored));
    return { error: errors.alertLinkDecided(decided.sentence), by: decided.by };
  }
  return null;
}

export interface OpenedAlertLink {
  link: AlertLinkData;
  comment: CommentSubject;
  expiresAt: Date;
}

/** GET: the link, if it can still decide, and its comment as it is now. Reads only. */
export async function viewAlertLink(app: AppServices, token: string): Promise<OpenedAlertLink & { tenant: Tenant }> {
  const tenant = await tenantOf(app, token);
  const store = app.stores(tenant.id);
  const stored = await readAlertLink(store, app.adminJwtSecret, tenant.id, token);
  const comment = await readCommentSubject(store, stored.data.commentId);
  const refusal = await refusalOf(linkContext(app, tenant, stored.data), stored, comment, app.clock.now());
  if (refusal) throw refusal.error;
  return { tenant, link: stored.data, comment: comment!, expiresAt: stored.expiresAt };
}

/** POST: decides (once for the alert's two links) and acts; the comment after the action. */
export async function useAlertLink(app: AppServices, token: string): Promise<{ link: AlertLinkData; comment: CommentWithAuthor }> {
  const tenant = await tenantOf(app, token);
  const store = app.stores(tenant.id);
  const now = app.clock.now();
  const stored = await readAlertLink(store, app.adminJwtSecret, tenant.id, token);
  const link = stored.data;
  const ctx = linkContext(app, tenant, link);
  const to = link.action === "approve" ? "approved" : "rejected";
  let spent = false;
  try {
    // the link's context is its tenant's: the store binds that tenant's id
    const row = await storeOf(ctx).write("eng_decide_by_alert_link", {
      id: link.commentId,
      to,
      revision: revisionOf(link),
      link: stored.hash,
      links: [stored.hashes.approve, stored.hashes.reject],
      at: now,
    });
    if (row.acted) {
      await auditCommentStatus(ctx, row.comment, to);
      return { link, comment: commentFromRow(row.comment) };
    }
    spent = row.spent;
  } catch (err) {
    // the comment is gone (its reader's data erased): nothing was spent or done
    if (!(err instanceof AppError && err.code === "not_found")) throw err;
  }
  // nothing changed: why, from the link and the comment as they are now; audited as the link's use
  const after = await readAlertLink(store, app.adminJwtSecret, tenant.id, token);
  const comment = await readCommentSubject(store, link.commentId);
  const refusal = (await refusalOf(ctx, after, comment, now, spent)) ?? {
    error: errors.alertLinkUsed(after.usedAt ?? now),
    by: null,
  };
  await recordAudit(
    ctx,
    "alert_link.refused",
    { type: "comment", id: link.commentId },
    { action: link.action, code: refusal.error.code, status: comment?.status ?? "deleted", decidedBy: refusal.by },
  );
  throw refusal.error;
}
