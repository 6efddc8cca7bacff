// Webhook request bodies (API.md §4 "Webhooks"), validated with zod so one 422 lists every problem.
import { z } from "zod";
import { WEBHOOK_EVENT_TYPES } from "../../events/types.js";
import { DeliverySchema } from "../../tenancy/settings/delivery.js";

const EVENT_NAMES: readonly string[] = WEBHOOK_EVENT_TYPES;

const required = (what: string) => ({
  error: (iss: { input?: unknown }) => (iss.input === undefined ? "is required" : `must be ${what}`),
});

/**
 * Webhook URLs are stored as the WHATWG URL serialisation (host lower-cased and ASCII, fullwidth
 * digits folded, default port dropped), never as sent; whitespace or control characters anywhere
 * are refused rather than silently stripped. Whether the address may be called is the URL guard's
 * (src/outbound/url-guard.ts).
 */
const url = z
  .string(required("a string"))
  .min(1, "is required")
  .max(2048, "must be at most 2048 characters")
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  .refine((u) => !/[\s\u0000-\u001f\u007f]/.test(u), "must not contain whitespace or control characters")
  .transform((u) => (URL.canParse(u) ? new URL(u).href : u));

const events = z
  .array(
    z.string(required("a string")).refine((e) => e === "*" || EVENT_NAMES.includes(e), {
      message: `must be one of ${WEBHOOK_EVENT_TYPES.join(", ")}, or "*"`,
    }),
    required("a list of event types"),
  )
  .min(1, 'must name at least one event type, or ["*"]')
  .max(EVENT_NAMES.length)
  .refine((a) => !a.includes("*") || a.length === 1, { message: 'use ["*"] alone for every event type' })
  .refine((a) => new Set(a).size === a.length, { message: "must not repeat an event type" });

const description = z.string().max(500, "must be at most 500 characters").nullish();

/** Endpoint overrides of the tenant's delivery tunables; a null field removes that override. */
const deliveryPatch = z
  .object(
    Object.fromEntries(Object.entries(DeliverySchema.shape).map(([k, v]) => [k, v.nullish()])) as {
      [K in keyof typeof DeliverySchema.shape]: z.ZodOptional<z.ZodNullable<(typeof DeliverySchema.shape)[K]>>;
    },
  )
  .strict();

export const CreateWebhookSchema = z.object({ url, events, description, delivery: deliveryPatch.nullish() }).strict();

export const UpdateWebhookSchema = z
  .object({ url: url.optional(), events: events.optional(), description, delivery: deliveryPatch.nullish() })
  .strict();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const RedeliverSchema = z
  .object({
    since: z.date().nullish(),
    eventIds: z.array(z.string().regex(UUID_RE, "is not an event id")).min(1).max(100).nullish(),
    /** count what would be queued, queue nothing */
    dryRun: z.boolean().nullish(),
  })
  .strict()
  .refine((v) => (v.since != null) !== (v.eventIds != null), {
    message: 'give either "since" or "eventIds"',
    path: ["body"],
  });

export type CreateWebhookInput = z.input<typeof CreateWebhookSchema>;
export type UpdateWebhookInput = z.input<typeof UpdateWebhookSchema>;
export type RedeliverInput = z.input<typeof RedeliverSchema>;
export type DeliveryPatch = z.output<typeof deliveryPatch>;

/** Applies a delivery patch to the stored overrides: values set, nulls removed. */
export function mergeOverrides(stored: Record<string, unknown>, patch: DeliveryPatch | null | undefined): Record<string, number> {
  if (patch === null) return {};
  const out: Record<string, unknown> = { ...stored };
  for (const [k, v] of Object.entries(patch ?? {})) {
    if (v === null) delete out[k];
    else if (v !== undefined) out[k] = v;
  }
  return out as Record<string, number>;
}
