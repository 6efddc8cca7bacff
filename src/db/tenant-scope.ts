// Tenant isolation in the data layer: a Prisma client extension that adds `tenantId` to every
// read/update/delete filter and stamps it on every create, for every tenant-owned model. Domain code
// and the Pothos prisma plugin (relations included) use this scoped client, so another tenant's row
// is simply not found (404), never forbidden. Its raw statements ($queryRaw, $executeRaw and the
// Unsafe forms) pass the tenant guard first (src/db/tenant-guard.ts): a statement that is not tied
// to the tenant's id (a parameter whose value is that id) is refused before it runs.
import type { PrismaClient } from "../generated/prisma/client.js";
import { guardedStatement } from "./guarded-statement.js";
import type { Replica } from "./replicas/replica-set.js";

export const TENANT_MODELS = new Set([
  "ApiKey",
  "Reader",
  "Discussion",
  "Comment",
  "CommentSearch",
  "CommentRenderBacklog",
  "SearchPosition",
  "Reaction",
  "PageReaction",
  "Vote",
  "Event",
  "StreamTicket",
  "WebhookEndpoint",
  "WebhookDelivery",
  "WebhookAttempt",
  "Operator",
  "ConsoleSession",
  "OperatorPasskey",
  "ConsoleLink",
  "AuditEntry",
  "CommentReport",
  "ReaderSanction",
  "ReaderSession",
  "ReaderPasskey",
  "SignInToken",
  "EmailItem",
  "EmailMessage",
  "InboxItem",
  "InboxCounter",
  "DiscussionSubscription",
  "Webmention",
  "BlueskyLink",
  "BlueskyReply",
  "BlueskySession",
  "FederationActor",
  "ReaderIdKey",
  "FederationFollower",
  "FederationDiscussion",
  "FederationObject",
  "Import",
  "ImportStagedComment",
  "ImportStagedDiscussion",
  "ImportStagedReader",
  "ImportStagedReaction",
  "ImportStagedVote",
  "ImportStagedPageReaction",
  "IdempotencyKey",
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
      // raw statements: the tenant's id must be among the values, and the statement tied to it
      async $queryRaw({ args, query }) {
        guardRawTemplate(args as unknown as RawTemplate, tenantId);
        return query(args);
      },
      async $executeRaw({ args, query }) {
        guardRawTemplate(args as unknown as RawTemplate, tenantId);
        return query(args);
      },
      async $queryRawUnsafe({ args, query }) {
        guardRawUnsafe(args as unknown as unknown[], tenantId);
        return query(args);
      },
      async $executeRawUnsafe({ args, query }) {
        guardRawUnsafe(args as unknown as unknown[], tenantId);
        return query(args);
      },
    },
  });
}

interface RawTemplate {
  strings: readonly string[];
  values: readonly unknown[];
}

/** The parameters whose value is the tenant's id. */
const tenantParams = (values: readonly unknown[], tenantId: string) => new Set(values.flatMap((v, i) => (v === tenantId ? [i + 1] : [])));

function guardRawTemplate(t: RawTemplate, tenantId: string): void {
  guardedStatement(
    t.strings.reduce((text, part, i) => (i === 0 ? part : `${text}$${i}${part}`), ""),
    tenantParams(t.values, tenantId),
  );
}

function guardRawUnsafe(args: readonly unknown[], tenantId: string): void {
  guardedStatement(String(args[0]), tenantParams(args.slice(1), tenantId));
}

export type ScopedPrisma = ReturnType<typeof scopeToTenant>;

/**
 * Scoped clients are cached per tenant: building an extension per request would be wasteful. The
 * primary's, and each read replica's (over its own Prisma client), are cached apart.
 */
export function createScopeCache(prisma: PrismaClient, max = 1000) {
  const caches = new Map<Replica | null, Map<string, ScopedPrisma>>();
  return (tenantId: string, replica: Replica | null = null): ScopedPrisma => {
    let cache = caches.get(replica);
    if (!cache) caches.set(replica, (cache = new Map()));
    let c = cache.get(tenantId);
    if (!c) {
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      c = scopeToTenant(replica?.prisma ?? prisma, tenantId);
      cache.set(tenantId, c);
    }
    return c;
  };
}

/** The client inside a scoped interactive transaction. */
export type ScopedTx = Omit<ScopedPrisma, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;
