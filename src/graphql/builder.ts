// The one Pothos builder: every plugin is configured here. Capabilities are enforced by scope-auth
// (authScopes on fields), for GraphQL and for REST alike, since REST routes execute these fields.
import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import ScopeAuthPlugin, { AuthScopeFailureType, type AuthFailure } from "@pothos/plugin-scope-auth";
import RelayPlugin from "@pothos/plugin-relay";
import { GraphQLScalarType, Kind, type ValueNode } from "graphql";
import type PrismaTypes from "../generated/pothos-prisma-types.js";
import { getDatamodel } from "../generated/pothos-prisma-types.js";
import type { Capability } from "../auth/capabilities.js";
import { hasCapability, isAdmin } from "../auth/principal.js";
import { db, type RequestContext } from "../context/request.js";
import { errors } from "../lib/errors.js";
import { inTimeRange, TIME_RANGE_RULE } from "../lib/timestamps.js";

/** The GraphQL type an id names, by its prefix (discussion ids are the tenant's own, unprefixed). */
export function typenameOfId(id: string): string {
  if (id.startsWith("cmt_")) return "Comment";
  if (id.startsWith("wh_")) return "WebhookEndpoint";
  if (id.startsWith("key_")) return "ApiKey";
  if (id.startsWith("pkey_")) return "PublishableKey";
  return "Discussion";
}

export interface AuthScopes {
  /** a backend's API key or the admin JWT (not a publishable key) */
  authenticated: boolean;
  /** any caller, a browser's publishable key included: reads, reader actions, stream tickets (contract section 7) */
  browser: boolean;
  /** the admin console's JWT only */
  admin: boolean;
  /** admin JWT, or a key holding this capability */
  capability: Capability;
}

/** The capability a failed check asked for, so the 403 can name it (`required`). */
function requiredCapability(f: AuthFailure): Capability | undefined {
  if (f.kind === AuthScopeFailureType.AuthScope && f.scope === "capability") return f.parameter as Capability;
  if (f.kind === AuthScopeFailureType.AnyAuthScopes || f.kind === AuthScopeFailureType.AllAuthScopes) {
    for (const c of f.failures) {
      const r = requiredCapability(c);
      if (r) return r;
    }
  }
  return undefined;
}

function needsAdmin(f: AuthFailure): boolean {
  if (f.kind === AuthScopeFailureType.AuthScope) return f.scope === "admin";
  if (f.kind === AuthScopeFailureType.AllAuthScopes) return f.failures.some(needsAdmin);
  if (f.kind === AuthScopeFailureType.AnyAuthScopes) return f.failures.every(needsAdmin);
  return false;
}

function parseLiteralJson(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, parseLiteralJson(f.value)]));
    case Kind.LIST:
      return ast.values.map(parseLiteralJson);
    default:
      return null;
  }
}

export const JSONScalar = new GraphQLScalarType({
  name: "JSON",
  description: "Any JSON value (used for maps such as reaction counts).",
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: parseLiteralJson,
});

export const builder = new SchemaBuilder<{
  Context: RequestContext;
  PrismaTypes: PrismaTypes;
  AuthScopes: AuthScopes;
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [ScopeAuthPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  // Relay connections and global object identification. Our ids are already unique and typed by
  // their prefix (cmt_, wh_, key_, pkey_; anything else is a discussion id), so a global id is the
  // id itself: REST and GraphQL name every object alike. `node(id:)` is src/modules/node.ts.
  relay: {
    clientMutationId: "omit",
    cursorType: "String",
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
    encodeGlobalID: (_typename, id) => String(id),
    decodeGlobalID: (globalID) => ({ typename: typenameOfId(globalID), id: globalID }),
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
  prisma: {
    client: (ctx) => db(ctx) as unknown as RequestContext["app"]["prisma"],
    dmmf: getDatamodel(),
    filterConnectionTotalCount: true,
    onUnusedQuery: null,
  },
  scopeAuth: {
    authScopes: (ctx) => ({
      authenticated: !!ctx.principal && ctx.principal.kind !== "publishable",
      browser: !!ctx.principal,
      admin: isAdmin(ctx.principal),
      capability: (cap: Capability) => hasCapability(ctx.principal, cap),
    }),
    unauthorizedError: (_parent, ctx, _info, result) => {
      if (!ctx.principal) return errors.unauthenticated();
      // a publishable key may do only what browsers do: anything else is a missing capability
      if (ctx.principal.kind === "publishable") return errors.missingCapability(requiredCapability(result.failure) ?? "secret_key");
      // a console moderator is signed in, just not an owner
      if (ctx.principal.kind === "operator" && needsAdmin(result.failure)) return errors.missingCapability("owner");
      if (needsAdmin(result.failure)) {
        return errors.unauthenticated("This operation takes the admin console's JWT (Authorization: Bearer).");
      }
      const cap = requiredCapability(result.failure);
      return cap ? errors.missingCapability(cap) : errors.unauthenticated();
    },
  },
});

builder.addScalarType("JSON", JSONScalar);
builder.scalarType("DateTime", {
  description: "ISO 8601 UTC timestamp with milliseconds.",
  serialize: (v) => (v instanceof Date ? v.toISOString() : new Date(v).toISOString()),
  parseValue: (v) => {
    const d = typeof v === "string" ? new Date(v) : null;
    if (!d || Number.isNaN(d.getTime())) throw new TypeError("must be an ISO 8601 timestamp");
    if (!inTimeRange(d)) throw new TypeError(TIME_RANGE_RULE);
    return d;
  },
});

builder.queryType({});
builder.mutationType({});
