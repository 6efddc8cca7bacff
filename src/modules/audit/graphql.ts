// The audit trail over GraphQL: `auditLog` (admin JWT or console owner).
import { builder } from "../../graphql/builder.js";
import { connectionPage, defineConnection, legacyPageArgs } from "../../graphql/page.js";
import type { AuditEntry } from "../../generated/prisma/client.js";
import { listAudit } from "./audit.js";

const AuditActor = builder.objectRef<AuditEntry>("AuditActor").implement({
  description: "Who acted: an operator of the console, an API key, or the admin JWT's subject.",
  fields: (t) => ({
    type: t.exposeString("actorType", { description: "operator | key | admin" }),
    id: t.exposeString("actorId", { description: "operator id, API key id or admin `sub`" }),
    label: t.exposeString("actorLabel", { nullable: true, description: "the operator's email" }),
  }),
});

const AuditResource = builder.objectRef<AuditEntry>("AuditResource").implement({
  fields: (t) => ({
    type: t.exposeString("resourceType"),
    id: t.exposeString("resourceId", { nullable: true }),
  }),
});

export const AuditEntryType = builder.objectRef<AuditEntry>("AuditEntry").implement({
  fields: (t) => ({
    id: t.exposeID("id"),
    at: t.expose("createdAt", { type: "DateTime" }),
    actor: t.field({ type: AuditActor, resolve: (e) => e }),
    action: t.exposeString("action"),
    resource: t.field({ type: AuditResource, resolve: (e) => e }),
    details: t.field({ type: "JSON", nullable: true, resolve: (e) => e.details ?? null }),
  }),
});

const AuditConnection = defineConnection("AuditEntry", AuditEntryType);

builder.queryField("auditLog", (t) =>
  t.connection(
    {
      type: AuditEntryType,
      description:
        "Who did what to which resource, newest first; `actor` is an id or an operator's email, `action` an action or a prefix ending in `.`.",
      authScopes: { admin: true },
      args: { actor: t.arg.string(), action: t.arg.string(), ...legacyPageArgs(t.arg) },
      resolve: (_r, args, ctx) => connectionPage(args, (page) => listAudit(ctx, { actor: args.actor, action: args.action, ...page })),
    },
    AuditConnection,
  ),
);
