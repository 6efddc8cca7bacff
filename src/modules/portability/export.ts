// The tenant's export (format: src/modules/portability/records.ts): read from the database in
// batches by keyset (discussions and readers by id, each discussion's comments by (pinned, created_at, id)
// on the comment-list index, reactions, votes and page reactions by their time and key), yielded
// record by record, so memory holds one batch whatever the tenant's size. With `since`, what changed
// from then: comments created or edited, reactions and page reactions made, votes cast or changed,
// and the discussions and readers they name (or that were created or renamed since).
import type { TenantSql } from "../../db/tenant-store.js";
import type { CommentKind, CommentStatus, DiscussionState, TrustLevel } from "../../generated/prisma/enums.js";
import { reactionCountsOf, storedBodyHtml } from "../comments/dto.js";
import { EXPORT_VERSION, type ExportRecord } from "./records.js";

const BATCH = 1_000;
const EPOCH = new Date("1000-01-01T00:00:00.000Z");

const iso = (v: unknown): string => (v instanceof Date ? v : new Date(v as string)).toISOString();
const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));
const asDate = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));

const DISCUSSIONS = `
SELECT d.id, d.title, d.url, d.state::text AS state, d.created_at FROM discussions d
 WHERE d.tenant_id = $1 AND ($2::text IS NULL OR d.id > $2)
   AND ($4::timestamptz IS NULL OR d.created_at >= $4 OR d.updated_at >= $4
        OR EXISTS (SELECT 1 FROM comments c WHERE c.tenant_id = $1 AND c.discussion_id = d.id AND (c.created_at >= $4 OR c.edited_at >= $4))
        OR EXISTS (SELECT 1 FROM reactions x JOIN comments c ON c.tenant_id = x.tenant_id AND c.id = x.comment_id
                    WHERE x.tenant_id = $1 AND x.created_at >= $4 AND c.discussion_id = d.id))
 ORDER BY d.id LIMIT $3`;

const READERS = `
SELECT r.id, r.name, r.avatar_url, r.badge, r.trust_level::text AS trust_level, r.created_at FROM readers r
 WHERE r.tenant_id = $1 AND ($2::text IS NULL OR r.id > $2)
   AND ($4::timestamptz IS NULL OR r.created_at >= $4 OR r.updated_at >= $4
        OR EXISTS (SELECT 1 FROM comments c WHERE c.tenant_id = $1 AND c.author_id = r.id AND (c.created_at >= $4 OR c.edited_at >= $4))
        OR EXISTS (SELECT 1 FROM reactions x WHERE x.tenant_id = $1 AND x.reader_id = r.id AND x.created_at >= $4))
 ORDER BY r.id LIMIT $3`;

// the author's name by one index lookup per comment (LIMIT 1 keeps the planner from joining all of
// the tenant's readers); a page continues after the last row of the one before within its pinned
// group (the first page has no keyset, and most discussions fit in it)
const COMMENT_COLUMNS = `
SELECT c.id, c.parent_id, c.author_id, COALESCE(c.author_name, r.name) AS author_name, r.avatar_url AS author_avatar, r.badge AS author_badge,
       c.body, c.body_html, c.status::text AS status,
       c.pinned, c.kind::text AS kind, c.upvotes, c.downvotes, c.reaction_counts, c.created_at, c.edited_at, c.deleted_at
  FROM comments c LEFT JOIN LATERAL (SELECT name, avatar_url, badge FROM readers r
                                      WHERE r.tenant_id = c.tenant_id AND r.id = c.author_id LIMIT 1) r ON true`;
const SINCE = "($3::timestamptz IS NULL OR c.created_at >= $3 OR c.edited_at >= $3)";

const COMMENTS_FIRST = `${COMMENT_COLUMNS}
 WHERE c.tenant_id = $1 AND c.discussion_id = $2 AND ${SINCE}
 ORDER BY c.pinned DESC, c.created_at, c.id LIMIT $4`;

const COMMENTS_AFTER = `${COMMENT_COLUMNS}
 WHERE c.tenant_id = $1 AND c.discussion_id = $2 AND ${SINCE}
   AND c.pinned = $5 AND (c.created_at, c.id) > ($6::timestamptz, $7::text)
 ORDER BY c.created_at, c.id LIMIT $4`;

const REACTIONS = `
SELECT x.comment_id, c.discussion_id, x.reader_id, x.kind, x.created_at FROM reactions x JOIN comments c ON c.tenant_id = x.tenant_id AND c.id = x.comment_id
 WHERE x.tenant_id = $1 AND x.created_at >= $2 AND (x.created_at, x.comment_id, x.reader_id, x.kind) > ($2::timestamptz, $3::text, $4::text, $5::text)
 ORDER BY x.created_at, x.comment_id, x.reader_id, x.kind LIMIT $6`;

// a vote's time is when it was last cast (updated_at): changed since `since` is what an incremental export takes
const VOTES = `
SELECT v.comment_id, c.discussion_id, v.reader_id, v.value, v.updated_at AS created_at FROM votes v JOIN comments c ON c.tenant_id = v.tenant_id AND c.id = v.comment_id
 WHERE v.tenant_id = $1 AND v.updated_at >= $2 AND (v.updated_at, v.comment_id, v.reader_id) > ($2::timestamptz, $3::text, $4::text)
 ORDER BY v.updated_at, v.comment_id, v.reader_id LIMIT $5`;

const PAGE_REACTIONS = `
SELECT p.discussion_id, p.reader_id, p.kind, p.created_at FROM page_reactions p
 WHERE p.tenant_id = $1 AND p.created_at >= $2 AND (p.created_at, p.discussion_id, p.reader_id, p.kind) > ($2::timestamptz, $3::text, $4::text, $5::text)
 ORDER BY p.created_at, p.discussion_id, p.reader_id, p.kind LIMIT $6`;

interface ExportedCommentRow {
  id: string;
  parent_id: string | null;
  author_id: string;
  author_name: string | null;
  author_avatar: string | null;
  author_badge: string | null;
  body: string;
  body_html: string | null;
  status: CommentStatus;
  pinned: boolean;
  kind: CommentKind;
  upvotes: number;
  downvotes: number;
  reaction_counts: unknown;
  created_at: Date;
  edited_at: Date | null;
  deleted_at: Date | null;
}

interface ExportedDiscussionRow {
  id: string;
  title: string | null;
  url: string | null;
  state: DiscussionState;
  created_at: Date;
}

async function* discussions(sql: TenantSql, since: Date | null): AsyncGenerator<ExportedDiscussionRow> {
  let after: string | null = null;
  for (;;) {
    const rows: ExportedDiscussionRow[] = await sql.query<ExportedDiscussionRow>(DISCUSSIONS, [after, BATCH, since]);
    yield* rows;
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1]!.id;
  }
}

export async function* exportRecords(sql: TenantSql, opts: { since: Date | null; now: Date }): AsyncGenerator<ExportRecord> {
  const { since } = opts;
  const counts = { discussions: 0, readers: 0, comments: 0, reactions: 0, votes: 0, pageReactions: 0 };
  yield {
    type: "export",
    version: EXPORT_VERSION,
    tenantId: sql.tenantId,
    exportedAt: opts.now.toISOString(),
    since: since?.toISOString() ?? null,
  };

  for await (const d of discussions(sql, since)) {
    counts.discussions++;
    yield { type: "discussion", id: d.id, title: d.title, url: d.url, state: d.state, createdAt: iso(d.created_at) };
  }

  let afterReader: string | null = null;
  for (;;) {
    type R = { id: string; name: string; avatar_url: string | null; badge: string | null; trust_level: TrustLevel; created_at: Date };
    const rows: R[] = await sql.query<R>(READERS, [afterReader, BATCH, since]);
    for (const r of rows) {
      counts.readers++;
      yield {
        type: "reader",
        id: r.id,
        name: r.name,
        avatarUrl: r.avatar_url,
        badge: r.badge,
        trustLevel: r.trust_level,
        createdAt: iso(r.created_at),
      };
    }
    if (rows.length < BATCH) break;
    afterReader = rows[rows.length - 1]!.id;
  }

  for await (const d of discussions(sql, since)) {
    let after: { pinned: boolean; at: Date; id: string } | null = null;
    for (;;) {
      const rows: ExportedCommentRow[] = after
        ? await sql.query<ExportedCommentRow>(COMMENTS_AFTER, [d.id, since, BATCH, after.pinned, after.at, after.id])
        : await sql.query<ExportedCommentRow>(COMMENTS_FIRST, [d.id, since, BATCH]);
      for (const c of rows) {
        counts.comments++;
        yield {
          type: "comment",
          id: c.id,
          discussionId: d.id,
          parentId: c.parent_id,
          author: { id: c.author_id, name: c.author_name ?? "", avatarUrl: c.author_avatar, badge: c.author_badge },
          body: c.body,
          bodyHtml: storedBodyHtml({ body: c.body, bodyHtml: c.body_html }),
          status: c.status,
          pinned: c.pinned,
          kind: c.kind,
          upvotes: c.upvotes,
          downvotes: c.downvotes,
          reactions: reactionCountsOf({ reactionCounts: c.reaction_counts as never }),
          createdAt: iso(c.created_at),
          editedAt: isoOrNull(c.edited_at),
          deletedAt: isoOrNull(c.deleted_at),
        };
      }
      if (rows.length === BATCH) {
        const last = rows[rows.length - 1]!;
        after = { pinned: last.pinned, at: last.created_at instanceof Date ? last.created_at : new Date(last.created_at), id: last.id };
      } else if (after?.pinned) {
        after = { pinned: false, at: EPOCH, id: "" }; // the pinned ones are done: the others from their start
      } else break;
    }
  }

  let cursor: [Date, string, string, string] = [since ?? EPOCH, "", "", ""];
  for (;;) {
    type X = { comment_id: string; discussion_id: string; reader_id: string; kind: string; created_at: Date };
    const rows = await sql.query<X>(REACTIONS, [...cursor, BATCH]);
    for (const x of rows) {
      counts.reactions++;
      yield {
        type: "reaction",
        commentId: x.comment_id,
        discussionId: x.discussion_id,
        readerId: x.reader_id,
        kind: x.kind,
        createdAt: iso(x.created_at),
      };
    }
    if (rows.length < BATCH) break;
    const last = rows[rows.length - 1]!;
    cursor = [asDate(last.created_at), last.comment_id, last.reader_id, last.kind];
  }

  let voteCursor: [Date, string, string] = [since ?? EPOCH, "", ""];
  for (;;) {
    type V = { comment_id: string; discussion_id: string; reader_id: string; value: number; created_at: Date };
    const rows = await sql.query<V>(VOTES, [...voteCursor, BATCH]);
    for (const v of rows) {
      counts.votes++;
      yield {
        type: "vote",
        commentId: v.comment_id,
        discussionId: v.discussion_id,
        readerId: v.reader_id,
        value: v.value > 0 ? 1 : -1,
        createdAt: iso(v.created_at),
      };
    }
    if (rows.length < BATCH) break;
    const last = rows[rows.length - 1]!;
    voteCursor = [asDate(last.created_at), last.comment_id, last.reader_id];
  }

  let pageCursor: [Date, string, string, string] = [since ?? EPOCH, "", "", ""];
  for (;;) {
    type P = { discussion_id: string; reader_id: string; kind: string; created_at: Date };
    const rows = await sql.query<P>(PAGE_REACTIONS, [...pageCursor, BATCH]);
    for (const p of rows) {
      counts.pageReactions++;
      yield { type: "pageReaction", discussionId: p.discussion_id, readerId: p.reader_id, kind: p.kind, createdAt: iso(p.created_at) };
    }
    if (rows.length < BATCH) break;
    const last = rows[rows.length - 1]!;
    pageCursor = [asDate(last.created_at), last.discussion_id, last.reader_id, last.kind];
  }
  yield { type: "end", counts };
}

/** The records as NDJSON lines, a batch of lines per chunk. */
export async function* exportLines(records: AsyncIterable<ExportRecord>): AsyncGenerator<string> {
  let chunk = "";
  for await (const r of records) {
    chunk += `${JSON.stringify(r)}\n`;
    if (chunk.length >= 64 * 1024) {
      yield chunk;
      chunk = "";
    }
  }
  if (chunk) yield chunk;
}
