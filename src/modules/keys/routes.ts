// API keys (contract §0, §4). /admin/* variants take the admin JWT only; the rest take a key with
// manage_api_keys or the admin JWT (authScopes on the fields). Both creation routes run one mutation.
import { bodyObject, route } from "../../http/rest/router.js";
import { int, str } from "../../http/rest/params.js";
import {
  RestCreateApiKeyDocument,
  RestCreatePublishableKeyDocument,
  RestListApiKeysDocument,
  RestListPublishableKeysDocument,
  RestRevokeApiKeyDocument,
  RestRevokePublishableKeyDocument,
  type CreateApiKeyInput,
  type CreatePublishableKeyInput,
} from "../../generated/operations.js";

const createKey = (path: string, adminOnly: boolean) =>
  route({
    method: "POST",
    path,
    document: RestCreateApiKeyDocument,
    variables: ({ body }) => ({ input: bodyObject(body) as CreateApiKeyInput }),
    respond: ({ createApiKey: { key, apiKey } }) => ({
      id: apiKey.id,
      key,
      prefix: apiKey.prefix,
      label: apiKey.label,
      capabilities: apiKey.capabilities,
      expiresAt: apiKey.expiresAt,
      createdAt: apiKey.createdAt,
    }),
    response: (s) => s.merge(s.object({ key: s.at("createApiKey.key") }), s.at("createApiKey.apiKey")),
    status: 201,
    adminOnly,
  });

const revokeKey = (path: string, adminOnly: boolean) =>
  route({
    method: "DELETE",
    path,
    document: RestRevokeApiKeyDocument,
    variables: ({ params }) => ({ id: params.id ?? "" }),
    paramVars: ["id"],
    respond: () => undefined,
    adminOnly,
  });

export const keyRoutes = [
  createKey("/admin/keys", true),
  createKey("/keys", false),
  route({
    method: "GET",
    path: "/keys",
    document: RestListApiKeysDocument,
    variables: ({ query }) => ({ limit: int(query, "limit"), cursor: str(query, "cursor") }),
    paramVars: ["limit", "cursor"],
    respond: (d) => d.apiKeys,
  }),
  revokeKey("/admin/keys/:id", true),
  revokeKey("/keys/:id", false),
  // publishable keys (contract section 7): manage_api_keys or the admin JWT
  route({
    method: "POST",
    path: "/publishable-keys",
    document: RestCreatePublishableKeyDocument,
    variables: ({ body }) => ({ input: bodyObject(body) as CreatePublishableKeyInput }),
    respond: ({ createPublishableKey: { key, publishableKey: k } }) => ({
      id: k.id,
      key,
      prefix: k.prefix,
      label: k.label,
      createdAt: k.createdAt,
    }),
    response: (s) => s.merge(s.object({ key: s.at("createPublishableKey.key") }), s.at("createPublishableKey.publishableKey")),
    status: 201,
  }),
  route({
    method: "GET",
    path: "/publishable-keys",
    document: RestListPublishableKeysDocument,
    variables: ({ query }) => ({ limit: int(query, "limit"), cursor: str(query, "cursor") }),
    paramVars: ["limit", "cursor"],
    respond: (d) => d.publishableKeys,
  }),
  route({
    method: "DELETE",
    path: "/publishable-keys/:id",
    document: RestRevokePublishableKeyDocument,
    variables: ({ params }) => ({ id: params.id ?? "" }),
    paramVars: ["id"],
    respond: () => undefined,
  }),
];
