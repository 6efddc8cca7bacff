// Which tenant an actor is, and whether it federates (contract section 24: everything is served only
// while settings federation.enabled is true with a handle, else 404). The actor's identifier is the
// tenant's id; its WebFinger name is the handle, unique on the server (tenants.federation_handle).
import type { Tenant } from "../../../generated/prisma/client.js";
import type { AppServices } from "../../../context/request.js";
import { tenantRow } from "../../../auth/auth-cache.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import type { FederationSettings } from "../../../tenancy/settings/federation.js";

export interface FederatingTenant {
  tenant: Tenant;
  settings: FederationSettings & { handle: string };
  /** the site the actor stands for: settings federation.url, else the first of allowedOrigins (null: none) */
  site: string | null;
}

/** The tenant whose federation is on, else null. */
export async function federatingTenant(app: AppServices, tenantId: string): Promise<FederatingTenant | null> {
  const tenant = await tenantRow(app, tenantId).catch(() => null);
  if (!tenant) return null;
  const all = resolveSettings(tenant.settings);
  const settings = all.federation;
  if (!settings.enabled || !settings.handle) return null;
  return { tenant, settings: { ...settings, handle: settings.handle }, site: settings.url ?? all.allowedOrigins[0] ?? null };
}

/** The tenant id a handle names (its federation on), else null. */
export async function tenantOfHandle(app: AppServices, handle: string): Promise<string | null> {
  const [row] = await app.sql.query<{ id: string }>(`SELECT id FROM tenants WHERE federation_handle = $1`, [handle.toLowerCase()]);
  if (!row) return null;
  return (await federatingTenant(app, row.id)) ? row.id : null;
}

/** Whether any tenant of the server federates (NodeInfo is the server's, served while one does). */
export async function anyTenantFederates(app: AppServices): Promise<boolean> {
  const rows = await app.sql.query<{ id: string }>(
    `SELECT id FROM tenants WHERE federation_handle IS NOT NULL AND settings->'federation'->>'enabled' = 'true' LIMIT 1`,
    [],
  );
  return rows.length > 0;
}

/** Whether `host` is one of the blocked domains or below one. */
export function domainBlocked(blocked: readonly string[], host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return blocked.some((d) => h === d || h.endsWith(`.${d}`));
}
