// A discussion as an ActivityPub Article and a local comment as a Note (contract section 24), built
// with Fedify's vocabulary from the rows read here: what the object dispatchers answer and what the
// outbound activities carry. A comment is read as its public shape, the JSON the API answers and events
// carry (eng_comment_json, its one builder), and mapped to a Note: its columns are not read here. A
// comment of a remote author (reader `ap:…`) is not ours to publish: its id is the remote Note's.
import { type Context } from "@fedify/fedify";
import { Article, Collection, Mention, Note, PUBLIC_COLLECTION } from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import type { TenantSql } from "../../../db/tenant-store.js";
import type { CommentJson } from "../../../events/write-results.js";
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

/** The tenant's discussion (`sql`: its store's). */
export async function readDiscussion(sql: TenantSql, id: string): Promise<DiscussionRow | null> {
  const [row] = await sql.query<DiscussionRow>(
    `SELECT d.id, d.title, d.url, d.created_at AS "createdAt", d.comment_count AS "commentCount"
       FROM discussions d WHERE d.tenant_id = $1 AND d.id = $2`,
    [id],
    "eng_federation_discussion",
  );
  return row ?? null;
}

interface NoteSqlRow {
  /** the comment's public shape; null when its author has no reader row */
  comment: CommentJson | null;
  discussionUrl: string | null;
  parentObjectId: string | null;
  parentActorId: string | null;
}

/** A comment's public shape (eng_comment_json) as a Note's row, with where it sits in the fediverse. */
export function noteRowOf(comment: CommentJson, at: Omit<NoteSqlRow, "comment">): NoteRow {
  return {
    id: comment.id,
    discussionId: comment.discussionId,
    parentId: comment.parentId,
    authorId: comment.author.id,
    authorName: comment.author.name,
    // a comment written before bodies were rendered has none until the start-up backfill reaches it
    bodyHtml: comment.bodyHtml ?? "",
    status: comment.status,
    createdAt: new Date(comment.createdAt),
    editedAt: comment.editedAt === null ? null : new Date(comment.editedAt),
    ...at,
  };
}

/** The tenant's comment as a Note's row (`sql`: its store's). */
export async function readNote(sql: TenantSql, commentId: string): Promise<NoteRow | null> {
  const [row] = await sql.query<NoteSqlRow>(
    `SELECT eng_comment_json(c) AS comment, d.url AS "discussionUrl",
            po.object_id AS "parentObjectId", po.actor_id AS "parentActorId"
       FROM comments c
       JOIN discussions d ON d.tenant_id = c.tenant_id AND d.id = c.discussion_id
       LEFT JOIN federation_objects po ON po.tenant_id = c.tenant_id AND po.comment_id = c.parent_id AND po.kind = 'note'
      WHERE c.tenant_id = $1 AND c.id = $2`,
    [commentId],
    "eng_federation_note",
  );
  if (!row?.comment) return null;
  const { comment, ...at } = row;
  return noteRowOf(comment, at);
}

const instant = (d: Date) => Temporal.Instant.fromEpochMilliseconds(d.getTime());

export const escapeHtml = (s: string) =>
  s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

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
