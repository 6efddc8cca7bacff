// The audit trail (contract section 10): who (operator, API key or admin JWT subject) did what to
// which resource, when. Recorded by the domain operations themselves right after their change
// commits, for REST, GraphQL and the console alike; listed newest first, filterable by actor and
// action, for the admin JWT and console owners. The actor's label is what a person recognises, as
// it was then: an operator's email, a key's label. A settings change names the fields it changed,
// from what to what (details.changes, written by settings.ts; `changes` on the GraphQL type).
import type { AuditEntry, Prisma } from "../../generated/prisma/client.js";
import { db, requirePrincipal, tenantIdOf, type RequestContext } from "../../context/request.js";
import { newId } from "../../lib/ids.js";
import { newestFirstPage, type Page, type PageArgs } from "../../lib/pagination.js";
import type { Principal } from "../../auth/principal.js";

export const AUDIT_ACTIONS = [
  "api_key.create",
  "api_key.revoke",
  "publishable_key.create",
  "publishable_key.revoke",
  "webhook.create",
  "webhook.update",
  "webhook.delete",
  "webhook.verify",
  "webhook.rotate_secret",
  "webhook.enable",
  "settings.update",
  "settings.rotate_identity_secret",
  "comment.approve",
  "comment.reject",
  "comment.pin",
  "comment.unpin",
  "comment.delete",
  "comment.reports.dismiss",
  /** a chat alert's link used that changed nothing: its alert's decision was made, the comment decided since, or the link expired */
  "alert_link.refused",
  "reader.ban",
  "reader.unban",
  "reader.erase",
  "reader.badge",
  "reader.trust",
  "discussion.lock",
  "discussion.unlock",
  "discussion.archive",
  /** announced to the fediverse by POST /discussions/{id}/federate (src/modules/federation/federate.ts) */
  "discussion.federate",
  /** every discussion with a url not yet announced, announced by POST /federation/announce (src/modules/federation/announce.ts) */
  "federation.announce",
  /** linked to a Bluesky post, or unlinked (PUT /discussions/{id} `bluesky`: src/modules/bluesky/links.ts) */
  "discussion.bluesky_link",
  /** posted from the site's Bluesky account and linked (POST /discussions/{id}/bluesky) */
  "discussion.bluesky_post",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export function actorOf(p: Principal, keyLabel: string | null = null): { actorType: string; actorId: string; actorLabel: string | null } {
  switch (p.kind) {
    case "operator":
      return { actorType: "operator", actorId: p.operatorId, actorLabel: p.email };
    case "admin":
      return { actorType: "admin", actorId: p.subject, actorLabel: null };
    case "alert_link":
      return { actorType: "alert_link", actorId: p.alertJobId, actorLabel: p.label };
    default:
      return { actorType: "key", actorId: p.keyId, actorLabel: keyLabel };
  }
}

/** The label of the key acting, as it is now (kept in the entry: a later revoke does not change it). */
async function keyLabelOf(ctx: RequestContext, p: Principal): Promise<string | null> {
  if (p.kind !== "key" && p.kind !== "publishable") return null;
  const key = await db(ctx).apiKey.findFirst({ where: { id: p.keyId }, select: { label: true } });
  return key?.label ?? null;
}

/** Records one action of the request's caller. */
export async function recordAudit(
  ctx: RequestContext,
  action: AuditAction,
  resource: { type: string; id: string | null },
  details?: Record<string, unknown>,
): Promise<void> {
  const principal = requirePrincipal(ctx);
  const keyLabel = await keyLabelOf(ctx, principal);
  await db(ctx).auditEntry.create({
    data: {
      id: newId("aud"),
      tenantId: principal.tenantId,
      createdAt: ctx.app.clock.now(),
      ...actorOf(principal, keyLabel),
      action,
      resourceType: resource.type,
      resourceId: resource.id,
      ...(details ? { details: details as Prisma.InputJsonValue } : {}),
    },
  });
}

/** Newest first; `actor` matches the actor id or label, `action` an action or a prefix such as `webhook.`. */
export async function listAudit(
  ctx: RequestContext,
  args: PageArgs & { actor?: string | null; action?: string | null },
): Promise<Page<AuditEntry>> {
  tenantIdOf(ctx);
  const where: Prisma.AuditEntryWhereInput = {
    ...(args.actor ? { OR: [{ actorId: args.actor }, { actorLabel: args.actor }] } : {}),
    ...(args.action ? (args.action.endsWith(".") ? { action: { startsWith: args.action } } : { action: args.action }) : {}),
  };
  return newestFirstPage(args, (q) => db(ctx).auditEntry.findMany({ ...q, where: { AND: [where, q.where] } }));
}
