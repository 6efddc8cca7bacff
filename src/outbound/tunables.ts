/**
 * Delivery tunables of one endpoint (API.md §4 "Webhooks"): the tenant's `delivery` settings with
 * the endpoint's own `delivery` overrides on top. Contract names throughout.
 */
import { DeliverySchema, type DeliveryTunables } from "../tenancy/settings/delivery.js";
import { resolveSettings } from "../tenancy/settings/resolve.js";

export type { DeliveryTunables };

/** Endpoint overrides: any subset of the tunables, each within the same bounds as the setting. */
export const DeliveryOverridesSchema = DeliverySchema.partial().strict();
export type DeliveryOverrides = Partial<DeliveryTunables>;

/** Stored overrides (JSON column) → valid overrides; anything invalid is ignored rather than trusted. */
export function parseOverrides(stored: unknown): DeliveryOverrides {
  if (stored === null || stored === undefined) return {};
  const parsed = DeliveryOverridesSchema.safeParse(stored ?? {});
  return parsed.success ? parsed.data : {};
}

export function resolveTunables(tenantSettings: unknown, endpointOverrides: unknown): DeliveryTunables {
  return { ...resolveSettings(tenantSettings).delivery, ...parseOverrides(endpointOverrides) };
}
