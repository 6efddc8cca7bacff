// A handle on the site's own domain (contract section 28; settings federation.domain): the actor is
// `@<handle>@<domain>` as well as `@<handle>@<PUBLIC_URL host>`. The site redirects its
// `/.well-known/webfinger` to the service, query kept, so WebFinger here is asked for
// `acct:<handle>@<domain>` too. Fedify answers WebFinger for PUBLIC_URL's host only, so the mount
// (../http-routes.ts) asks it for the PUBLIC_URL form and puts the forms in the answer: the JRD's
// subject is the domain form, whichever form was asked for, and the PUBLIC_URL form is an alias beside
// the actor's id (a server that met the actor by its id asks for the PUBLIC_URL form, finds the domain
// form as the subject and names the site by it; asked for the actor's id, the domain form is an alias
// beside the PUBLIC_URL form). A resource naming a domain that
// no federating site with that handle has is left to Fedify, which answers 404.
import type { AppServices } from "../../../context/request.js";
import { normalizeDomain } from "../../../lib/domain-name.js";
import { FEDERATION_HANDLE_PATTERN } from "../../../tenancy/settings/federation.js";
import { federatingTenant, tenantOfHandle } from "./tenants.js";

const ACCT = /^acct:([^@/?#\s]{1,64})@([^@/?#\s]{1,300})$/i;

/** A WebFinger request for a site with its own domain: the request Fedify is given, and the forms its answer carries. */
export interface DomainWebFinger {
  /** the request's URL, its resource the PUBLIC_URL form */
  url: URL;
  /** the answer's subject: the domain form (for an actor's id, the id) */
  subject: string;
  /** the other form: an alias */
  alias: string;
}

/**
 * `url` (a WebFinger request's, on PUBLIC_URL's origin) when its resource is `acct:<handle>@<host>`
 * of a federating site with settings federation.domain, `host` that domain or PUBLIC_URL's host;
 * else null (Fedify answers it as it is).
 */
export async function domainWebFinger(app: AppServices, url: URL, pathPrefix: string): Promise<DomainWebFinger | null> {
  const resource = url.searchParams.get("resource");
  if (resource === null) return null;
  const m = ACCT.exec(resource);
  if (!m) return actorWebFinger(app, url, resource, pathPrefix);
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
  // the actor's name is the domain form, whichever form was asked for (the PUBLIC_URL form is its alias)
  return { url: asked, subject: domainForm, alias: publicForm };
}

/** A resource that is a site's actor id: answered by Fedify, with the domain form among its aliases. */
async function actorWebFinger(app: AppServices, url: URL, resource: string, pathPrefix: string): Promise<DomainWebFinger | null> {
  const actor = URL.parse(resource);
  if (!actor || actor.origin !== url.origin || actor.search || actor.hash) return null;
  const m = /^\/ap\/actors\/([^/]+)$/.exec(actor.pathname.slice(pathPrefix.length));
  if (!actor.pathname.startsWith(pathPrefix) || !m) return null;
  let tenantId: string;
  try {
    tenantId = decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
  const site = await federatingTenant(app, tenantId);
  if (!site?.settings.domain) return null;
  return { url, subject: resource, alias: `acct:${site.settings.handle}@${site.settings.domain}` };
}

/** Fedify's JRD for the PUBLIC_URL form, with the subject asked for and the other form first among the aliases. */
export function withForms(jrd: unknown, forms: DomainWebFinger): Record<string, unknown> | null {
  if (typeof jrd !== "object" || jrd === null || Array.isArray(jrd)) return null;
  const { subject: _subject, aliases, ...rest } = jrd as { subject?: unknown; aliases?: unknown };
  const others = (Array.isArray(aliases) ? aliases : []).filter((a) => a !== forms.subject && a !== forms.alias);
  return { subject: forms.subject, aliases: [forms.alias, ...others], ...rest };
}
