// Global object identification (Relay): `node(id:)` and `nodes(ids:)` fetch any object by its id,
// with the same rules as the object's own query (visibility, capabilities, tenant). An id names its
// type by its prefix (src/graphql/builder.ts typenameOfId); an id of nothing visible is null.
import { brandWithType } from "@pothos/core";
import { builder, typenameOfId } from "../graphql/builder.js";
import { db, type RequestContext } from "../context/request.js";
import { hasCapability } from "../auth/principal.js";
import { AppError, errors } from "../lib/errors.js";
import type { Capability } from "../auth/capabilities.js";
import { getComment } from "./comments/read.js";
import { getDiscussion } from "./discussions/discussions.js";
import { findEndpoint } from "./webhooks/endpoints.js";

function need(ctx: RequestContext, cap: Capability): void {
  if (!hasCapability(ctx.principal, cap)) throw errors.missingCapability(cap);
}

async function load(ctx: RequestContext, typename: string, id: string): Promise<object | null> {
  switch (typename) {
    case "Comment":
      return getComment(ctx, id);
    case "Discussion":
      return getDiscussion(ctx, id);
    case "WebhookEndpoint":
      need(ctx, "manage_webhooks");
      return findEndpoint(ctx, id);
    case "ApiKey":
    case "PublishableKey":
      need(ctx, "manage_api_keys");
      return db(ctx).apiKey.findFirst({ where: { id, kind: typename === "ApiKey" ? "secret" : "publishable" } });
    default:
      return null;
  }
}

/** The object, branded with its GraphQL type (the Node interface resolves by that brand), or null. */
async function loadNode(ctx: RequestContext, id: string): Promise<object | null> {
  const typename = typenameOfId(id);
  try {
    const obj = await load(ctx, typename, id);
    if (obj) brandWithType(obj, typename as never);
    return obj;
  } catch (err) {
    if (err instanceof AppError && (err.code === "not_found" || err.code === "validation_failed")) return null;
    throw err;
  }
}

builder.queryFields((t) => ({
  node: t.field({
    type: builder.nodeInterfaceRef(),
    nullable: true,
    description: "Any object by its id (Relay global object identification); null when there is none visible to the caller.",
    authScopes: { browser: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => loadNode(ctx, String(id)),
  }),
  nodes: t.field({
    type: [builder.nodeInterfaceRef()],
    nullable: { list: false, items: true },
    description: "Several objects by id, in the order asked (null where there is none visible); at most 100.",
    authScopes: { browser: true },
    args: { ids: t.arg.idList({ required: true }) },
    resolve: (_r, { ids }, ctx) => {
      if (ids.length > 100) throw errors.invalidParameter([{ path: "ids", message: "must name at most 100 objects" }]);
      return Promise.all(ids.map((id) => loadNode(ctx, String(id))));
    },
  }),
}));
