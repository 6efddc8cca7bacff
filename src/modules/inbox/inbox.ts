// The reader's inbox (contract section 19): replies to them (and, later, new comments in discussions
// they follow), kept per reader in inbox_items by the same statement as the comment that causes them
// (eng_reply_notification). Read and marked read by the reader themself (identity, any key).
//
// An item is listed, and counted as unread, only while its comment is visible (approved) and its
// author not erased (author_id ''), and for inbox.retentionDays after it was written: a comment
// rejected, deleted or erased takes its items out of every list at once, by this filter at read time,
// without a write to each inbox (docs/choices.md); a comment approved again brings them back. The
// reader's own erasure deletes their items (eng_erase_reader_rest), and the retention job deletes
// items past their tenant's retentionDays (src/modules/retention/engine/retention.ts).
import { loadTenant, requireReader, tenantIdOf, type RequestContext, store } from "../../context/request.js";
import { errors, type FieldError } from "../../lib/errors.js";
import { checkLimit, decodeTimeIdCursor, timeIdCursor, toPage, type Page, type PageArgs } from "../../lib/pagination.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import type { InboxItemType } from "../../generated/prisma/enums.js";
import type { CommentWithAuthor } from "../comments/dto.js";
import { COMMENT_COLUMNS, rowToComment, type CommentSqlRow } from "../comments/comment-row.js";

/** At most this many ids in one mark-read. */
export const MAX_MARK_IDS = 100;

export interface InboxItem {
  id: string;
  type: InboxItemType;
  discussionId: string;
  discussionTitle: string | null;
  /** the discussion's address (its `url`), where its comment's permalink is: null when it has none */
  discussionUrl: string | null;
  comment: CommentWithAuthor;
  /** the comment replied to (replies) */
  parent: CommentWithAuthor | null;
  createdAt: Date;
  readAt: Date | null;
}

export interface InboxPage extends Page<InboxItem> {
  unreadCount: number;
}

interface InboxRow extends CommentSqlRow {
  item_id: string;
  item_type: InboxItemType;
  item_parent_id: string | null;
  item_created_at: Date;
  item_read_at: Date | null;
  discussion_title: string | null;
  discussion_url: string | null;
}

// what makes an item listed: its comment visible and its author not erased, within retention ($3)
const LISTED = `FROM inbox_items i
  JOIN comments c ON c.tenant_id = i.tenant_id AND c.id = i.comment_id
  WHERE i.tenant_id = $1 AND i.reader_id = $2 AND i.created_at >= $3 AND c.status = 'approved' AND c.author_id <> ''`;

const UNREAD_COUNT = `SELECT count(*)::int AS n ${LISTED} AND i.read_at IS NULL`;

const statements = new Map<string, string>();

function pageStatement(unread: boolean, after: boolean): { name: string; text: string } {
  const name = `inbox_page_${unread ? "u" : "all"}_${after ? "a" : "f"}`;
  let text = statements.get(name);
  if (!text) {
    text = `SELECT i.id AS item_id, i.type::text AS item_type, i.parent_id AS item_parent_id, i.created_at AS item_created_at,
        i.read_at AS item_read_at, d.title AS discussion_title, d.url AS discussion_url, ${COMMENT_COLUMNS}
      FROM inbox_items i
      JOIN comments c ON c.tenant_id = i.tenant_id AND c.id = i.comment_id
      JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
      JOIN discussions d ON d.tenant_id = i.tenant_id AND d.id = i.discussion_id
      WHERE i.tenant_id = $1 AND i.reader_id = $2 AND i.created_at >= $3 AND c.status = 'approved' AND c.author_id <> ''
        ${unread ? "AND i.read_at IS NULL" : ""}
        ${after ? "AND (i.created_at, i.id) < ($5::timestamptz, $6::uuid)" : ""}
      ORDER BY i.created_at DESC, i.id DESC LIMIT $4`;
    statements.set(name, text);
  }
  return { name, text };
}

const COMMENTS_BY_ID = `SELECT ${COMMENT_COLUMNS} FROM comments c
  JOIN readers r ON r.tenant_id = c.tenant_id AND r.id = c.author_id
  WHERE c.tenant_id = $1 AND c.id = ANY($2::text[])`;

/** The oldest time an item of this tenant may have to be listed. */
async function keptSince(ctx: RequestContext): Promise<Date> {
  const days = resolveSettings((await loadTenant(ctx)).settings).inbox.retentionDays;
  return new Date(ctx.app.clock.now().getTime() - days * 86_400_000);
}

async function countUnread(ctx: RequestContext, readerId: string, since: Date): Promise<number> {
  const rows = await store(ctx).sql.query<{ n: number }>(UNREAD_COUNT, [readerId, since], "inbox_unread_count");
  return rows[0]?.n ?? 0;
}

/** How many unread items the reader's inbox lists. */
export async function myInboxUnreadCount(ctx: RequestContext): Promise<number> {
  const reader = await requireReader(ctx);
  return countUnread(ctx, reader.id, await keptSince(ctx));
}

/** The reader's inbox, newest first; `unread`: only the items not read yet. */
export async function listMyInbox(ctx: RequestContext, args: PageArgs & { unread?: boolean | null }): Promise<InboxPage> {
  const reader = await requireReader(ctx);
  const limit = checkLimit(args.limit);
  const unread = args.unread === true;
  // a cursor belongs to the list it came from
  const tag = unread ? "inbox:unread" : "inbox";
  const after = args.cursor ? decodeTimeIdCursor(args.cursor, tag) : null;
  const since = await keptSince(ctx);
  const { name, text } = pageStatement(unread, after !== null);
  const [rows, unreadCount] = await Promise.all([
    store(ctx).sql.query<InboxRow>(text, [reader.id, since, limit + 1, ...(after ?? [])], name),
    countUnread(ctx, reader.id, since),
  ]);
  const parents = await parentsOf(
    ctx,
    rows.flatMap((r) => (r.item_parent_id ? [r.item_parent_id] : [])),
  );
  const items = rows.map((r) => ({
    id: r.item_id,
    type: r.item_type,
    discussionId: r.discussion_id,
    discussionTitle: r.discussion_title,
    discussionUrl: r.discussion_url,
    comment: rowToComment(r),
    parent: (r.item_parent_id && parents.get(r.item_parent_id)) || null,
    createdAt: r.item_created_at,
    readAt: r.item_read_at,
  }));
  return { ...toPage(items, limit, (i) => timeIdCursor(i.createdAt, i.id, tag)), unreadCount };
}

/** The comments replied to by these items (by id), as REST shows them. */
async function parentsOf(ctx: RequestContext, ids: readonly string[]): Promise<Map<string, CommentWithAuthor>> {
  if (ids.length === 0) return new Map();
  const rows = await store(ctx).sql.query<CommentSqlRow>(COMMENTS_BY_ID, [[...new Set(ids)]], "inbox_parents");
  return new Map(rows.map((r) => [r.id, rowToComment(r)]));
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const MARK_SOME = `UPDATE inbox_items SET read_at = $3 WHERE tenant_id = $1 AND reader_id = $2 AND read_at IS NULL AND id = ANY($4::uuid[])`;
const MARK_ALL = `UPDATE inbox_items SET read_at = $3 WHERE tenant_id = $1 AND reader_id = $2 AND read_at IS NULL`;

/**
 * Marks the reader's items `ids` (ids not theirs, or not an item, are passed over), or `all` of them,
 * read; answers the unread count after it.
 */
export async function markMyInboxRead(
  ctx: RequestContext,
  input: { ids?: readonly string[] | null; all?: boolean | null },
): Promise<{ unreadCount: number }> {
  const reader = await requireReader(ctx);
  const problems: FieldError[] = [];
  const ids = input.ids ?? null;
  const all = input.all ?? null;
  if (all !== null && all !== true) problems.push({ path: "all", message: "must be true when given" });
  if (ids === null && all === null) problems.push({ path: "ids", message: 'give "ids" or "all": true' });
  if (ids !== null && all !== null) problems.push({ path: "all", message: 'give "ids" or "all", not both' });
  if (ids !== null) {
    if (ids.length === 0 || ids.length > MAX_MARK_IDS) problems.push({ path: "ids", message: `must hold 1..${MAX_MARK_IDS} ids` });
    ids.forEach((id, i) => {
      if (!UUID_RE.test(id)) problems.push({ path: `ids[${i}]`, message: "must be an inbox item's id" });
    });
  }
  if (problems.length) throw errors.validation(problems);
  const now = ctx.app.clock.now();
  if (ids !== null) {
    await store(ctx).sql.query(MARK_SOME, [reader.id, now, [...new Set(ids)]], "inbox_mark_some");
  } else {
    await store(ctx).sql.query(MARK_ALL, [reader.id, now], "inbox_mark_all");
  }
  const unreadCount = await countUnread(ctx, reader.id, await keptSince(ctx));
  // every stream of the reader (their other tabs, on any instance) gets `inbox_read`
  ctx.app.events.inboxRead(tenantIdOf(ctx), reader.id, unreadCount);
  return { unreadCount };
}
