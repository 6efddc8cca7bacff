// Webhook inputs. Fields are optional at the GraphQL level and checked by the domain
// (src/modules/webhooks/input-rules.ts), so one 422 lists every problem with its field path.
import { builder } from "../../graphql/builder.js";
import { deliveryTunablesInput } from "../../graphql/delivery-tunables.js";

const DeliveryOverridesInput = deliveryTunablesInput(
  "WebhookDeliveryInput",
  "Overrides of the tenant's delivery settings for one endpoint; null removes an override.",
);

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
    dryRun: t.boolean({ description: "Only count what would be queued (`queued`), queue nothing." }),
  }),
});
