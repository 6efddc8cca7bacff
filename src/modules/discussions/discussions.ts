// Discussions: a comment thread per tenant-chosen id (e.g. an article slug).
import { z } from "zod";
import { db, loadTenant, store, tenantIdOf, type RequestContext } from "../../context/request.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import type { Discussion } from "../../generated/prisma/client.js";
import { errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { checkDiscussionId, DISCUSSION_ID_RE, DISCUSSION_ID_RULE } from "../../lib/ids.js";
import { HTTP_URL_RULE, isHttpUrl } from "../../lib/http-url.js";
import { isSingleLine, SINGLE_LINE_RULE } from "../../lib/single-line.js";
import { newestFirstPage, type Page, type PageArgs } from "../../lib/pagination.js";
import { writeTx } from "../../events/write-tx.js";
import type { EventType } from "../../events/types.js";
import { recordAudit } from "../audit/audit.js";
import type { Settings } from "../../tenancy/settings/tree.js";
import { urlKey } from "./url-key.js";
import { autoPosts, linkDiscussion, queueAutoPost } from "../bluesky/links.js";

const UpsertInput = z
  .object({
    // shown as one line (pages, the console) and put in email subjects: no line breaks
    title: z.string().max(500).refine(isSingleLine, SINGLE_LINE_RULE).nullish(),
    // rendered as a link (the console, the tenant's pages): http(s) only, the rule avatarUrl follows
    url: z.string().refine(isHttpUrl, HTTP_URL_RULE).nullish(),
    // the Bluesky post it is linked to (an at:// URI or a bsky.app URL; null unlinks): src/modules/bluesky/links.ts
    bluesky: z.string().max(1024).nullish(),
  })
  .strict();

export type UpsertDiscussionInput = z.input<typeof UpsertInput>;

export async function upsertDiscussion(
  ctx: RequestContext,
  id: string,
  input: UpsertDiscussionInput,
): Promise<{ discussion: Discussion; created: boolean }> {
  checkDiscussionId(id, "id");
  const parsed = UpsertInput.safeParse(input ?? {});
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  // the url's key (null: no url): another discussion's key is refused (url_taken), before and, for a
  // race between two writes, by the unique index
  const key = parsed.data.url === undefined ? undefined : parsed.data.url === null ? null : urlKey(parsed.data.url);
  const data = {
    ...(parsed.data.title !== undefined ? { title: parsed.data.title } : {}),
    ...(parsed.data.url !== undefined ? { url: parsed.data.url, urlKey: key ?? null } : {}),
  };
  const tenantId = tenantIdOf(ctx);
  const federates = await tenantFederates(ctx);
  const autoPost = await tenantAutoPosts(ctx);
  const written = await writeTx(ctx, async (tx) => {
    if (key) await refuseTakenUrl(tx.discussion, key, id);
    const rows = await tx.$queryRaw<{ created: boolean }[]>`
      INSERT INTO discussions (tenant_id, id, title, url, url_key, updated_at)
      VALUES (${tenantId}, ${id}, ${parsed.data.title ?? null}, ${parsed.data.url ?? null}, ${key ?? null}, now())
      ON CONFLICT (tenant_id, id) DO NOTHING
      RETURNING true AS created`;
    const created = rows.length > 0;
    const discussion = created
      ? await tx.discussion.findUniqueOrThrow({ where: { tenantId_id: { tenantId, id } } })
      : await tx.discussion.update({ where: { tenantId_id: { tenantId, id } }, data });
    // a page of a federating tenant's site is announced to its followers (once)
    if (federates && discussion.url) await tx.$queryRaw`SELECT eng_federate_discussion(${tenantId}, ${id}, false, ${ctx.app.clock.now()})`;
    return { discussion, created };
  }).catch(async (err: unknown) => {
    if (!key || !isUrlKeyConflict(err)) throw err;
    throw errors.urlTaken((await holderOf(db(ctx).discussion, key)) ?? "");
  });
  // linked to a Bluesky post (or unlinked): after the discussion is written, as it needs its url and the AppView's answer;
  // else a new one is posted there by the poller (autoPost)
  if (parsed.data.bluesky !== undefined) await linkDiscussion(ctx, id, parsed.data.bluesky);
  else if (autoPost && written.created && written.discussion.url) await queueAutoPost(ctx, id);
  return written;
}

type DiscussionReads = Pick<ReturnType<typeof db>["discussion"], "findFirst">;

/** The discussion with the url key (tenant-scoped reads), or null. */
async function holderOf(discussions: DiscussionReads, key: string): Promise<string | null> {
  return (await discussions.findFirst({ where: { urlKey: key }, select: { id: true } }))?.id ?? null;
}

/** 409 url_taken when a discussion other than `id` has the key. */
async function refuseTakenUrl(discussions: DiscussionReads, key: string, id: string): Promise<void> {
  const holder = await holderOf(discussions, key);
  if (holder !== null && holder !== id) throw errors.urlTaken(holder);
}

/** The unique index of discussions' url keys refused a write (a race between two writes of one url). */
function isUrlKeyConflict(err: unknown): boolean {
  const text = (e: unknown): string => {
    if (!e || typeof e !== "object") return "";
    const o = e as { message?: unknown; constraint?: unknown; meta?: unknown; cause?: unknown };
    return `${String(o.message ?? "")} ${String(o.constraint ?? "")} ${JSON.stringify(o.meta ?? null)} ${text(o.cause)}`;
  };
  return text(err).includes("url_key");
}

/** Whether the tenant federates (its new pages are announced: eng_federate_discussion). */
async function tenantFederates(ctx: RequestContext): Promise<boolean> {
  return resolveSettings((await loadTenant(ctx)).settings).federation.enabled;
}

/** Whether the tenant posts each new page to Bluesky (settings bluesky.autoPost: src/modules/bluesky/links.ts). */
async function tenantAutoPosts(ctx: RequestContext): Promise<boolean> {
  return autoPosts(resolveSettings((await loadTenant(ctx)).settings));
}

/** What a page says of itself when its first comment creates its discussion (settings discussions.autoCreate). */
const PageInput = z
  .object({
    title: UpsertInput.shape.title,
    url: UpsertInput.shape.url,
  })
  .strict();

export type PageOfDiscussion = z.input<typeof PageInput>;

/**
 * A browser's comment (publishable key) needs its discussion: the one that exists, or — with
 * settings discussions.autoCreate and the request from one of the tenant's own allowedOrigins — a
 * new one with the page's URL (which must be a page of that origin) and title, at most
 * discussions.autoCreatePerMinute per origin (429 past it). Otherwise 404, as without the setting.
 */
export async function discussionForPage(
  ctx: RequestContext,
  id: string,
  page: PageOfDiscussion | null | undefined,
  settings: Pick<Settings, "discussions" | "allowedOrigins">,
): Promise<void> {
  checkDiscussionId(id, "discussionId");
  const found = await db(ctx).discussion.findUnique({ where: { tenantId_id: { tenantId: tenantIdOf(ctx), id } }, select: { id: true } });
  if (found) return;
  const origin = ctx.browserOrigin ?? null;
  if (!settings.discussions.autoCreate || origin === null || !settings.allowedOrigins.includes(origin)) {
    throw errors.discussionNotFound(settings.discussions.autoCreate);
  }
  const parsed = PageInput.safeParse(page ?? {});
  if (!parsed.success)
    throw errors.validation(fieldErrorsFromZod(parsed.error.issues).map((e) => ({ ...e, path: `discussion.${e.path}` })));
  const { title, url } = parsed.data;
  if (url && new URL(url).origin !== origin) {
    throw errors.validation([{ path: "discussion.url", message: `must be a page of ${origin} (the page the comment comes from)` }]);
  }
  // a page has one discussion: a url another discussion has is refused (url_taken), not taken over
  const key = url ? urlKey(url) : null;
  if (key) await refuseTakenUrl(db(ctx).discussion, key, id);
  await ctx.app.discussionAutoCreate(settings.discussions.autoCreatePerMinute).consume(`${tenantIdOf(ctx)}\n${origin}`);
  // a discussion made meanwhile (another reader's first comment, the backend's PUT) is kept as it is
  const made = await store(ctx).sql.query(CREATE_FOR_PAGE, [id, title ?? null, url ?? null, key], "discussion_create_for_page");
  if (!made.length && key && !(await db(ctx).discussion.findFirst({ where: { id }, select: { id: true } })))
    throw errors.urlTaken((await holderOf(db(ctx).discussion, key)) ?? "");
  if (url && (await tenantFederates(ctx)))
    await store(ctx).sql.query(`SELECT eng_federate_discussion($1, $2, false, $3::timestamptz)`, [id, ctx.app.clock.now()]);
  if (url && made.length && (await tenantAutoPosts(ctx))) await queueAutoPost(ctx, id);
}

/**
 * A page's discussion, unless one of that id, or of that url key, exists: `$1` the tenant (the store
 * binds it), then id, title, url, url key. A row when it was made.
 */
const CREATE_FOR_PAGE = `INSERT INTO discussions (tenant_id, id, title, url, url_key, updated_at)
  VALUES ($1, $2, $3, $4, $5, now()) ON CONFLICT DO NOTHING RETURNING true AS created`;

export async function getDiscussion(ctx: RequestContext, id: string): Promise<Discussion> {
  checkDiscussionId(id, "id");
  const d = await db(ctx).discussion.findUnique({ where: { tenantId_id: { tenantId: tenantIdOf(ctx), id } } });
  if (!d) throw errors.notFound("Discussion");
  return d;
}

/**
 * The discussion of a page, found by its url as `urlKey` compares them (contract section 27): 404
 * when none has it; 422 naming `url` for what is no absolute http(s) URL.
 */
export async function getDiscussionByUrl(ctx: RequestContext, url: string): Promise<Discussion> {
  const key = isHttpUrl(url) ? urlKey(url) : null;
  if (key === null) throw errors.validation([{ path: "url", message: `${HTTP_URL_RULE}, absolute` }]);
  const d = await db(ctx).discussion.findFirst({ where: { urlKey: key } });
  if (!d) throw errors.notFound("Discussion");
  return d;
}

export async function listDiscussions(ctx: RequestContext, args: PageArgs): Promise<Page<Discussion>> {
  return newestFirstPage(args, (q) => db(ctx).discussion.findMany(q));
}

const TRANSITIONS: Record<"lock" | "unlock" | "archive", { to: Discussion["state"]; event: EventType }> = {
  lock: { to: "locked", event: "discussion_locked" },
  unlock: { to: "open", event: "discussion_unlocked" },
  archive: { to: "archived", event: "discussion_archived" },
};

/**
 * Lock, unlock or archive: one statement (database function eng_set_discussion_state). Archived is
 * read-only for good (409); a transition to the current state changes nothing and appends no event.
 */
export async function changeDiscussionState(ctx: RequestContext, id: string, action: "lock" | "unlock" | "archive"): Promise<Discussion> {
  checkDiscussionId(id, "id");
  const tenantId = tenantIdOf(ctx);
  const t = TRANSITIONS[action];
  const d = await store(ctx).write("eng_set_discussion_state", { id, to: t.to, event: t.event, at: ctx.app.clock.now() });
  await recordAudit(ctx, `discussion.${action}`, { type: "discussion", id });
  return {
    tenantId,
    id: d.id,
    title: d.title,
    url: d.url,
    // the event's discussion carries no key: its url's (what a write of that url stored, but for a pre-existing duplicate)
    urlKey: d.url === null ? null : urlKey(d.url),
    state: d.state,
    seq: 0,
    commentCount: d.commentCount,
    reactionCounts: d.reactions,
    createdAt: new Date(d.createdAt),
    updatedAt: new Date(d.updatedAt),
  };
}

/** At most this many ids per counts request. */
export const MAX_COUNT_IDS = 100;

/**
 * Visible (approved, not deleted) comment counts of up to 100 discussions, in the order asked;
 * unknown ids count 0 (a teaser list may name articles nobody commented on yet). One statement.
 */
export async function discussionCounts(
  ctx: RequestContext,
  ids: readonly string[],
  opts: { presence?: boolean } = {},
): Promise<{ discussionId: string; comments: number; reading: number | null }[]> {
  const unique = [...new Set(ids)];
  const problems = [];
  if (unique.length < 1 || unique.length > MAX_COUNT_IDS)
    problems.push({ path: "ids", message: `must name 1–${MAX_COUNT_IDS} discussions` });
  for (const [i, id] of unique.entries()) if (!DISCUSSION_ID_RE.test(id)) problems.push({ path: `ids[${i}]`, message: DISCUSSION_ID_RULE });
  if (problems.length) throw errors.validation(problems);
  const [rows, reading] = await Promise.all([
    db(ctx).discussion.findMany({ where: { id: { in: unique } }, select: { id: true, commentCount: true } }),
    // readers: the discussion's open streams on every instance (contract section 19, presence)
    opts.presence ? ctx.app.streams.presence.count(tenantIdOf(ctx), unique) : null,
  ]);
  const found = new Map(rows.map((r) => [r.id, r.commentCount]));
  return unique.map((discussionId, i) => ({ discussionId, comments: found.get(discussionId) ?? 0, reading: reading?.[i] ?? null }));
}
