// A reader's inbox items for their own stream (GET /api/v1/stream/me, the myInbox subscription; the
// engine is src/stream-engine/reader-stream.ts): the items listed exactly as GET /api/v1/me/inbox
// lists them (the same filter: comment visible, author not erased, within inbox.retentionDays) with
// seq past the stream's last, in seq order, each with its data in exactly that route's item shape
// (the comment and parent as REST shows them to the reader, myVote included). Crosses no tenant:
// every statement is bound to the reader's tenant ($1), but it runs outside a request, so it is an engine.
import type { Sql } from "../../../db/sql.js";
import { ReaderFrame, type FeedRead, type ReaderFeed, type ReaderKey } from "../../../stream-engine/reader-stream.js";
import { readerKey } from "../../../stream-engine/reader-stream.js";
import type { InboxItemType } from "../../../generated/prisma/enums.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "../../comments/comment-row.js";
import { commentToJson, type CommentWithAuthor } from "../../comments/dto.js";
import type { InboxItem } from "../inbox.js";

interface FeedRow extends CommentSqlRow {
  inbox_head: number | null;
  inbox_unread: number;
  item_seq: number | null;
  item_id: string;
  item_type: InboxItemType;
  item_parent_id: string | null;
  item_created_at: Date;
  item_read_at: Date | null;
  discussion_title: string | null;
  discussion_url: string | null;
  my_vote: number;
}

const LISTED = `i.tenant_id = $1 AND i.reader_id = $2 AND i.created_at >= $3 AND c.status = 'approved' AND c.author_id <> ''`;

// one statement: the reader's head and unread count, and the items after $4 (none when $4 is null)
const READ = `SELECT (SELECT seq FROM inbox_counters WHERE tenant_id = $1 AND reader_id = $2) AS inbox_head,
    (SELECT count(*)::int FROM inbox_items i JOIN comments c ON c.tenant_id = i.tenant_id AND c.id = i.comment_id
      WHERE ${LISTED} AND i.read_at IS NULL) AS inbox_unread, o.*
  FROM (VALUES (1)) AS one (x) LEFT JOIN LATERAL (
    SELECT i.seq AS item_seq, i.id AS item_id, i.type::text AS item_type, i.parent_id AS item_parent_id,
        i.created_at AS item_created_at, i.read_at AS item_read_at, d.title AS discussion_title, d.url AS discussion_url,
        COALESCE(v.value, 0)::int AS my_vote, ${COMMENT_COLUMNS}
      FROM inbox_items i
      JOIN comments c ON c.tenant_id = i.tenant_id AND c.id = i.comment_id
      JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
      JOIN discussions d ON d.tenant_id = i.tenant_id AND d.id = i.discussion_id
      LEFT JOIN votes v ON v.tenant_id = i.tenant_id AND v.comment_id = c.id AND v.reader_id = $2
     WHERE ${LISTED} AND $4::int IS NOT NULL AND i.seq > $4::int
     ORDER BY i.seq LIMIT $5) o ON true
  ORDER BY o.item_seq`;

const PARENTS = `SELECT ${COMMENT_COLUMNS}, COALESCE(v.value, 0)::int AS my_vote FROM comments c
  JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
  LEFT JOIN votes v ON v.tenant_id = c.tenant_id AND v.comment_id = c.id AND v.reader_id = $2
  WHERE c.tenant_id = $1 AND c.id = ANY($3::text[])`;

const HEADS = `SELECT tenant_id, reader_id, seq FROM inbox_counters c
  JOIN unnest($1::text[], $2::text[]) AS k (t, r) ON c.tenant_id = k.t AND c.reader_id = k.r`;

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** A comment as REST shows it to the reader (GET /api/v1/me/inbox's `comment` and `parent`): with their vote. */
const restCommentJson = (c: CommentWithAuthor, myVote: number) => ({ ...commentToJson(c), myVote });

/** An item's data, member for member as GET /api/v1/me/inbox lists it. */
function itemJson(item: InboxItem, myVote: number, parentVote: number): string {
  return JSON.stringify({
    id: item.id,
    type: item.type,
    discussionId: item.discussionId,
    discussionTitle: item.discussionTitle,
    comment: restCommentJson(item.comment, myVote),
    ...(item.parent ? { parent: restCommentJson(item.parent, parentVote) } : {}),
    createdAt: iso(item.createdAt),
    readAt: iso(item.readAt),
  });
}

export function createInboxFeed(sql: Sql): ReaderFeed {
  return {
    async read(key: ReaderKey, after: number | null, limit: number, keptSince: Date): Promise<FeedRead> {
      const rows = await sql.query<FeedRow>(READ, [key.tenantId, key.readerId, keptSince, after, limit + 1], "inbox_stream_read");
      const first = rows[0];
      const itemRows = rows.filter((r) => r.item_seq !== null).slice(0, limit);
      const parentIds = [...new Set(itemRows.flatMap((r) => (r.item_parent_id ? [r.item_parent_id] : [])))];
      const parents = new Map<string, { comment: CommentWithAuthor; myVote: number }>();
      if (parentIds.length > 0) {
        const prows = await sql.query<CommentSqlRow & { my_vote: number }>(
          PARENTS,
          [key.tenantId, key.readerId, parentIds],
          "inbox_stream_parents",
        );
        for (const p of prows) parents.set(p.id, { comment: rowToComment(p), myVote: p.my_vote });
      }
      const items = itemRows.map((r) => {
        const parent = (r.item_parent_id && parents.get(r.item_parent_id)) || null;
        const item: InboxItem = {
          id: r.item_id,
          type: r.item_type,
          discussionId: r.discussion_id,
          discussionTitle: r.discussion_title,
          // GraphQL's myInbox subscription selects it; the REST item (itemJson) has no such member
          discussionUrl: r.discussion_url,
          comment: rowToComment(r),
          parent: parent?.comment ?? null,
          createdAt: r.item_created_at,
          readAt: r.item_read_at,
        };
        // a reader never votes on their own comment: as the REST myVote, 0 there
        const parentVote = parent ? (parent.comment.author.id === key.readerId ? 0 : parent.myVote) : 0;
        return new ReaderFrame("inbox_item", r.item_seq as number, itemJson(item, r.my_vote, parentVote), item);
      });
      return {
        items,
        more: rows.filter((r) => r.item_seq !== null).length > limit,
        head: first?.inbox_head ?? 0,
        unreadCount: first?.inbox_unread ?? 0,
      };
    },

    async heads(keys: readonly ReaderKey[]): Promise<Map<string, number>> {
      if (keys.length === 0) return new Map();
      const rows = await sql.query<{ tenant_id: string; reader_id: string; seq: number }>(
        HEADS,
        [keys.map((k) => k.tenantId), keys.map((k) => k.readerId)],
        "inbox_stream_heads",
      );
      return new Map(rows.map((r) => [readerKey({ tenantId: r.tenant_id, readerId: r.reader_id }), r.seq]));
    },
  };
}
