// Webhook inputs. Fields are optional at the GraphQL level and checked by the domain
// (src/domain/webhooks-input.ts), so one 422 lists every problem with its field path.
import { builder } from "../../graphql/builder.js";

const DeliveryOverridesInput = builder.inputType("WebhookDeliveryInput", {
  description: "Overrides of the tenant's delivery settings for one endpoint; null removes an override.",
  fields: (t) => ({
    maxAttempts: t.int(),
    backoffBaseMs: t.int(),
    attemptTimeoutMs: t.int(),
    breakerThreshold: t.int(),
    breakerCooldownMs: t.int(),
    disableThreshold: t.int(),
  }),
});

export const CreateWebhookInput = builder.inputType("CreateWebhookInput", {
  fields: (t) => ({
    url: t.string(),
    events: t.stringList(),
    description: t.string(),
    delivery: t.field({ type: DeliveryOverridesInput }),
  }),
});

export const UpdateWebhookInput = builder.inputType("UpdateWebhookInput", {
  fields: (t) => ({
    url: t.string(),
    events: t.stringList(),
    description: t.string(),
    delivery: t.field({ type: DeliveryOverridesInput }),
  }),
});

export const RedeliverInput = builder.inputType("RedeliverWebhookInput", {
  fields: (t) => ({
    since: t.field({ type: "DateTime" }),
    eventIds: t.stringList(),
  }),
});
