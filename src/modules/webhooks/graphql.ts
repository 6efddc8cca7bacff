// Webhook endpoints (manage_webhooks or the admin JWT; re-enable: admin JWT only). Resolvers call
// the domain (src/modules/webhooks/*.ts); the REST routes run these fields.
import { builder } from "../../graphql/builder.js";
import { connectionPage, defineConnection, legacyPageArgs } from "../../graphql/page.js";
import { createWebhook, deleteWebhook, enableWebhook, findEndpoint, listWebhooks, updateWebhook } from "./endpoints.js";
import { verifyEndpoint } from "./engine/verify.js";
import { rotateWebhookSecret, type RotatedSecret } from "./secret-rotation.js";
import { listAttempts, redeliver } from "./deliveries.js";
import type { HandshakeResult } from "../../outbound/handshake.js";
import { CreateWebhookInput, RedeliverInput, UpdateWebhookInput } from "./graphql-input-types.js";
import { standardWebhooksSecret } from "../../outbound/signature.js";

const WebhookState = builder.enumType("WebhookState", { values: ["active", "circuit_open", "disabled"] as const });

const PreviousKid = builder.objectRef<{ kid: string; validUntil: Date | null }>("WebhookPreviousKid").implement({
  description: "A replaced secret, still valid for verification until validUntil.",
  fields: (t) => ({
    kid: t.exposeString("kid"),
    validUntil: t.field({ type: "DateTime", resolve: (s) => s.validUntil ?? new Date(0) }),
  }),
});

export const WebhookEndpointType = builder.prismaObject("WebhookEndpoint", {
  interfaces: [builder.nodeInterfaceRef()],
  fields: (t) => ({
    webhookId: t.exposeID("id"),
    url: t.exposeString("url"),
    events: t.exposeStringList("events"),
    description: t.exposeString("description", { nullable: true }),
    verified: t.exposeBoolean("verified"),
    verifying: t.boolean({
      description: "a handshake is under way (after creation, a url change or verify); its outcome sets verified",
      select: { handshakeChallenge: true },
      resolve: (e) => e.handshakeChallenge !== null,
    }),
    state: t.expose("state", { type: WebhookState }),
    consecutiveFailures: t.exposeInt("consecutiveFailures", { description: "failed attempts in a row (0 after a success)" }),
    circuitOpenUntil: t.expose("circuitOpenUntil", { type: "DateTime", nullable: true }),
    kid: t.string({
      description: "kid of the secret that signs deliveries now",
      select: { secrets: { where: { validUntil: null }, select: { kid: true } } },
      resolve: (e) => e.secrets[0]?.kid ?? "",
    }),
    previousKids: t.field({
      type: [PreviousKid],
      description: "secrets replaced by a rotation that are still valid",
      select: (_args, ctx) => ({
        secrets: {
          where: { validUntil: { gt: ctx.app.clock.now() } },
          orderBy: { validUntil: "desc" },
          select: { kid: true, validUntil: true },
        },
      }),
      resolve: (e) => e.secrets,
    }),
    delivery: t.field({
      type: "JSON",
      description: "this endpoint's overrides of the tenant's delivery settings",
      resolve: (e) => e.delivery,
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const WebhookAttemptType = builder.prismaObject("WebhookAttempt", {
  fields: (t) => ({
    id: t.exposeID("id"),
    eventId: t.exposeString("eventId"),
    eventType: t.exposeString("eventType"),
    idempotencyKey: t.exposeString("idempotencyKey"),
    deliveryId: t.exposeString("deliveryId"),
    attempt: t.exposeInt("attempt"),
    statusCode: t.exposeInt("statusCode", { nullable: true }),
    durationMs: t.exposeInt("durationMs"),
    error: t.exposeString("error", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const WebhookEndpointConnection = defineConnection("WebhookEndpoint", WebhookEndpointType);
const WebhookAttemptConnection = defineConnection("WebhookAttempt", WebhookAttemptType);

const CreatedWebhook = builder.objectRef<Awaited<ReturnType<typeof createWebhook>>>("CreatedWebhook").implement({
  fields: (t) => ({
    endpoint: t.field({ type: WebhookEndpointType, resolve: (c) => c.endpoint }),
    secret: t.exposeString("secret", { description: "shown only here and at rotation" }),
    standardWebhooksSecret: t.string({
      description:
        "The same secret for Standard Webhooks receivers (`whsec_<base64 key>`, as the standardwebhooks and svix libraries take it).",
      resolve: (c) => standardWebhooksSecret(c.secret),
    }),
  }),
});

const WebhookVerification = builder.objectRef<HandshakeResult>("WebhookVerification").implement({
  fields: (t) => ({
    verified: t.exposeBoolean("verified"),
    error: t.string({ nullable: true, resolve: (r) => r.error ?? null }),
  }),
});

const RotatedWebhookSecret = builder.objectRef<RotatedSecret>("RotatedWebhookSecret").implement({
  fields: (t) => ({
    secret: t.exposeString("secret"),
    standardWebhooksSecret: t.string({ resolve: (r) => standardWebhooksSecret(r.secret) }),
    kid: t.exposeString("kid"),
    previousKidValidUntil: t.expose("previousKidValidUntil", { type: "DateTime" }),
  }),
});

const RedeliverResult = builder.objectRef<{ queued: number }>("WebhookRedelivery").implement({
  fields: (t) => ({ queued: t.exposeInt("queued") }),
});

const manage = { capability: "manage_webhooks" } as const;

builder.queryFields((t) => ({
  webhooks: t.connection(
    {
      type: WebhookEndpointType,
      authScopes: manage,
      args: legacyPageArgs(t.arg),
      resolve: (_r, args, ctx) => connectionPage(args, (page) => listWebhooks(ctx, page)),
    },
    WebhookEndpointConnection,
  ),
  webhook: t.field({
    type: WebhookEndpointType,
    authScopes: manage,
    args: { webhookId: t.arg.string({ required: true }) },
    resolve: (_r, { webhookId }, ctx) => findEndpoint(ctx, webhookId),
  }),
  webhookDeliveries: t.connection(
    {
      type: WebhookAttemptType,
      authScopes: manage,
      args: { webhookId: t.arg.string({ required: true }), ...legacyPageArgs(t.arg) },
      resolve: (_r, args, ctx) => connectionPage(args, (page) => listAttempts(ctx, args.webhookId, page)),
    },
    WebhookAttemptConnection,
  ),
}));

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: CreatedWebhook,
    authScopes: manage,
    args: { input: t.arg({ type: CreateWebhookInput, required: true }) },
    resolve: (_r, { input }, ctx) => createWebhook(ctx, input),
  }),
  updateWebhook: t.field({
    type: WebhookEndpointType,
    authScopes: manage,
    args: { webhookId: t.arg.string({ required: true }), input: t.arg({ type: UpdateWebhookInput, required: true }) },
    resolve: (_r, { webhookId, input }, ctx) => updateWebhook(ctx, webhookId, input),
  }),
  deleteWebhook: t.boolean({
    authScopes: manage,
    args: { webhookId: t.arg.string({ required: true }) },
    resolve: (_r, { webhookId }, ctx) => deleteWebhook(ctx, webhookId),
  }),
  verifyWebhookEndpoint: t.field({
    type: WebhookVerification,
    authScopes: manage,
    args: { webhookId: t.arg.string({ required: true }) },
    resolve: (_r, { webhookId }, ctx) => verifyEndpoint(ctx, webhookId),
  }),
  rotateWebhookSecret: t.field({
    type: RotatedWebhookSecret,
    authScopes: manage,
    args: { webhookId: t.arg.string({ required: true }) },
    resolve: (_r, { webhookId }, ctx) => rotateWebhookSecret(ctx, webhookId),
  }),
  redeliverWebhook: t.field({
    type: RedeliverResult,
    authScopes: manage,
    args: { webhookId: t.arg.string({ required: true }), input: t.arg({ type: RedeliverInput, required: true }) },
    resolve: (_r, { webhookId, input }, ctx) => redeliver(ctx, webhookId, input),
  }),
  enableWebhook: t.field({
    type: WebhookEndpointType,
    description: "Console only (admin JWT): re-enables a disabled endpoint and resets its failure count.",
    authScopes: { admin: true },
    args: { webhookId: t.arg.string({ required: true }) },
    resolve: (_r, { webhookId }, ctx) => enableWebhook(ctx, webhookId),
  }),
}));
