// Webhook endpoints (contract §0 "Webhooks", §4 "Webhooks"): manage_webhooks or the admin JWT
// (authScopes on the fields); /admin/webhooks/{id}/enable takes the admin JWT only.
import { bodyObject, route } from "../../http/rest/router.js";
import { int, str } from "../../http/rest/params.js";
import {
  RestCreateWebhookDocument,
  RestDeleteWebhookDocument,
  RestEnableWebhookDocument,
  RestGetWebhookDocument,
  RestListWebhooksDocument,
  RestRedeliverWebhookDocument,
  RestRotateWebhookSecretDocument,
  RestUpdateWebhookDocument,
  RestVerifyWebhookDocument,
  RestWebhookDeliveriesDocument,
  type CreateWebhookInput,
  type RedeliverWebhookInput,
  type UpdateWebhookInput,
} from "../../generated/operations.js";

const byId = (p: Record<string, string>) => ({ webhookId: p.webhookId ?? "" });
const page = (q: Parameters<typeof int>[0]) => ({ limit: int(q, "limit"), cursor: str(q, "cursor") });

export const webhookRoutes = [
  route({
    method: "POST",
    path: "/webhooks",
    document: RestCreateWebhookDocument,
    variables: ({ body }) => ({ input: bodyObject(body) as CreateWebhookInput }),
    respond: ({ createWebhook: { endpoint, secret, standardWebhooksSecret } }) => {
      const { webhookId, url, events, description, verified, state, kid, ...rest } = endpoint;
      return { webhookId, url, events, description, verified, state, secret, standardWebhooksSecret, kid, ...rest };
    },
    response: (s) =>
      s.merge(
        s.at("createWebhook.endpoint"),
        s.object({ secret: s.at("createWebhook.secret"), standardWebhooksSecret: s.at("createWebhook.standardWebhooksSecret") }),
      ),
    status: 201,
  }),
  route({
    method: "GET",
    path: "/webhooks",
    document: RestListWebhooksDocument,
    variables: ({ query }) => page(query),
    paramVars: ["limit", "cursor"],
    respond: (d) => d.webhooks,
  }),
  route({
    method: "GET",
    path: "/webhooks/:webhookId",
    document: RestGetWebhookDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["webhookId"],
    respond: (d) => d.webhook,
  }),
  route({
    method: "PATCH",
    path: "/webhooks/:webhookId",
    document: RestUpdateWebhookDocument,
    variables: ({ params, body }) => ({ ...byId(params), input: bodyObject(body) as UpdateWebhookInput }),
    paramVars: ["webhookId"],
    respond: (d) => d.updateWebhook,
  }),
  route({
    method: "DELETE",
    path: "/webhooks/:webhookId",
    document: RestDeleteWebhookDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["webhookId"],
    respond: () => undefined,
  }),
  route({
    method: "POST",
    path: "/webhooks/:webhookId/verify",
    document: RestVerifyWebhookDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["webhookId"],
    respond: ({ verifyWebhookEndpoint: { verified, error } }) => (error ? { verified, error } : { verified }),
  }),
  route({
    method: "POST",
    path: "/webhooks/:webhookId/rotate-secret",
    document: RestRotateWebhookSecretDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["webhookId"],
    respond: (d) => d.rotateWebhookSecret,
  }),
  route({
    method: "GET",
    path: "/webhooks/:webhookId/deliveries",
    document: RestWebhookDeliveriesDocument,
    variables: ({ params, query }) => ({ ...byId(params), ...page(query) }),
    paramVars: ["webhookId", "limit", "cursor"],
    respond: (d) => d.webhookDeliveries,
  }),
  route({
    method: "POST",
    path: "/webhooks/:webhookId/redeliver",
    document: RestRedeliverWebhookDocument,
    variables: ({ params, body }) => ({ ...byId(params), input: bodyObject(body) as RedeliverWebhookInput }),
    paramVars: ["webhookId"],
    respond: (d) => d.redeliverWebhook,
    status: 202,
  }),
  route({
    method: "POST",
    path: "/admin/webhooks/:webhookId/enable",
    document: RestEnableWebhookDocument,
    variables: ({ params }) => byId(params),
    paramVars: ["webhookId"],
    respond: (d) => d.enableWebhook,
    adminOnly: true,
  }),
];
