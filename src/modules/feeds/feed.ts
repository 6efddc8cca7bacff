// Atom 1.0 feeds of comments (contract section 19): a discussion's latest visible comments, or the
// tenant's. Built by the `feed` library from the recent-comments list (src/modules/recent/recent.ts),
// each entry the comment's permalink (its discussion's page plus `#comment-<id>`, as the reply emails
// and the thread element's Link action make it) with its stored bodyHtml as the html content.
import { Feed } from "feed";
import type { RequestContext } from "../../context/request.js";
import { tenantIdOf } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { DISCUSSION_ID_RE } from "../../lib/ids.js";
import { storedBodyHtml } from "../comments/dto.js";
import { getDiscussion } from "../discussions/discussions.js";
import { commentLink } from "../email/templates.js";
import { listRecentComments, type RecentComment } from "../recent/recent.js";

/** Entries per feed. */
export const FEED_ENTRIES = 50;

export interface FeedScope {
  /** the discussion's feed, or (null) the tenant's recent comments */
  discussionId: string | null;
  /** this feed's own address (its `self` link) */
  selfUrl: string;
}

const urn = (tenantId: string, ...parts: string[]) => `urn:engagement:${[tenantId, ...parts].map(encodeURIComponent).join(":")}`;

/** The feed's Atom XML. A discussion that does not exist (or not of this tenant) is a 404. */
export async function atomFeed(ctx: RequestContext, scope: FeedScope): Promise<string> {
  const tenantId = tenantIdOf(ctx);
  let title = "Recent comments";
  let link: string | null = null;
  if (scope.discussionId !== null) {
    if (!DISCUSSION_ID_RE.test(scope.discussionId)) throw errors.notFound("Discussion");
    const d = await getDiscussion(ctx, scope.discussionId);
    title = `Comments on ${d.title ?? d.id}`;
    link = d.url && /^https?:\/\//i.test(d.url) ? d.url : null;
  }
  const page = await listRecentComments(ctx, {
    limit: FEED_ENTRIES,
    discussionIds: scope.discussionId === null ? null : [scope.discussionId],
  });
  const items = page.items;
  const feed = new Feed({
    id: urn(tenantId, scope.discussionId === null ? "recent" : `discussion:${scope.discussionId}`),
    title,
    ...(link ? { link } : {}),
    updated: items[0] ? publishedAt(items[0]) : new Date(0),
    generator: false,
    copyright: "",
    feedLinks: { atom: scope.selfUrl },
  });
  for (const item of items) feed.addItem(entryOf(tenantId, item));
  return feed.atom1();
}

function publishedAt(item: RecentComment): Date {
  return item.comment.publishedAt ?? item.comment.createdAt;
}

function entryOf(tenantId: string, item: RecentComment) {
  const c = item.comment;
  const where = item.discussionTitle ?? c.discussionId;
  return {
    id: urn(tenantId, "comment", c.id),
    title: `${c.author.name} on ${where}`,
    link: commentLink(item.discussionUrl, c.id) ?? urn(tenantId, "comment", c.id),
    date: c.editedAt ?? publishedAt(item),
    published: publishedAt(item),
    content: storedBodyHtml(c),
    author: [{ name: c.author.name }],
  };
}
