// API keys: create (manage_api_keys; the admin JWT holds every capability), list, revoke.
import { builder } from "../../graphql/builder.js";
import { connectionPage, defineConnection, legacyPageArgs } from "../../graphql/page.js";
import { CAPABILITIES, isCapability } from "../../auth/capabilities.js";
import { keyState } from "../../auth/key-auth.js";
import { createApiKey, createPublishableKey, listApiKeys, revokeApiKey, type CreatedApiKey } from "./keys.js";

export const CapabilityEnum = builder.enumType("Capability", { values: CAPABILITIES });
const ApiKeyState = builder.enumType("ApiKeyState", { values: ["active", "expired", "revoked"] as const });

/** A key as listed: never the raw value nor its hash. */
export const ApiKeyType = builder.prismaObject("ApiKey", {
  interfaces: [builder.nodeInterfaceRef()],
  fields: (t) => ({
    id: t.exposeID("id"),
    label: t.exposeString("label"),
    prefix: t.exposeString("prefix", { description: "The first 12 characters of the key." }),
    capabilities: t.field({ type: [CapabilityEnum], resolve: (k) => k.capabilities.filter(isCapability) }),
    state: t.field({ type: ApiKeyState, resolve: (k, _a, ctx) => keyState(k, ctx.app.clock.now()) }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", nullable: true }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true }),
    lastUsedAt: t.expose("lastUsedAt", { type: "DateTime", nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const ApiKeyConnection = defineConnection("ApiKey", ApiKeyType);

const CreateApiKeyInput = builder.inputType("CreateApiKeyInput", {
  fields: (t) => ({
    label: t.string({ required: true, description: "1–100 characters." }),
    capabilities: t.stringList({ required: false, description: "Capability names; default none. Only ones the caller holds." }),
    expiresAt: t.string({ required: false, description: "ISO 8601, in the future; null = never." }),
  }),
});

const CreateApiKeyPayload = builder.objectRef<CreatedApiKey>("CreateApiKeyPayload").implement({
  fields: (t) => ({
    key: t.exposeString("key", { description: "The raw key: shown here once, unrecoverable afterwards." }),
    apiKey: t.field({ type: ApiKeyType, resolve: (p) => p.apiKey }),
  }),
});

builder.queryField("apiKeys", (t) =>
  t.connection(
    {
      type: ApiKeyType,
      authScopes: { capability: "manage_api_keys" },
      args: legacyPageArgs(t.arg),
      resolve: (_r, args, ctx) => connectionPage(args, (page) => listApiKeys(ctx, page)),
    },
    ApiKeyConnection,
  ),
);

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreateApiKeyPayload,
    authScopes: { capability: "manage_api_keys" },
    args: { input: t.arg({ type: CreateApiKeyInput, required: true }) },
    resolve: (_r, { input }, ctx) => createApiKey(ctx, input),
  }),
  revokeApiKey: t.field({
    type: ApiKeyType,
    authScopes: { capability: "manage_api_keys" },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_r, { id }, ctx) => revokeApiKey(ctx, id),
  }),
}));

/** A publishable key (`pk_`, contract section 7): for browsers, no capability, no expiry. */
export const PublishableKeyType = builder.prismaObject("ApiKey", {
  variant: "PublishableKey",
  interfaces: [builder.nodeInterfaceRef()],
  fields: (t) => ({
    id: t.exposeID("id"),
    label: t.exposeString("label"),
    prefix: t.exposeString("prefix", { description: "The first 12 characters of the key." }),
    state: t.field({ type: ApiKeyState, resolve: (k, _a, ctx) => keyState(k, ctx.app.clock.now()) }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true }),
    lastUsedAt: t.expose("lastUsedAt", { type: "DateTime", nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const PublishableKeyConnection = defineConnection("PublishableKey", PublishableKeyType);

const CreatePublishableKeyInput = builder.inputType("CreatePublishableKeyInput", {
  fields: (t) => ({ label: t.string({ required: true, description: "1–100 characters." }) }),
});

const CreatePublishableKeyPayload = builder.objectRef<CreatedApiKey>("CreatePublishableKeyPayload").implement({
  fields: (t) => ({
    key: t.exposeString("key", {
      description: "The raw `pk_` key: shown here once (it is meant for pages, but is still not listed again).",
    }),
    publishableKey: t.field({ type: PublishableKeyType, resolve: (p) => p.apiKey }),
  }),
});

builder.queryField("publishableKeys", (t) =>
  t.connection(
    {
      type: PublishableKeyType,
      authScopes: { capability: "manage_api_keys" },
      args: legacyPageArgs(t.arg),
      resolve: (_r, args, ctx) => connectionPage(args, (page) => listApiKeys(ctx, page, "publishable")),
    },
    PublishableKeyConnection,
  ),
);

builder.mutationFields((t) => ({
  createPublishableKey: t.field({
    type: CreatePublishableKeyPayload,
    authScopes: { capability: "manage_api_keys" },
    args: { input: t.arg({ type: CreatePublishableKeyInput, required: true }) },
    resolve: (_r, { input }, ctx) => createPublishableKey(ctx, input),
  }),
  revokePublishableKey: t.field({
    type: PublishableKeyType,
    authScopes: { capability: "manage_api_keys" },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_r, { id }, ctx) => revokeApiKey(ctx, id, "publishable"),
  }),
}));
