// Tenant isolation in the data layer: a Prisma client extension that adds `tenantId` to every
// read/update/delete filter and stamps it on every create, for every tenant-owned model. Domain code
// and the Pothos prisma plugin (relations included) use this scoped client, so another tenant's row
// is simply not found (404), never forbidden.
import type { PrismaClient } from "../generated/prisma/client.js";

const TENANT_MODELS = new Set([
  "ApiKey",
  "Reader",
  "Discussion",
  "Comment",
  "Reaction",
  "Event",
  "StreamTicket",
  "WebhookEndpoint",
  "WebhookDelivery",
  "WebhookAttempt",
  "Operator",
  "ConsoleSession",
  "ConsoleLink",
  "AuditEntry",
  "CommentReport",
  "ReaderSanction",
  "EmailItem",
  "EmailMessage",
  "ImportStagedComment",
  "ImportStagedReaction",
]);

const FILTERED = new Set([
  "findUnique",
  "findUniqueOrThrow",
  "findFirst",
  "findFirstOrThrow",
  "findMany",
  "count",
  "aggregate",
  "groupBy",
  "update",
  "updateMany",
  "updateManyAndReturn",
  "delete",
  "deleteMany",
  "upsert",
]);

type Args = Record<string, unknown> & { where?: Record<string, unknown>; data?: unknown; create?: unknown };

function stamp(data: unknown, tenantId: string): unknown {
  if (Array.isArray(data)) return data.map((d) => stamp(d, tenantId));
  if (data && typeof data === "object") {
    const d = data as Record<string, unknown>;
    if (d.tenantId !== undefined && d.tenantId !== tenantId) throw new Error("tenant-scope: cross-tenant write refused");
    // Writes that connect the tenant relation instead of setting the scalar are left as they are.
    return "tenant" in d ? d : { ...d, tenantId };
  }
  return data;
}

export function scopeToTenant(prisma: PrismaClient, tenantId: string) {
  return prisma.$extends({
    name: "tenant-scope",
    query: {
      $allModels: {
        async $allOperations({ model, operation, args, query }) {
          const a = { ...(args as Args) };
          if (model === "Tenant") {
            if (FILTERED.has(operation)) a.where = { ...(a.where ?? {}), id: tenantId };
            return query(a);
          }
          if (!TENANT_MODELS.has(model)) return query(a);
          if (FILTERED.has(operation)) a.where = { ...(a.where ?? {}), tenantId };
          if (operation === "create" || operation === "createMany" || operation === "createManyAndReturn") {
            a.data = stamp(a.data, tenantId);
          }
          if (operation === "upsert") a.create = stamp(a.create, tenantId);
          return query(a);
        },
      },
    },
  });
}

export type ScopedPrisma = ReturnType<typeof scopeToTenant>;

/** Scoped clients are cached per tenant: building an extension per request would be wasteful. */
export function createScopeCache(prisma: PrismaClient, max = 1000) {
  const cache = new Map<string, ScopedPrisma>();
  return (tenantId: string): ScopedPrisma => {
    let c = cache.get(tenantId);
    if (!c) {
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      c = scopeToTenant(prisma, tenantId);
      cache.set(tenantId, c);
    }
    return c;
  };
}

/** The client inside a scoped interactive transaction. */
export type ScopedTx = Omit<ScopedPrisma, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;
