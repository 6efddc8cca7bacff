// Receiving a webmention (contract section 24; W3C Webmention §3.2): `source` and `target` checked
// (http(s) URLs, at most 2,048 characters, not the same page), the sender's client address within
// its budget (WEBMENTION_REQUESTS_PER_ADDRESS in 10 minutes, across instances: what nobody has
// verified yet is charged to who sent it, not to the domain it names), the target found among the
// discussions' `url`s of the sites with federation on (across tenants: this door finds the tenant,
// TARGETS below), the source's domain neither blocked by the site (federation.blockedDomains) nor past
// the site's budget for it (verify.ts counts the mentions it finds linking); then one `webmentions`
// row per (site, source, target) and one delivery job of kind `webmention` queued (at most one
// waiting per mention), verified by the webmentions' own pool of the delivery queue (verify.ts;
// src/outbound/webhook-runtime.ts `mentionWorker`). Answered 202 before anything is fetched.
import type { AppServices } from "../../../context/services.js";
import { errors } from "../../../lib/errors.js";
import { domainOfUrl, isDomainListed } from "../../../lib/domain-name.js";
import { isHttpUrl } from "../../../lib/http-url.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import { addressGroup } from "../../../lib/client-address.js";
import { comparableUrl } from "./h-entry.js";
import { siteSourceKey, WEBMENTION_BUDGET_WINDOW_SECONDS } from "./verify.js";
import { jobInsert } from "../../../outbound/jobs.js";

/** At most this many sites' discussions one webmention reaches (one page embedded by several sites). */
const MAX_TARGET_SITES = 5;

export type ReceiveServices = Pick<AppServices, "sql" | "stores" | "clock" | "webhooks" | "webmentions">;

/** The mention's two URLs as a form gives them, checked; the spec's 400s otherwise. */
export function checkMention(form: URLSearchParams): { source: string; target: string } {
  const problems: { path: string; message: string }[] = [];
  const source = form.getAll("source");
  const target = form.getAll("target");
  for (const [name, values] of [
    ["source", source],
    ["target", target],
  ] as const) {
    if (values.length !== 1) problems.push({ path: name, message: "must be given once" });
    else if (!isHttpUrl(values[0])) problems.push({ path: name, message: "must be an http(s) URL of at most 2048 chars" });
  }
  if (problems.length) throw errors.invalidParameter(problems);
  if (comparableUrl(source[0]!) === comparableUrl(target[0]!)) {
    throw errors.invalidParameter([{ path: "source", message: "must not be the target itself" }]);
  }
  return { source: source[0]!, target: target[0]! };
}

/**
 * The sites a target reaches: each site (tenant) with federation on that has a discussion whose url
 * is the target, once, with its oldest such discussion (created first, then by id); the sites that
 * list the target's origin in `allowedOrigins` (their own pages) first, then the others by when
 * their discussion was made, then by id; at most MAX_TARGET_SITES. One site's many discussions with
 * the url count once, so they cannot push another site out. When no federating site has it, one row
 * of nulls if a discussion of a site that does not federate has it (whose page is not served here).
 */
const TARGETS = `
  WITH site AS (
    SELECT DISTINCT ON (d.tenant_id) d.tenant_id AS "tenantId", d.id AS "discussionId", t.settings, d.created_at,
           COALESCE(jsonb_typeof(t.settings -> 'allowedOrigins') = 'array' AND t.settings -> 'allowedOrigins' ? $2::text, false) AS own
      FROM discussions d JOIN tenants t ON t.id = d.tenant_id
     WHERE d.url = ANY($1::text[]) AND t.settings -> 'federation' ->> 'enabled' = 'true'
     ORDER BY d.tenant_id, d.created_at, d.id),
  picked AS (
    SELECT "tenantId", "discussionId", settings, row_number() OVER (ORDER BY own DESC, created_at, "tenantId") AS n
      FROM site ORDER BY n LIMIT ${MAX_TARGET_SITES})
  SELECT "tenantId", "discussionId", settings FROM (
    SELECT "tenantId", "discussionId", settings, n FROM picked
     UNION ALL
    SELECT NULL, NULL, NULL, 0
     WHERE NOT EXISTS (SELECT 1 FROM picked) AND EXISTS (SELECT 1 FROM discussions WHERE url = ANY($1::text[]))) x
   ORDER BY n`;

interface SiteRow {
  tenantId: string;
  discussionId: string;
  settings: unknown;
}
/** a site's row, or the row of nulls (TARGETS) */
type TargetRow = SiteRow | { tenantId: null; discussionId: null; settings: null };

/** Queues the mention's verification for each site whose discussion the target is; what the sender is told when none takes it. */
export async function receiveMention(
  app: ReceiveServices,
  mention: { source: string; target: string },
  /** the request's client address (request.ip: TRUST_PROXY decides whether X-Forwarded-For names it) */
  sender: string,
): Promise<number> {
  const { source, target } = mention;
  await app.webmentions.perAddress.consume(addressGroup(sender));
  const forms = [...new Set([target, comparableUrl(target)!])];
  const rows = await app.sql.query<TargetRow>(TARGETS, [forms, new URL(target).origin], "eng_webmention_targets");
  // the page of a site that does not federate is not served here (contract section 24: 404), one of no site unsupported (the spec's 400)
  if (rows.length === 0) throw errors.webmentionTargetUnsupported();
  const sites = rows.filter((r): r is SiteRow => r.tenantId !== null);
  if (sites.length === 0) throw errors.notFound("Webmention target");
  const domain = domainOfUrl(source)!;
  const allowed = sites.filter((r) => !isDomainListed(domain, resolveSettings(r.settings).federation.blockedDomains));
  if (allowed.length === 0) throw errors.webmentionSourceBlocked();
  const open: SiteRow[] = [];
  for (const r of allowed) if (!(await app.webmentions.perSourceDomain.exhausted(siteSourceKey(r.tenantId, domain)))) open.push(r);
  if (open.length === 0) throw errors.rateLimited(WEBMENTION_BUDGET_WINDOW_SECONDS);
  const now = app.clock.now();
  for (const r of open) {
    // the site's own write, through its store ($1 its id)
    await app.stores(r.tenantId).sql.query(
      `WITH mention AS (
         INSERT INTO webmentions AS w (tenant_id, source, target, discussion_id, status, received_at)
         VALUES ($1, $2, $3, $4, 'pending', $5::timestamptz)
         ON CONFLICT (tenant_id, source, target) DO UPDATE SET discussion_id = EXCLUDED.discussion_id, received_at = EXCLUDED.received_at
         RETURNING w.tenant_id)
       ${jobInsert("webmention", "mention m", {
         tenantId: "m.tenant_id",
         message: "jsonb_build_object('source', $2::text, 'target', $3::text, 'discussionId', $4::text)",
         at: "$5::timestamptz",
         where: `NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                  WHERE d.kind = 'webmention' AND d.status = 'pending' AND d.tenant_id = $1
                    AND d.message ->> 'source' = $2::text AND d.message ->> 'target' = $3::text)`,
       })}`,
      [source, target, r.discussionId, now],
      "eng_webmention_queue",
    );
  }
  app.webhooks.mentionWorker.nudge();
  return open.length;
}
