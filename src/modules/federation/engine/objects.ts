// A discussion as an ActivityPub Article and a local comment as a Note (contract section 24), built
// with Fedify's vocabulary from the rows read here: what the object dispatchers answer and what the
// outbound activities carry. A comment of a remote author (reader `ap:…`) is not ours to publish:
// its id is the remote Note's.
import { type Context } from "@fedify/fedify";
import { Article, Collection, Mention, Note, PUBLIC_COLLECTION } from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import type { Sql } from "../../../db/sql.js";
import type { FederationData } from "./context.js";

export interface DiscussionRow {
  id: string;
  title: string | null;
  url: string | null;
  createdAt: Date;
  commentCount: number;
}

export interface NoteRow {
  id: string;
  discussionId: string;
  parentId: string | null;
  authorId: string;
  authorName: string;
  bodyHtml: string;
  status: string;
  createdAt: Date;
  editedAt: Date | null;
  discussionUrl: string | null;
  /** the parent's remote Note id and author, when the parent came from the fediverse */
  parentObjectId: string | null;
  parentActorId: string | null;
}

export const isRemoteAuthor = (readerId: string) => readerId.startsWith("ap:");

export async function readDiscussion(sql: Sql, tenantId: string, id: string): Promise<DiscussionRow | null> {
  const [row] = await sql.query<DiscussionRow>(
    `SELECT d.id, d.title, d.url, d.created_at AS "createdAt", d.comment_count AS "commentCount"
       FROM discussions d WHERE d.tenant_id = $1 AND d.id = $2`,
    [tenantId, id],
    "eng_federation_discussion",
  );
  return row ?? null;
}

export async function readNote(sql: Sql, tenantId: string, commentId: string): Promise<NoteRow | null> {
  const [row] = await sql.query<NoteRow>(
    `SELECT c.id, c.discussion_id AS "discussionId", c.parent_id AS "parentId", c.author_id AS "authorId",
            COALESCE(c.author_name, r.name) AS "authorName", COALESCE(c.body_html, '') AS "bodyHtml", c.status::text AS status,
            c.created_at AS "createdAt", c.edited_at AS "editedAt", d.url AS "discussionUrl",
            po.object_id AS "parentObjectId", po.actor_id AS "parentActorId"
       FROM comments c
       JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
       JOIN discussions d ON d.tenant_id = c.tenant_id AND d.id = c.discussion_id
       LEFT JOIN federation_objects po ON po.tenant_id = c.tenant_id AND po.comment_id = c.parent_id AND po.kind = 'note'
      WHERE c.tenant_id = $1 AND c.id = $2`,
    [tenantId, commentId],
    "eng_federation_note",
  );
  return row ?? null;
}

const instant = (d: Date) => Temporal.Instant.fromEpochMilliseconds(d.getTime());

const escapeHtml = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

/** A comment's address on its page (the embed's `#comment-<id>`, embed/src/thread/address.ts). */
export const commentPermalink = (discussionUrl: string, commentId: string) =>
  `${discussionUrl.split("#")[0]}#comment-${encodeURIComponent(commentId)}`;

export function articleOf(ctx: Context<FederationData>, tenantId: string, d: DiscussionRow & { url: string }): Article {
  const id = ctx.getObjectUri(Article, { tenant: tenantId, discussion: d.id });
  return new Article({
    id,
    name: d.title ?? d.url,
    url: new URL(d.url),
    attribution: ctx.getActorUri(tenantId),
    published: instant(d.createdAt),
    to: PUBLIC_COLLECTION,
    cc: ctx.getFollowersUri(tenantId),
    content: `<p><a href="${escapeHtml(d.url)}">${escapeHtml(d.title ?? d.url)}</a></p>`,
    replies: new Collection({ id: new URL(`${id.href}#replies`), totalItems: d.commentCount }),
  });
}

/**
 * A local comment as a Note by the site's actor: its author's name first (the fediverse sees the
 * site's actor post it), the rendered body, in reply to the parent's Note (a remote one's own id) or
 * the discussion's Article; a reply to a remote author mentions them.
 */
export function noteOf(
  ctx: Context<FederationData>,
  tenantId: string,
  c: NoteRow,
  mention: { actorId: string; name: string } | null,
): Note {
  const inReplyTo = c.parentId
    ? c.parentObjectId
      ? new URL(c.parentObjectId)
      : ctx.getObjectUri(Note, { tenant: tenantId, comment: c.parentId })
    : ctx.getObjectUri(Article, { tenant: tenantId, discussion: c.discussionId });
  const mentionHtml = mention
    ? `<span class="h-card"><a class="u-url mention" href="${escapeHtml(mention.actorId)}">${escapeHtml(mention.name)}</a></span> `
    : "";
  return new Note({
    id: ctx.getObjectUri(Note, { tenant: tenantId, comment: c.id }),
    attribution: ctx.getActorUri(tenantId),
    replyTarget: inReplyTo,
    content: `<p>${mentionHtml}<strong>${escapeHtml(c.authorName)}</strong>:</p>${c.bodyHtml}`,
    published: instant(c.createdAt),
    updated: c.editedAt ? instant(c.editedAt) : null,
    url: c.discussionUrl ? new URL(commentPermalink(c.discussionUrl, c.id)) : null,
    to: PUBLIC_COLLECTION,
    ccs: [ctx.getFollowersUri(tenantId), ...(mention ? [new URL(mention.actorId)] : [])],
    tags: mention ? [new Mention({ href: new URL(mention.actorId), name: mention.name })] : [],
  });
}
