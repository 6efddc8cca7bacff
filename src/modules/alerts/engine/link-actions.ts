// What a chat alert's link does (contract section 21): opening it (GET) reads the link and the comment
// and changes nothing — link unfurlers and mail scanners fetch GETs; its form's POST spends the link
// (once, on every instance) and approves or rejects the comment as a moderator would, through the
// moderation's own rule (src/modules/moderation/moderation.ts: events, counts, Akismet's feedback, the
// audit entry), acting as the link (actor `alert_link`, its id the alert job's). If the action fails
// (the comment deleted, its discussion archived), the link is given back: nothing changed.
// Under engine/: the tenant comes from the token, not from a key's request context.
import type { AppServices } from "../../../context/services.js";
import type { RequestContext } from "../../../context/request.js";
import type { Tenant } from "../../../generated/prisma/client.js";
import { tenantRow } from "../../../auth/auth-cache.js";
import { errors } from "../../../lib/errors.js";
import { setCommentStatus } from "../../moderation/moderation.js";
import type { CommentWithAuthor } from "../../comments/dto.js";
import { openAlertLink, restoreAlertLink, spendAlertLink, tenantOfToken, type AlertLinkData } from "./links.js";
import { readCommentSubject, type CommentSubject } from "../../comments/engine/subject.js";

/** The tenant a token names; alert_link_unknown for no token or no such tenant. */
async function tenantOf(app: AppServices, token: string): Promise<Tenant> {
  const tenantId = tenantOfToken(token);
  const tenant = tenantId === null ? null : await tenantRow(app, tenantId);
  if (!tenant) throw errors.alertLinkUnknown();
  return tenant;
}

export interface OpenedAlertLink {
  link: AlertLinkData;
  comment: CommentSubject;
  expiresAt: Date;
}

/** GET: the link, if it can still be used, and its comment as it is now. Reads only. */
export async function viewAlertLink(app: AppServices, token: string): Promise<OpenedAlertLink & { tenant: Tenant }> {
  const tenant = await tenantOf(app, token);
  const store = app.stores(tenant.id);
  const { data: link, expiresAt } = await openAlertLink(store, token, app.clock.now());
  const comment = await readCommentSubject(store, link.commentId);
  if (!comment || comment.status === "deleted") throw errors.notFound("Comment");
  return { tenant, link, comment, expiresAt };
}

const CHATS = { slack: "Slack", discord: "Discord" } as const;

/** POST: spends the link and acts; the comment after the action. */
export async function useAlertLink(app: AppServices, token: string): Promise<{ link: AlertLinkData; comment: CommentWithAuthor }> {
  const tenant = await tenantOf(app, token);
  const store = app.stores(tenant.id);
  const now = app.clock.now();
  const link = await spendAlertLink(store, token, now);
  const ctx: RequestContext = {
    app,
    principal: {
      kind: "alert_link",
      tenantId: tenant.id,
      alertJobId: link.jobId,
      label: `${CHATS[link.chat]} alert`,
      capabilities: new Set(["moderate_content"]),
    },
    identityToken: null,
    cache: { tenant: Promise.resolve(tenant) },
  };
  try {
    const comment = await setCommentStatus(ctx, link.commentId, link.action === "approve" ? "approved" : "rejected");
    return { link, comment };
  } catch (err) {
    await restoreAlertLink(store, token, now).catch((e: unknown) => app.log.warn({ err: e }, "an alert link could not be given back"));
    throw err;
  }
}
