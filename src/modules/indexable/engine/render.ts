// `engagement render` (contract section 23): a discussion's indexable thread printed for a site built
// ahead of time, the same bytes the HTTP route answers for the same arguments (fragment.ts). A door
// that finds the tenant itself (the CLI names it), so it reads as a publishable key of that tenant
// with no reader would: what every reader sees, nothing more.
import { contextForTenant, type AppServices } from "../../../context/request.js";
import { errors } from "../../../lib/errors.js";
import { tenantRow } from "../../../auth/auth-cache.js";
import { renderFragment, type FragmentRequest } from "../fragment.js";

export async function renderForTenant(app: AppServices, tenantId: string, request: FragmentRequest): Promise<string> {
  const tenant = await tenantRow(app, tenantId);
  if (!tenant) throw errors.notFound("Tenant");
  const ctx = contextForTenant(app, tenant, { kind: "publishable", keyId: "cli-render", capabilities: new Set() });
  return (await renderFragment(ctx, request)).html;
}
