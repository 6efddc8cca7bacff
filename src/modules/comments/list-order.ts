// The orders of a discussion's comment list and what follows from them: the sorts and their keys,
// the parts the orders by a count are read in, the cursors (issued for one list, decoded back into
// a page's start), the list statement for each shape of request, and a row's place in an order.
// src/modules/comments/read.ts runs the statements.
import type { Discussion } from "../../generated/prisma/client.js";
import { sha256 } from "../../lib/sha256.js";
import {
  cursorFloat,
  cursorId,
  cursorInt4,
  cursorNotIssued,
  cursorTime,
  decodeCursor,
  encodeCursor,
  type CursorValue,
} from "../../lib/pagination.js";
import type { CommentWithAuthor } from "./dto.js";
import { COMMENT_COLUMNS } from "./comment-row.js";

export const COMMENT_SORTS = ["newest", "oldest", "top", "best", "score"] as const;
export type CommentSort = (typeof COMMENT_SORTS)[number];
export const LIST_STATUSES = ["approved", "pending", "rejected"] as const;
export type ListStatus = (typeof LIST_STATUSES)[number];

/** The keys a sort orders by: a time, the id, or a number kept on the comment. */
export type SortField = "createdAt" | "id" | "reactionTotal" | "score" | "voteBest";

/**
 * Pinned first, then the sort's own keys (all in one direction); `id` breaks ties so the order is
 * total. best: the Wilson lower bound of upvotes among votes (vote_best, kept by eng_vote), score:
 * upvotes − downvotes; both with ties newest first. Each has its index (comments_list_*_idx).
 */
export const ORDERS: Record<CommentSort, { columns: string[]; fields: SortField[]; dir: "asc" | "desc" }> = {
  newest: { columns: ["c.created_at", "c.id"], fields: ["createdAt", "id"], dir: "desc" },
  oldest: { columns: ["c.created_at", "c.id"], fields: ["createdAt", "id"], dir: "asc" },
  top: { columns: ["c.reaction_total", "c.created_at", "c.id"], fields: ["reactionTotal", "createdAt", "id"], dir: "desc" },
  best: { columns: ["c.vote_best", "c.created_at", "c.id"], fields: ["voteBest", "createdAt", "id"], dir: "desc" },
  score: { columns: ["c.score", "c.created_at", "c.id"], fields: ["score", "createdAt", "id"], dir: "desc" },
};

/**
 * The orders by a count, each read in parts by the sign of its first key, so that a comment nobody has
 * reacted to or voted on (most of them, and every new one) is in no index of its own: the part above
 * zero (and for score the part below) from the order's partial index (comments_list_top_idx,
 * comments_list_best_idx, comments_list_score_idx: only comments with that count), the part at zero
 * from the newest-first index (the first key one value there, the order is created_at, id). A post
 * then writes one list index, not four. In the order's direction: above zero, zero, below.
 */
const PARTS: Partial<Record<CommentSort, string[]>> = {
  top: ["> 0", "= 0"],
  best: ["> 0", "= 0"],
  score: ["> 0", "= 0", "< 0"],
};

/** The part of its order a cursor's first key falls in (PARTS; 0 for the time orders). */
export function partOf(sort: CommentSort, values: readonly unknown[]): number {
  if (!PARTS[sort]) return 0;
  const v = values[1] as number;
  return v > 0 ? 0 : v === 0 ? 1 : 2;
}

/**
 * A cursor is only good for the list that issued it: the same discussion, sort, status and parent.
 * Its first value names that list (a short hash, so cursors stay short).
 */
export function listTag(
  discussionId: string,
  sort: CommentSort,
  status: ListStatus,
  parentId: string | null | undefined,
  scope: ListScope,
): string {
  const list = [discussionId, sort, status, parentId ?? null, ...(scope === "top" ? ["top"] : [])];
  return sha256(JSON.stringify(list), "base64url").slice(0, 12);
}

export function cursorOf(tag: string, sort: CommentSort, c: CommentWithAuthor): CursorValue[] {
  const rest = ORDERS[sort].fields.map((f) => {
    const v = c[f];
    return v instanceof Date ? v.getTime() : v;
  });
  return [tag, c.pinned, ...rest];
}

/**
 * A cursor's last value when the page begins AT the comment whose keys it holds (a permalink's
 * `rootCursor`, src/modules/comments/permalink.ts) rather than after it, as every page's cursor does.
 */
const START_AT = "at";

/**
 * The cursor of the discussion's list (`comments(discussionId, sort)`: approved, no parentId; every
 * level, or with `topLevel` the first level only) whose page begins with `c`: its pinned flag and
 * keys, marked START_AT.
 */
export function startAtCursor(c: CommentWithAuthor, sort: CommentSort, topLevel = false): string {
  return encodeCursor([...cursorOf(listTag(c.discussionId, sort, "approved", null, topLevel ? "top" : "all"), sort, c), START_AT]);
}

/** How a cursor's value for each sort key is read: its column's type and range (created_at timestamptz, vote_best double, the counts int4). */
const CURSOR_FIELDS: Record<SortField, (v: CursorValue | undefined) => Date | number | string> = {
  createdAt: cursorTime,
  id: cursorId,
  reactionTotal: cursorInt4,
  score: cursorInt4,
  voteBest: cursorFloat,
};

/** Where a page starts: at the list's start, after the cursor's comment, or at it (START_AT). */
export type PageStart = "first" | "after" | "at";

/** The cursor's values: pinned, then the sort's keys (createdAt as a Date); and whether the page starts at them. */
export function decodeAfter(tag: string, sort: CommentSort, cursor: string): { start: PageStart; values: unknown[] } {
  const { fields } = ORDERS[sort];
  const all = decodeCursor(cursor, [fields.length + 2, fields.length + 3]);
  const start: PageStart = all.length === fields.length + 3 ? "at" : "after";
  if (start === "at" && all.pop() !== START_AT) throw cursorNotIssued();
  const [issuedBy, pinned, ...rest] = all;
  if (issuedBy !== tag || typeof pinned !== "boolean") throw cursorNotIssued();
  // each value as its column holds it (a forged one out of range is refused here, not by PostgreSQL)
  const values = rest.map((v, i) => CURSOR_FIELDS[fields[i]!](v));
  return { start, values: [pinned, ...values] };
}

/**
 * The list statement for one shape of request (sort × status × scope × cursor), built once and run
 * as a named prepared statement. $1 tenant, $2 discussion, $3 limit + 1, then the parent id, then the
 * cursor's pinned flag and keys. Rows after the cursor in the order (pinned desc, keys): after a
 * pinned row come the later pinned rows and every unpinned one; after an unpinned row only later
 * unpinned rows. A start-at cursor (START_AT) takes its own row too (`<=` for `<`). No row at all:
 * the discussion does not exist; one row with a null id: an empty page.
 */
const statements = new Map<string, { name: string; text: string }>();

/** which comments of the discussion a list holds: all of them, the first level, or one comment's replies */
export type ListScope = "all" | "top" | "parent";

/**
 * The discussion's own columns, read beside the page by the list statement of
 * `listCommentsWithDiscussion` (the same snapshot as the page's rows: its seq is the last event the
 * page can show).
 */
export const DISCUSSION_COLUMNS = `d.title AS d_title, d.url AS d_url, d.url_key AS d_url_key, d.state::text AS d_state, d.seq AS d_seq, d.comment_count AS d_comment_count,
  d.reaction_counts AS d_reaction_counts, d.created_at AS d_created_at, d.updated_at AS d_updated_at`;

export interface DiscussionSqlColumns {
  d_title: string | null;
  d_url: string | null;
  d_url_key: string | null;
  d_state: Discussion["state"];
  d_seq: number;
  d_comment_count: number;
  d_reaction_counts: Discussion["reactionCounts"];
  d_created_at: Date;
  d_updated_at: Date;
}

export function listStatement(
  sort: CommentSort,
  status: ListStatus,
  scope: ListScope,
  start: PageStart,
  part: number,
  withDiscussion = false,
): { name: string; text: string } {
  const name = `comments_list_${sort}_${status}_${scope === "parent" ? "p" : scope === "top" ? "t" : "d"}_${start === "first" ? "f" : start === "after" ? "a" : "s"}${part}${withDiscussion ? "_wd" : ""}`;
  let statement = statements.get(name);
  if (!statement) statements.set(name, (statement = { name, text: listText(sort, status, scope, start, part, withDiscussion) }));
  return statement;
}

/** What a reader's list holds: approved comments, and tombstones of deleted ones while they have visible replies. */
export const VISIBLE_IN_LIST = "(c.status = 'approved' OR (c.status = 'deleted' AND c.reply_count > 0))";

function listText(
  sort: CommentSort,
  status: ListStatus,
  scope: ListScope,
  start: PageStart,
  part: number,
  withDiscussion: boolean,
): string {
  const o = ORDERS[sort];
  let n = 4;
  const parent = scope === "parent" ? `AND c.parent_id = $${n++}` : scope === "top" ? "AND c.parent_id IS NULL" : "";
  const visibility = status === "approved" ? VISIBLE_IN_LIST : `c.status = '${status}'`;
  const from = `FROM comments c WHERE c.tenant_id = d.tenant_id AND c.discussion_id = d.id AND ${visibility} ${parent}`;
  // within a part pinned is one value (and in a count's part at zero, the count too): the order is
  // the sort's columns alone (an index read either way)
  const within = o.columns.map((col) => `${col} ${o.dir.toUpperCase()}`).join(", ");
  const whole = ["c.pinned DESC", within].join(", ");
  const parts = (PARTS[sort] ?? [null]).map((p) => (p === null ? "" : ` AND ${o.columns[0]} ${p}`));
  const branch = (where: string) => `(SELECT c.* ${from} AND ${where} ORDER BY ${within} LIMIT $3)`;
  // The pinned comments, then the others, each in its parts: each branch is one range of one index
  // (oldest-first reads the newest-first index backwards, which only a range of one pinned value
  // can). After a cursor (pinned, columns…): the rest of its part past the cursor, the later parts of
  // its pinned group, then — after a pinned cursor — every unpinned part from its start; so a page 500
  // pages deep reads a page's rows, not the 10,000 before it (an OR of them would be a filter over the
  // index from its start).
  const branches: string[] = [];
  if (start !== "first") {
    const pinned = `$${n++}`;
    const values = o.columns.map(() => `$${n++}`);
    const past = `${o.dir === "desc" ? "<" : ">"}${start === "at" ? "=" : ""}`;
    // in a count's part at zero the cursor's count is zero too: the rest of the part is past its
    // (created_at, id), a range of the newest-first index
    const cursorAtZero = parts.length > 1 && part === 1;
    const [cols, vals] = cursorAtZero ? [o.columns.slice(1), values.slice(1)] : [o.columns, values];
    const tie = cursorAtZero ? ` AND ${o.columns[0]} = ${values[0]}` : "";
    branches.push(branch(`c.pinned = ${pinned}::boolean${parts[part]}${tie} AND (${cols.join(", ")}) ${past} (${vals.join(", ")})`));
    for (const later of parts.slice(part + 1)) branches.push(branch(`c.pinned = ${pinned}::boolean${later}`));
    for (const p of parts) branches.push(branch(`${pinned}::boolean AND c.pinned = false${p}`));
  } else {
    for (const pinned of ["true", "false"]) for (const p of parts) branches.push(branch(`c.pinned = ${pinned}${p}`));
  }
  // the page's comments first, then each one's reader by its key: never a plan that walks the
  // discussion's comments reader by reader and sorts them, nor one that reads every reader (both
  // taken by the planner on young tables whose statistics said they were tiny)
  return `SELECT x.*${withDiscussion ? `, ${DISCUSSION_COLUMNS}` : ""} FROM discussions d LEFT JOIN LATERAL (
      SELECT ${COMMENT_COLUMNS} FROM (
        SELECT * FROM (
          ${branches.join("\n          UNION ALL\n          ")}
        ) c ORDER BY ${whole} LIMIT $3
      ) c JOIN LATERAL (SELECT r.name, r.avatar_url, r.badge FROM readers r WHERE r.tenant_id = $1 AND r.id = c.author_id LIMIT 1) r ON true
      ORDER BY ${whole}) x ON true
     WHERE d.tenant_id = $1 AND d.id = $2`;
}

/** A row's place in a sort: its cursor's values without the list's tag (pinned, then the sort's keys). */
export const placeOf = (sort: CommentSort, c: CommentWithAuthor): readonly unknown[] => cursorOf("", sort, c).slice(1);

/** Negative when place `a` comes before `b` in the sort's order. */
export function comparePlaces(sort: CommentSort, a: readonly unknown[], b: readonly unknown[]): number {
  if (a[0] !== b[0]) return a[0] ? -1 : 1;
  const sign = ORDERS[sort].dir === "desc" ? -1 : 1;
  for (let i = 1; i < a.length; i++) {
    const [p, q] = [a[i], b[i]];
    const x = (p instanceof Date ? p.getTime() : p) as number | string;
    const y = (q instanceof Date ? q.getTime() : q) as number | string;
    if (x !== y) return (x < y ? -1 : 1) * sign;
  }
  return 0;
}
