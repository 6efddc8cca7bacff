// A discussion linked to a Bluesky post (contract section 30): by the post's at:// URI or bsky.app
// URL (PUT /api/v1/discussions/{id} `bluesky`), or by posting it from the site's account
// (POST /api/v1/discussions/{id}/bluesky, and `autoPost` for each new discussion with a url: a link
// row without a URI that the poller posts). The link is a row of bluesky_links; the poller
// (engine/poller.ts) reads its replies from then on. Unlinking (`bluesky: null`) stops the reads and
// keeps the comments brought in.
import type { AtpAgent } from "@atproto/api";
import { db, loadTenant, store, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import type { Settings } from "../../tenancy/settings/tree.js";
import { recordAudit } from "../audit/audit.js";
import { isNotFound, publicAgent, siteAgent, xrpcProblem } from "./client.js";
import { parsePostRef, POST_REF_RULE, postUri, postWebUrl } from "./post-ref.js";

/** The longest text of a post (Bluesky counts 300 graphemes; code points are a safe bound here). */
const MAX_POST_TEXT = 300;

/** What the API answers of a discussion's link. */
export interface BlueskyLinkView {
  discussionId: string;
  /** the post's at:// URI; null while it waits to be posted (autoPost) */
  uri: string | null;
  /** where a browser opens it (https://bsky.app/profile/<did>/post/<key>) */
  url: string | null;
  /** posted from the site's account (not linked to a post that was there) */
  posted: boolean;
  createdAt: Date;
  polledAt: Date | null;
  nextPollAt: Date;
  /** why the last read failed (the AppView down, the post gone); null after a read that worked */
  lastError: string | null;
  /** the comments its replies became */
  replies: number;
}

interface LinkRow {
  discussionId: string;
  uri: string | null;
  posted: boolean;
  createdAt: Date;
  polledAt: Date | null;
  nextPollAt: Date;
  lastError: string | null;
}

const viewOf = (row: LinkRow, replies: number): BlueskyLinkView => ({
  discussionId: row.discussionId,
  uri: row.uri,
  url: row.uri ? postWebUrl(row.uri) : null,
  posted: row.posted,
  createdAt: row.createdAt,
  polledAt: row.polledAt,
  nextPollAt: row.nextPollAt,
  lastError: row.lastError,
  replies,
});

/** The tenant's settings, with Bluesky on: 409 bluesky_disabled otherwise. */
async function enabledSettings(ctx: RequestContext): Promise<Settings> {
  const settings = resolveSettings((await loadTenant(ctx)).settings);
  if (!settings.bluesky.enabled) throw errors.blueskyDisabled();
  return settings;
}

/** The discussion, with a url: 404 without the discussion, 422 on `field` without its url. */
async function discussionWithUrl(
  ctx: RequestContext,
  id: string,
  field: string,
): Promise<{ id: string; title: string | null; url: string }> {
  const d = await db(ctx).discussion.findFirst({ where: { id }, select: { id: true, title: true, url: true } });
  if (!d) throw errors.notFound("Discussion");
  if (!d.url) throw errors.validation([{ path: field, message: "needs the discussion's url: a post links to a page" }]);
  return { ...d, url: d.url };
}

/** A discussion's link and the count of its replies brought in; null when it has none. */
export async function blueskyLinkOf(ctx: RequestContext, discussionId: string): Promise<BlueskyLinkView | null> {
  const [row] = await store(ctx).sql.query<LinkRow & { replies: number }>(
    `SELECT l.discussion_id AS "discussionId", l.uri, l.posted, l.created_at AS "createdAt", l.polled_at AS "polledAt",
            l.next_poll_at AS "nextPollAt", l.last_error AS "lastError",
            (SELECT count(*)::int FROM bluesky_replies r WHERE r.tenant_id = l.tenant_id AND r.discussion_id = l.discussion_id) AS replies
       FROM bluesky_links l WHERE l.tenant_id = $1 AND l.discussion_id = $2`,
    [discussionId],
  );
  return row ? viewOf(row, row.replies) : null;
}

/** The discussions a request asked the post of in one turn, read together (a list of discussions: one statement, not one each). */
const asked = new WeakMap<RequestContext, Map<string, ((post: { uri: string; url: string | null } | null) => void)[]>>();

/**
 * The post a discussion is linked to (its URI and where a browser opens it), as discussions and the
 * thread show it; null when it has none, and without a read while the site has Bluesky off. The ids
 * a request asks for in one turn are read by one statement.
 */
export async function blueskyPostOf(ctx: RequestContext, discussionId: string): Promise<{ uri: string; url: string | null } | null> {
  if (!resolveSettings((await loadTenant(ctx)).settings).bluesky.enabled) return null;
  return new Promise((resolve) => {
    let waiting = asked.get(ctx);
    if (!waiting) {
      asked.set(ctx, (waiting = new Map()));
      const batch = waiting;
      queueMicrotask(() => {
        asked.delete(ctx);
        void store(ctx)
          .sql.query<{ discussionId: string; uri: string }>(
            `SELECT discussion_id AS "discussionId", uri FROM bluesky_links WHERE tenant_id = $1 AND discussion_id = ANY($2::text[]) AND uri IS NOT NULL`,
            [[...batch.keys()]],
            "bluesky_posts_of",
          )
          .then(
            (rows) => {
              const found = new Map(rows.map((r) => [r.discussionId, { uri: r.uri, url: postWebUrl(r.uri) }]));
              for (const [id, resolvers] of batch) for (const r of resolvers) r(found.get(id) ?? null);
            },
            () => {
              for (const resolvers of batch.values()) for (const r of resolvers) r(null);
            },
          );
      });
    }
    waiting.set(discussionId, [...(waiting.get(discussionId) ?? []), resolve]);
  });
}

/** The tenant's linked discussions, newest first (the console's list): at most `limit`. */
export async function listBlueskyLinks(ctx: RequestContext, limit: number): Promise<BlueskyLinkView[]> {
  const rows = await store(ctx).sql.query<LinkRow & { replies: number }>(
    `SELECT l.discussion_id AS "discussionId", l.uri, l.posted, l.created_at AS "createdAt", l.polled_at AS "polledAt",
            l.next_poll_at AS "nextPollAt", l.last_error AS "lastError",
            (SELECT count(*)::int FROM bluesky_replies r WHERE r.tenant_id = l.tenant_id AND r.discussion_id = l.discussion_id) AS replies
       FROM bluesky_links l WHERE l.tenant_id = $1 ORDER BY l.created_at DESC, l.discussion_id LIMIT $2`,
    [Math.max(1, Math.min(limit, 200))],
  );
  return rows.map((r) => viewOf(r, r.replies));
}

/** A post's URI and content id, the handle resolved to its DID and the post found on the AppView: 422 on `field` when it is not there. */
async function findPost(ctx: RequestContext, settings: Settings, input: string, field: string): Promise<{ uri: string; cid: string }> {
  const ref = parsePostRef(input);
  if (!ref) throw errors.validation([{ path: field, message: POST_REF_RULE }]);
  const appView = publicAgent(ctx.app.bluesky.http, settings.bluesky.appView);
  const unreachable = (err: unknown) =>
    errors.blueskyUnreachable(`the AppView ${settings.bluesky.appView} did not answer: ${xrpcProblem(err)}`);
  let did: string;
  if ("did" in ref) did = ref.did;
  else {
    try {
      did = (await appView.com.atproto.identity.resolveHandle({ handle: ref.handle })).data.did;
    } catch (err) {
      if (isNotFound(err)) throw errors.validation([{ path: field, message: `no account has the handle ${ref.handle}` }]);
      throw unreachable(err);
    }
  }
  const uri = postUri(did, ref.rkey);
  let posts;
  try {
    posts = (await appView.app.bsky.feed.getPosts({ uris: [uri] })).data.posts;
  } catch (err) {
    if (isNotFound(err)) throw errors.validation([{ path: field, message: "no such post on Bluesky" }]);
    throw unreachable(err);
  }
  const post = posts.find((p) => p.uri === uri);
  if (!post) throw errors.validation([{ path: field, message: "no such post on Bluesky (deleted, or not visible)" }]);
  return { uri, cid: post.cid };
}

/** The link written: read from now on. */
async function saveLink(ctx: RequestContext, discussionId: string, post: { uri: string; cid: string }, posted: boolean): Promise<void> {
  const now = ctx.app.clock.now();
  await store(ctx).sql.query(
    `INSERT INTO bluesky_links (tenant_id, discussion_id, uri, cid, posted, created_at, next_poll_at)
     VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $6::timestamptz)
     ON CONFLICT (tenant_id, discussion_id) DO UPDATE
        SET uri = EXCLUDED.uri, cid = EXCLUDED.cid, posted = EXCLUDED.posted, created_at = EXCLUDED.created_at,
            next_poll_at = EXCLUDED.next_poll_at, polled_at = NULL, changed_at = NULL, failures = 0, last_error = NULL`,
    [discussionId, post.uri, post.cid, posted, now],
  );
}

/**
 * Links the discussion to the post `input` names (an at:// URI or a bsky.app URL), or unlinks it
 * (null). 409 bluesky_disabled while Bluesky is off; 422 on `bluesky` for a discussion without a url,
 * a string that names no post, or a post the AppView does not have; 502 bluesky_unreachable when the AppView does not answer.
 */
export async function linkDiscussion(ctx: RequestContext, discussionId: string, input: string | null): Promise<void> {
  const settings = await enabledSettings(ctx);
  if (input === null) {
    await store(ctx).sql.query(`DELETE FROM bluesky_links WHERE tenant_id = $1 AND discussion_id = $2`, [discussionId]);
    await recordAudit(ctx, "discussion.bluesky_link", { type: "discussion", id: discussionId }, { uri: null });
    return;
  }
  await discussionWithUrl(ctx, discussionId, "bluesky");
  const post = await findPost(ctx, settings, input, "bluesky");
  const current = await blueskyLinkOf(ctx, discussionId);
  if (current?.uri === post.uri) return;
  await saveLink(ctx, discussionId, post, false);
  await recordAudit(ctx, "discussion.bluesky_link", { type: "discussion", id: discussionId }, { uri: post.uri });
}

/** The post a discussion is shared as: its title (else its url), and its page as an external embed card. */
export function sharePost(d: { title: string | null; url: string }, now: Date): Record<string, unknown> & { text: string } {
  const text = [...(d.title?.trim() || d.url)].slice(0, MAX_POST_TEXT).join("");
  return {
    $type: "app.bsky.feed.post",
    text,
    createdAt: now.toISOString(),
    embed: {
      $type: "app.bsky.embed.external",
      external: { uri: d.url, title: [...(d.title ?? d.url)].slice(0, 300).join(""), description: "" },
    },
  };
}

/** Posts the discussion from the site's account (the agent signed in): the new post's URI and content id. */
export async function publishDiscussion(
  agent: AtpAgent,
  d: { title: string | null; url: string },
  now: Date,
): Promise<{ uri: string; cid: string }> {
  const record = sharePost(d, now);
  const { uri, cid } = await agent.post(record);
  return { uri, cid };
}

/**
 * POST /api/v1/discussions/{id}/bluesky: the discussion posted from the site's account and linked
 * (`created` true), or its link as it is when it has a post already (false).
 */
export async function postDiscussion(ctx: RequestContext, discussionId: string): Promise<{ created: boolean; link: BlueskyLinkView }> {
  const settings = await enabledSettings(ctx);
  const d = await discussionWithUrl(ctx, discussionId, "url");
  const current = await blueskyLinkOf(ctx, discussionId);
  if (current?.uri) return { created: false, link: current };
  const agent = await siteAgent(ctx, settings, ctx.app.bluesky.http);
  let post: { uri: string; cid: string };
  try {
    post = await publishDiscussion(agent, d, ctx.app.clock.now());
  } catch (err) {
    throw errors.blueskyUnreachable(`the post was not made at ${settings.bluesky.service}: ${xrpcProblem(err)}`);
  }
  await saveLink(ctx, discussionId, post, true);
  await recordAudit(ctx, "discussion.bluesky_post", { type: "discussion", id: discussionId }, { uri: post.uri });
  return { created: true, link: (await blueskyLinkOf(ctx, discussionId))! };
}

/**
 * autoPost: a new discussion with a url, of a site that posts each one, gets a link row without a
 * post; the poller posts it from the site's account (retried with backoff) and links it. Run where
 * the discussion is made, after it is.
 */
export async function queueAutoPost(ctx: RequestContext, discussionId: string): Promise<void> {
  const now = ctx.app.clock.now();
  await store(ctx).sql.query(
    `INSERT INTO bluesky_links (tenant_id, discussion_id, uri, posted, created_at, next_poll_at)
     VALUES ($1, $2, NULL, true, $3::timestamptz, $3::timestamptz) ON CONFLICT DO NOTHING`,
    [discussionId, now],
  );
}

/** Whether a new discussion of these settings is posted to Bluesky (AUTO_POST). */
export const autoPosts = (settings: Settings): boolean =>
  settings.bluesky.enabled && settings.bluesky.autoPost && settings.bluesky.handle !== null && tenantHasPassword(settings);

const tenantHasPassword = (settings: Settings): boolean => typeof settings.bluesky.appPasswordEnc === "string";
