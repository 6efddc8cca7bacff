// Verifying a webmention (contract section 24; W3C Webmention §3.2.2), as a delivery job of kind
// `webmention` that the webhook worker claims, leases and retries (src/outbound/composers.ts:
// a job that makes its own request). The source is fetched with GET through the webhooks' SSRF
// guard (src/outbound/http-client.ts: every address checked when connecting, no credentials)
// by a client of its own bounded to WEBMENTION_MAX_SOURCE_BYTES, within WEBMENTION_FETCH_TIMEOUT_MS (or the
// tenant's delivery.attemptTimeoutMs when less),
// following at most 3 redirects (each one guarded again). Then:
// - 410 Gone, or a page that no longer links to the target: the mention is removed (its comment
//   deleted, eng_remove_mention); a mention never accepted is recorded rejected;
// - a site past its budget for the source's domain (WEBMENTION_REQUESTS_PER_SOURCE_DOMAIN linking
//   mentions in WEBMENTION_BUDGET_WINDOW_SECONDS, counted when a page is found linking): the job waits
//   for the next window, no attempt counted, the row saying why;
// - a page that links to the target: its h-entry (h-entry.ts) becomes, or updates, the comment of
//   reader `wm:<source origin>` of kind `mention` (eng_accept_mention), its text and HTML sanitized
//   by the one renderer (src/lib/markdown.ts), held as `pending` while federation.remoteModeration is
//   `pre`; the comment's writes are the comments' own, with their events and webhooks;
// - a refused address, a page too large, not HTML, nested too deep or with an h-entry published out
//   of range (h-entry.ts UnreadableSource), or another 4xx: rejected with the reason, nothing kept,
//   not retried;
// - a timeout, a network failure or a 5xx: the attempt fails and is retried with the tenant's
//   `delivery` settings (the row keeps the error).
import { runWrite, type WritePipeline } from "../../../events/statement.js";
import type { TenantStore } from "../../../db/tenant-store.js";
import type { KeyLimiter } from "../../../auth/sign-in-throttle.js";
import { newId } from "../../../lib/ids.js";
import { domainOfUrl, isDomainListed } from "../../../lib/domain-name.js";
import { renderThroughParser, sanitizeBodyHtml } from "../../../lib/markdown.js";
import { CONTROL_CHARS, READER_NAME_MAX } from "../../../lib/reader-name.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import type { Composed, MessageComposer } from "../../../outbound/composers.js";
import { DeliveryError, type WebhookHttpClient, type WebhookResponse } from "../../../outbound/http-client.js";
import { linksTo, readMention, UnreadableSource, type Mention } from "./h-entry.js";

/** The most of a source page read (a larger one is refused). */
export const WEBMENTION_MAX_SOURCE_BYTES = 1024 * 1024;
/** How long fetching the source may take, each request, at most (less when the tenant's delivery.attemptTimeoutMs is less). */
export const WEBMENTION_FETCH_TIMEOUT_MS = 5_000;
/** The window of the webmentions' budgets (per sender address, per site and source domain). */
export const WEBMENTION_BUDGET_WINDOW_SECONDS = 600;
const MAX_REDIRECTS = 3;
const USER_AGENT = "engagement-service-webmention/1";

export interface WebmentionJobDeps {
  /** the guarded client bounded to WEBMENTION_MAX_SOURCE_BYTES */
  http: WebhookHttpClient;
  /** the tenants' stores: each write runs on its tenant's plain SQL, its id bound as $1 */
  stores: (tenantId: string) => TenantStore;
  /** what follows a write's commit (the app's event pipeline: built after the worker that runs these jobs) */
  pipeline: () => WritePipeline;
  clock: { now(): Date };
  /** the budget of a site's mentions per source domain that verification found linking (siteSourceKey) */
  perSourceDomain: Pick<KeyLimiter, "exhausted" | "tryConsume">;
}

/** A site's budget key for a source domain. */
export const siteSourceKey = (tenantId: string, domain: string): string => `${tenantId}\n${domain}`;

interface WebmentionRow {
  source: string;
  target: string;
  discussionId: string;
}

const isRow = (v: unknown): v is WebmentionRow => {
  const r = v as Partial<WebmentionRow> | null;
  return typeof r?.source === "string" && typeof r.target === "string" && typeof r.discussionId === "string";
};

/** A transient failure: the job's attempt fails and is retried. */
class Retry extends Error {}

export function createWebmentionJobs(deps: WebmentionJobDeps): MessageComposer {
  const note = (tenantId: string, m: WebmentionRow, error: string) =>
    deps
      .stores(tenantId)
      .sql.query(
        "UPDATE webmentions SET error = $4 WHERE tenant_id = $1 AND source = $2 AND target = $3",
        [m.source, m.target, error.slice(0, 500)],
        "eng_webmention_note",
      );

  const remove = (tenantId: string, m: WebmentionRow, status: "removed" | "rejected", error: string) =>
    runWrite(deps.pipeline(), deps.stores(tenantId).sql, undefined, "eng_remove_mention", {
      source: m.source,
      target: m.target,
      status,
      error: error.slice(0, 500),
      at: deps.clock.now(),
    });

  /** Past the site's budget for the source domain: the job waits for the next window (no attempt counted), the row says why. */
  async function overBudget(tenantId: string, m: WebmentionRow): Promise<Composed> {
    const until = new Date(deps.clock.now().getTime() + WEBMENTION_BUDGET_WINDOW_SECONDS * 1000);
    await note(tenantId, m, `the source's domain is past this site's budget; tried again at ${until.toISOString()}`);
    return { defer: until };
  }

  /** GET the source, following at most MAX_REDIRECTS redirects; a DeliveryError as it is. */
  async function fetchSource(source: string, timeoutMs: number): Promise<{ res: WebhookResponse; url: string }> {
    let url = source;
    for (let hop = 0; ; hop++) {
      const res = await deps.http.get({
        url,
        timeoutMs,
        headers: { accept: "text/html, application/xhtml+xml;q=0.9", "user-agent": USER_AGENT },
      });
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === "string" && hop < MAX_REDIRECTS) {
        url = new URL(location, url).href;
        continue;
      }
      return { res, url };
    }
  }

  return {
    async compose(job): Promise<Composed> {
      if (!isRow(job.message)) return { drop: "not a webmention job's row" };
      const m = job.message;
      const settings = resolveSettings(job.tenantSettings);
      if (!settings.federation.enabled) return { drop: "federation is off" };
      const domain = domainOfUrl(m.source);
      if (!domain || isDomainListed(domain, settings.federation.blockedDomains)) {
        await remove(job.tenantId, m, "rejected", "the source's domain is blocked");
        return { done: "blocked domain" };
      }
      // the site has taken all the source domain's mentions it may this window: tried again after it, nothing fetched
      const budget = siteSourceKey(job.tenantId, domain);
      if (await deps.perSourceDomain.exhausted(budget)) return overBudget(job.tenantId, m);
      const timeoutMs = Math.min(settings.delivery.attemptTimeoutMs, WEBMENTION_FETCH_TIMEOUT_MS);
      let fetched: { res: WebhookResponse; url: string };
      try {
        fetched = await fetchSource(m.source, timeoutMs);
      } catch (err) {
        if (err instanceof DeliveryError && (err.kind === "blocked_address" || err.kind === "response_too_large")) {
          const why =
            err.kind === "blocked_address"
              ? "the source's address is not allowed"
              : `the source is larger than ${WEBMENTION_MAX_SOURCE_BYTES} bytes`;
          await remove(job.tenantId, m, "rejected", why);
          return { done: why };
        }
        const why =
          err instanceof DeliveryError
            ? `${err.kind}: ${err.kind === "timeout" ? `no answer within ${timeoutMs} ms` : err.message}`
            : String(err);
        await note(job.tenantId, m, why);
        throw new Retry(why);
      }
      const { res, url } = fetched;
      if (res.statusCode === 410) {
        await remove(job.tenantId, m, "removed", "the source answered 410 Gone");
        return { done: "gone" };
      }
      if (res.statusCode >= 500 || res.statusCode === 429) {
        await note(job.tenantId, m, `the source answered HTTP ${res.statusCode}`);
        throw new Retry(`HTTP ${res.statusCode}`);
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await remove(job.tenantId, m, "rejected", `the source answered HTTP ${res.statusCode}`);
        return { done: `HTTP ${res.statusCode}` };
      }
      const type = String(res.headers["content-type"] ?? "").toLowerCase();
      if (!type.includes("html")) {
        await remove(job.tenantId, m, "rejected", "the source is not an HTML page");
        return { done: "not HTML" };
      }
      let mention: Mention | null;
      try {
        if (!linksTo(res.body, url, m.target)) {
          await remove(job.tenantId, m, "removed", "the source does not link to the target");
          return { done: "no link" };
        }
        mention = readMention(res.body, url, m.target);
      } catch (err) {
        if (!(err instanceof UnreadableSource)) throw err;
        await remove(job.tenantId, m, "rejected", err.message);
        return { done: "unreadable" };
      }
      // a mention verification found: it counts in the site's budget for its source domain
      if (!(await deps.perSourceDomain.tryConsume(budget))) return overBudget(job.tenantId, m);
      await accept(job.tenantId, m, mention, settings);
      return { done: "accepted" };
    },
  };

  async function accept(tenantId: string, m: WebmentionRow, mention: Mention | null, settings: ReturnType<typeof resolveSettings>) {
    const origin = new URL(m.source).origin;
    const max = settings.maxBodyLength;
    const raw = (mention?.text ?? "").replaceAll("\u0000", "").trim() || `Mentioned this at ${m.source}`;
    const chars = [...raw];
    const body = chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : raw;
    // the source's own HTML when the text was kept whole (and is of a sane size), sanitized; else the text as plain text
    const html =
      mention?.html && chars.length <= max && mention.html.length <= 8 * max
        ? sanitizeBodyHtml(mention.html, false)
        : renderThroughParser(body, { markdown: false, images: false }).html;
    const name = (mention?.authorName ?? new URL(m.source).host).replace(new RegExp(CONTROL_CHARS.source, "g"), " ").trim();
    const now = deps.clock.now();
    const published = mention?.published && mention.published.getTime() <= now.getTime() ? mention.published : null;
    await runWrite(deps.pipeline(), deps.stores(tenantId).sql, undefined, "eng_accept_mention", {
      source: m.source,
      target: m.target,
      discussion: m.discussionId,
      id: newId("cmt"),
      reader: `wm:${origin}`,
      name: [...(name || origin)].slice(0, READER_NAME_MAX).join(""),
      avatar: mention?.authorPhoto ?? null,
      body,
      bodyHtml: html || renderThroughParser(body, { markdown: false, images: false }).html,
      status: settings.federation.remoteModeration === "pre" ? "pending" : "approved",
      hold: settings.safety.newReaderHold,
      published,
      at: now,
    });
  }
}
