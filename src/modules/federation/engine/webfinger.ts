// A handle on the site's own domain (contract section 28; settings federation.domain): the actor is
// `@<handle>@<domain>` as well as `@<handle>@<PUBLIC_URL host>`. The site redirects its
// `/.well-known/webfinger` to the service, query kept, so WebFinger here is asked for
// `acct:<handle>@<domain>` too. Fedify answers WebFinger for PUBLIC_URL's host only, so the mount
// (../http-routes.ts) asks it for the PUBLIC_URL form and puts the forms in the answer: the JRD's
// subject is the form asked for, and the other form is an alias beside the actor's id. A resource
// naming a domain that no federating site with that handle has is left to Fedify, which answers 404.
import type { AppServices } from "../../../context/request.js";
import { normalizeDomain } from "../../../lib/domain-name.js";
import { FEDERATION_HANDLE_PATTERN } from "../../../tenancy/settings/federation.js";
import { federatingTenant, tenantOfHandle } from "./tenants.js";

const ACCT = /^acct:([^@/?#\s]{1,64})@([^@/?#\s]{1,300})$/i;

/** A WebFinger request for a site with its own domain: the request Fedify is given, and the forms its answer carries. */
export interface DomainWebFinger {
  /** the request's URL, its resource the PUBLIC_URL form */
  url: URL;
  /** the form asked for: the answer's subject */
  subject: string;
  /** the other form: an alias */
  alias: string;
}

/**
 * `url` (a WebFinger request's, on PUBLIC_URL's origin) when its resource is `acct:<handle>@<host>`
 * of a federating site with settings federation.domain, `host` that domain or PUBLIC_URL's host;
 * else null (Fedify answers it as it is).
 */
export async function domainWebFinger(app: AppServices, url: URL): Promise<DomainWebFinger | null> {
  const resource = url.searchParams.get("resource");
  const m = resource === null ? null : ACCT.exec(resource);
  if (!m) return null;
  const handle = m[1]!.toLowerCase();
  if (!FEDERATION_HANDLE_PATTERN.test(handle)) return null;
  const host = m[2]!.toLowerCase();
  const onPublicHost = host === url.host.toLowerCase();
  const domain = onPublicHost ? null : normalizeDomain(host);
  if (!onPublicHost && domain === null) return null;
  const tenantId = await tenantOfHandle(app, handle);
  const site = tenantId === null ? null : await federatingTenant(app, tenantId);
  const own = site?.settings.domain ?? null;
  if (own === null || (!onPublicHost && domain !== own)) return null;
  const publicForm = `acct:${handle}@${url.host}`;
  const domainForm = `acct:${handle}@${own}`;
  const asked = new URL(url);
  asked.searchParams.set("resource", publicForm);
  return onPublicHost ? { url: asked, subject: publicForm, alias: domainForm } : { url: asked, subject: domainForm, alias: publicForm };
}

/** Fedify's JRD for the PUBLIC_URL form, with the subject asked for and the other form first among the aliases. */
export function withForms(jrd: unknown, forms: DomainWebFinger): Record<string, unknown> | null {
  if (typeof jrd !== "object" || jrd === null || Array.isArray(jrd)) return null;
  const { subject: _subject, aliases, ...rest } = jrd as { subject?: unknown; aliases?: unknown };
  const others = (Array.isArray(aliases) ? aliases : []).filter((a) => a !== forms.subject && a !== forms.alias);
  return { subject: forms.subject, aliases: [forms.alias, ...others], ...rest };
}
