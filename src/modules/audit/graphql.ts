// The audit trail over GraphQL: `auditLog` (admin JWT or console owner); a settings change's
// `changes` (field, from, to) typed from the entry's details.
import { builder } from "../../graphql/builder.js";
import { connectionPage, defineConnection, legacyPageArgs } from "../../graphql/page.js";
import type { AuditEntry } from "../../generated/prisma/client.js";
import { listAudit } from "./audit.js";

const AuditActor = builder.objectRef<AuditEntry>("AuditActor").implement({
  description:
    "Who acted: an operator of the console, an API key, the admin JWT's subject, a chat alert's link, or the system (auto-close).",
  fields: (t) => ({
    type: t.exposeString("actorType", { description: "operator | key | admin | alert_link | system" }),
    kind: t.exposeString("actorType", { description: "The same as type (contract section 21 names it kind)." }),
    id: t.exposeString("actorId", { description: "operator id, API key id, admin `sub`, or the alert job whose link acted" }),
    label: t.exposeString("actorLabel", {
      nullable: true,
      description: "the operator's email or the key's label, as it was then (null for the admin JWT and entries written before labels)",
    }),
  }),
});

const AuditResource = builder.objectRef<AuditEntry>("AuditResource").implement({
  fields: (t) => ({
    type: t.exposeString("resourceType"),
    id: t.exposeString("resourceId", { nullable: true }),
  }),
});

interface AuditChange {
  field: string;
  from: unknown;
  to: unknown;
}

const AuditChangeType = builder.objectRef<AuditChange>("AuditChange").implement({
  description: "One field an action changed, from what to what (a settings change names each field it changed).",
  fields: (t) => ({
    field: t.exposeString("field", { description: "e.g. `moderation`, or `delivery.maxAttempts` for a nested one" }),
    from: t.field({ type: "JSON", nullable: true, resolve: (c) => c.from ?? null }),
    to: t.field({ type: "JSON", nullable: true, resolve: (c) => c.to ?? null }),
  }),
});

/** The `changes` the entry's details recorded; none for actions that record none. */
function changesOf(e: AuditEntry): AuditChange[] {
  const details = e.details as { changes?: unknown } | null;
  if (!details || !Array.isArray(details.changes)) return [];
  return details.changes.filter(
    (c): c is AuditChange => typeof c === "object" && c !== null && typeof (c as { field?: unknown }).field === "string",
  );
}

export const AuditEntryType = builder.objectRef<AuditEntry>("AuditEntry").implement({
  fields: (t) => ({
    id: t.exposeID("id"),
    at: t.expose("createdAt", { type: "DateTime" }),
    actor: t.field({ type: AuditActor, resolve: (e) => e }),
    action: t.exposeString("action"),
    resource: t.field({ type: AuditResource, resolve: (e) => e }),
    details: t.field({ type: "JSON", nullable: true, resolve: (e) => e.details ?? null }),
    changes: t.field({
      type: [AuditChangeType],
      description: "What the action changed, field by field (settings.update); empty when the action records none.",
      resolve: changesOf,
    }),
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
