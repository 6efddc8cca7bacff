// GET /api/v1/federation (manage_settings; GraphQL federationStatus): what the console's Fediverse
// screen shows beside the settings — the site's fediverse address and how many follow it.
import { loadTenant, store, type RequestContext } from "../../context/request.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { federationServed } from "./paths.js";

export interface FederationStatus {
  /** settings federation.enabled */
  enabled: boolean;
  /** whether this deployment serves federation at all (PUBLIC_URL set, or not in production) */
  served: boolean;
  /**
   * `@handle@host`: the host is settings federation.domain, else PUBLIC_URL's host; null without a
   * handle, or without either (a development server: its address is the one the console was opened on)
   */
  address: string | null;
  /** the remote actors following the site's actor */
  followers: number;
}

export async function federationStatus(ctx: RequestContext): Promise<FederationStatus> {
  const tenant = await loadTenant(ctx);
  const f = resolveSettings(tenant.settings).federation;
  const publicUrl = ctx.app.config.PUBLIC_URL;
  const host = f.domain ?? (publicUrl ? new URL(publicUrl).host : null);
  const [row] = await store(ctx).sql.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM federation_followers WHERE tenant_id = $1",
    [],
    "federation_followers_count",
  );
  return {
    enabled: f.enabled,
    served: federationServed(ctx.app.config),
    address: f.handle && host ? `@${f.handle}@${host}` : null,
    followers: row?.n ?? 0,
  };
}
