// What an import stages and how (import-writer.ts): the rows of the file's discussions, readers,
// comments and reactions, the statements that stage a batch of them, and those that write the
// staged rows to the tenant's tables.
import type { CommentKind, CommentStatus, DiscussionState, TrustLevel } from "../../../generated/prisma/enums.js";

export interface ImportedDiscussionRow {
  id: string;
  title: string | null;
  url: string | null;
  state: DiscussionState;
  createdAt: Date;
}

export interface ImportedReaderRow {
  id: string;
  name: string;
  avatarUrl: string | null;
  /** kept only when the tenant asked for it (ImportOptions.keepEmails) */
  email: string | null;
  /** our own export's, given to a reader the import makes */
  badge?: string | null;
  trustLevel?: TrustLevel | null;
  createdAt: Date;
}

export interface ImportedCommentRow {
  id: string;
  /** the id an earlier version gave it (a source numbered per database); null: the same as `id` */
  legacyId?: string | null;
  discussionId: string;
  parentId: string | null;
  /** the parent as the file names it (for a warning) */
  parentKey: string | null;
  authorId: string;
  /** the author name the source gives this comment; null: its reader's */
  authorName: string | null;
  body: string;
  /** the body rendered as the tenant's formatting settings say (src/lib/markdown.ts) */
  bodyHtml: string;
  status: CommentStatus;
  pinned: boolean;
  createdAt: Date;
  editedAt: Date | null;
  deletedAt: Date | null;
  /** the votes and reactions the source counts for it (who voted or reacted is not kept) */
  upvotes: number;
  downvotes: number;
  reactionCounts: Record<string, number> | null;
  kind: CommentKind;
  position: string;
}

export interface ImportedReactionRow {
  commentId: string;
  discussionId: string;
  readerId: string;
  kind: string;
  createdAt: Date;
}

export interface ImportedVoteRow {
  commentId: string;
  discussionId: string;
  readerId: string;
  value: 1 | -1;
  createdAt: Date;
}

export interface ImportedPageReactionRow {
  discussionId: string;
  readerId: string;
  kind: string;
  createdAt: Date;
}

/** What WRITE_BUCKET answers for its bucket. */
export interface BucketResult {
  staged: number;
  written: number;
  inserted: number;
  relinked: string[];
  orphans: { position: string; parentKey: string }[];
  /** staged rows whose source id came before in the same discussions: left out */
  duplicates: number;
  duplicate_rows: { position: string; first: string }[];
  /** staged rows whose id is another source's comment: left out */
  clashes: number;
  clash_rows: { position: string; id: string }[];
}

/** the warnings one bucket reports at most (MAX_ERRORS keeps fewer) */
const WARNINGS_PER_BUCKET = 100;

// Each id is staged once (the writer keeps the first), so one statement never meets a row twice.
// A thread's url key (src/modules/discussions/url-key.ts, staged for the run's first thread of a page
// only: import-writer.ts) is its discussion's unless another discussion of the tenant has it (a page
// has one discussion): then its url is kept without the key, as the migration that made the key left
// later duplicates. That is left to a thread whose own discussion an earlier run made: any other
// thread of a page is sent to the discussion holding it (import-writer.ts discussionFor).
export const WRITE_DISCUSSIONS = `
WITH ins AS (
  INSERT INTO discussions AS d (tenant_id, id, title, url, url_key, state, created_at, updated_at)
  SELECT $1, v.id, v.title, v.url,
         CASE WHEN NOT EXISTS (SELECT 1 FROM discussions o WHERE o.tenant_id = $1 AND o.url_key = v.url_key) THEN v.url_key END,
         v.state::"DiscussionState", v.created_at, v.created_at
    FROM import_staged_discussions v WHERE v.tenant_id = $1 AND v.run = $2 AND v.ord >= $3 AND v.ord < $4 ORDER BY v.ord
  ON CONFLICT (tenant_id, id) DO UPDATE SET title = COALESCE(d.title, EXCLUDED.title), url = COALESCE(d.url, EXCLUDED.url),
         url_key = CASE WHEN d.url IS NULL THEN EXCLUDED.url_key ELSE d.url_key END
   WHERE (d.title IS NULL AND EXCLUDED.title IS NOT NULL) OR (d.url IS NULL AND EXCLUDED.url IS NOT NULL)
  RETURNING (xmax = 0) AS inserted
)
SELECT count(*) FILTER (WHERE inserted)::int AS inserted FROM ins`;

// A thread's own discussion and the one holding its page's url key, when the tenant has them (import-writer.ts discussionFor).
export const FIND_THREAD_DISCUSSION = `
SELECT id, url_key FROM discussions WHERE tenant_id = $1 AND (id = $2 OR url_key = $3)`;

// a reader already there gains an address only when it has none
export const WRITE_READERS = `
WITH ins AS (
  INSERT INTO readers AS r (tenant_id, id, name, avatar_url, email, badge, trust_level, created_at, updated_at)
  SELECT $1, v.id, v.name, v.avatar_url, v.email, v.badge, COALESCE(v.trust_level, 'default')::"TrustLevel", v.created_at, v.created_at
    FROM import_staged_readers v WHERE v.tenant_id = $1 AND v.run = $2 AND v.ord >= $3 AND v.ord < $4 ORDER BY v.ord
  ON CONFLICT (tenant_id, id) DO UPDATE SET email = EXCLUDED.email WHERE r.email IS NULL AND EXCLUDED.email IS NOT NULL
  RETURNING (xmax = 0) AS inserted
)
SELECT count(*) FILTER (WHERE inserted)::int AS inserted FROM ins`;

export const STAGE_DISCUSSIONS = `
INSERT INTO import_staged_discussions (run, ord, tenant_id, id, title, url, url_key, state, created_at)
SELECT $2, v.o, $1, v.i, v.t, v.u, v.k, v.s, v.c
  FROM json_to_recordset($3::json) AS v(o int, i text, t text, u text, k text, s text, c timestamptz)`;

export const STAGE_READERS = `
INSERT INTO import_staged_readers (run, ord, tenant_id, id, name, avatar_url, email, badge, trust_level, created_at)
SELECT $2, v.o, $1, v.i, v.n, v.a, v.e, v.g, v.l, v.c
  FROM json_to_recordset($3::json) AS v(o int, i text, n text, a text, e text, g text, l text, c timestamptz)`;

// Staged rows go as one JSON array per statement (JSON.stringify is native; array parameters are
// escaped element by element in JavaScript).
export const STAGE_COMMENTS = `
INSERT INTO import_staged_comments (run, ord, tenant_id, bucket, id, discussion_id, parent_id, parent_key, author_id, author_name,
                                    body, body_html, status, pinned, edited_at, deleted_at, created_at, position,
                                    upvotes, downvotes, reaction_counts, kind, legacy_id)
SELECT $2, v.o, $1, v.b, v.i, v.d, v.p, v.k, v.a, v.m, v.t, v.h, v.s, v.n, v.e, v.x, v.c, v.w, COALESCE(v.u, 0), COALESCE(v.v, 0), v.r,
       COALESCE(v.y, 'comment'), v.l
  FROM json_to_recordset($3::json)
       AS v(o int, b int, i text, d text, p text, k text, a text, m text, t text, h text, s text, n boolean, e timestamptz, x timestamptz,
            c timestamptz, w text, u int, v int, r jsonb, y text, l text)`;

export const STAGE_VOTES = `
INSERT INTO import_staged_votes (run, ord, tenant_id, comment_id, discussion_id, reader_id, value, created_at)
SELECT $2, v.o, $1, v.i, v.d, v.r, v.v, v.c
  FROM json_to_recordset($3::json) AS v(o int, i text, d text, r text, v smallint, c timestamptz)`;

export const STAGE_PAGE_REACTIONS = `
INSERT INTO import_staged_page_reactions (run, ord, tenant_id, discussion_id, reader_id, kind, created_at)
SELECT $2, v.o, $1, v.d, v.r, v.k, v.c
  FROM json_to_recordset($3::json) AS v(o int, d text, r text, k text, c timestamptz)`;

export const STAGE_REACTIONS = `
INSERT INTO import_staged_reactions (run, ord, tenant_id, comment_id, discussion_id, reader_id, kind, created_at)
SELECT $2, v.o, $1, v.i, v.d, v.r, v.k, v.c
  FROM json_to_recordset($3::json) AS v(o int, i text, d text, r text, k text, c timestamptz)`;

// One bucket's comments, in (discussion, time) order. A source id twice keeps its first (`s`). The
// parent is named when it is in the same discussion, written before (p) or staged in this run (q);
// the foreign key is checked at the statement's end, so a child before its parent is fine. Depths
// are walked down from the bucket's roots (top-level rows, and rows whose parent was written
// before), and reply counts are those of the staged approved children, so a fresh import's rows are
// right as written (eng_import_recount then changes only what an earlier run's rows gained). The
// author name is kept when it is not the reader's (written before the comments). A row
// already there changes only to gain the parent it lacked. Answers what was inserted, the
// discussions where a row gained its parent, and the inserted replies whose parent never came.
export const WRITE_BUCKET = `
WITH RECURSIVE staged AS MATERIALIZED (
  SELECT id, ord, discussion_id, parent_id, parent_key, author_id, author_name, body, body_html, status, pinned, edited_at, deleted_at,
         created_at, position, upvotes, downvotes, reaction_counts, kind, legacy_id,
         row_number() OVER w AS n, first_value(position) OVER w AS first
    FROM import_staged_comments WHERE tenant_id = $1 AND run = $2 AND bucket = $3
  WINDOW w AS (PARTITION BY id ORDER BY ord)
), s0 AS MATERIALIZED (
  SELECT * FROM staged WHERE n = 1
), rid AS MATERIALIZED (
  -- the row an earlier version wrote of it (its legacy id, in the same discussion, made at the same time) is this one
  SELECT s0.id AS staged_id, COALESCE(lx.id, s0.id) AS id
    FROM s0 LEFT JOIN comments lx ON s0.legacy_id IS NOT NULL AND lx.tenant_id = $1 AND lx.id = s0.legacy_id
                                 AND lx.discussion_id = s0.discussion_id AND lx.created_at = s0.created_at
), s AS MATERIALIZED (
  SELECT rid.id, s0.ord, s0.discussion_id, COALESCE(pr.id, s0.parent_id) AS parent_id, s0.parent_key, s0.author_id, s0.author_name,
         s0.body, s0.body_html, s0.status, s0.pinned, s0.edited_at, s0.deleted_at,
         s0.created_at, s0.position, s0.upvotes, s0.downvotes, s0.reaction_counts, s0.kind
    FROM s0 JOIN rid ON rid.staged_id = s0.id LEFT JOIN rid pr ON pr.staged_id = s0.parent_id
), clash AS MATERIALIZED (
  -- an id that is another source's comment (another discussion, or another time): never written over
  SELECT s.id, s.ord, s.position FROM s
    JOIN comments x ON x.tenant_id = $1 AND x.id = s.id AND (x.discussion_id <> s.discussion_id OR x.created_at <> s.created_at)
), r AS MATERIALIZED (
  SELECT s.*, CASE WHEN q.id IS NOT NULL OR p.id IS NOT NULL THEN s.parent_id END AS linked,
         q.id IS NOT NULL AS staged_parent, p.depth AS parent_depth
    FROM s
    LEFT JOIN s q ON s.parent_id IS NOT NULL AND q.id = s.parent_id AND q.discussion_id = s.discussion_id
    LEFT JOIN comments p ON s.parent_id IS NOT NULL AND q.id IS NULL
                        AND p.id = s.parent_id AND p.tenant_id = $1 AND p.discussion_id = s.discussion_id
), depths AS (
  SELECT r.id, CASE WHEN r.linked IS NULL THEN 0 ELSE r.parent_depth + 1 END AS depth FROM r WHERE NOT r.staged_parent
  UNION ALL
  SELECT c.id, d.depth + 1 FROM depths d JOIN r c ON c.staged_parent AND c.linked = d.id
), dup AS (
  -- a source id met again in the bucket, with where it was first: one pass over the staging with s
  SELECT ord, position, first FROM staged WHERE n > 1
), replies AS (
  SELECT linked AS id, count(*)::int AS n FROM r WHERE staged_parent AND status = 'approved' GROUP BY linked
), ins AS (
  INSERT INTO comments AS c (id, tenant_id, discussion_id, parent_id, depth, author_id, author_name, body, body_html, has_links, status, pinned,
                             edited_at, deleted_at, created_at, published_at, reply_count,
                             upvotes, downvotes, score, vote_best, reaction_counts, reaction_total, kind)
  SELECT r.id, $1, r.discussion_id, r.linked, COALESCE(d.depth, 0), r.author_id,
         NULLIF(r.author_name, (SELECT rd.name FROM readers rd WHERE rd.tenant_id = $1 AND rd.id = r.author_id)),
         r.body, r.body_html, eng_has_links(r.body_html), r.status::"CommentStatus", r.pinned,
         r.edited_at, r.deleted_at, r.created_at, CASE WHEN r.status = 'approved' THEN r.created_at END, COALESCE(n.n, 0),
         r.upvotes, r.downvotes, r.upvotes - r.downvotes,
         CASE WHEN r.upvotes > 0 THEN eng_wilson_lower_bound(r.upvotes, r.upvotes + r.downvotes) ELSE 0 END,
         COALESCE(r.reaction_counts, '{}'::jsonb),
         CASE WHEN r.reaction_counts IS NULL THEN 0
              ELSE (SELECT COALESCE(sum(value::int), 0) FROM jsonb_each_text(r.reaction_counts))::int END,
         r.kind::"CommentKind"
    FROM r LEFT JOIN depths d ON d.id = r.id LEFT JOIN replies n ON n.id = r.id
   WHERE NOT EXISTS (SELECT 1 FROM clash WHERE clash.id = r.id)
   ORDER BY r.discussion_id, r.created_at, r.id
  ON CONFLICT (id) DO UPDATE SET parent_id = EXCLUDED.parent_id
   WHERE c.tenant_id = EXCLUDED.tenant_id AND c.parent_id IS NULL AND EXCLUDED.parent_id IS NOT NULL
  RETURNING c.id, c.discussion_id, (xmax = 0) AS inserted
)
SELECT (SELECT count(*) FROM import_staged_comments WHERE tenant_id = $1 AND run = $2 AND bucket = $3)::int AS staged,
       (SELECT count(*) FROM ins)::int AS written,
       (SELECT count(*) FROM ins WHERE inserted)::int AS inserted,
       (SELECT coalesce(array_agg(DISTINCT discussion_id), '{}') FROM ins WHERE NOT inserted) AS relinked,
       (SELECT coalesce(json_agg(json_build_object('position', o.position, 'parentKey', o.parent_key)), '[]')
          FROM (SELECT r.position, r.parent_key FROM r JOIN ins ON ins.id = r.id AND ins.inserted
                 WHERE r.parent_id IS NOT NULL AND r.linked IS NULL ORDER BY r.ord LIMIT ${WARNINGS_PER_BUCKET}) o) AS orphans,
       (SELECT count(*) FROM dup)::int AS duplicates,
       (SELECT count(*) FROM clash)::int AS clashes,
       (SELECT coalesce(json_agg(json_build_object('position', k.position, 'id', k.id) ORDER BY k.ord), '[]')
          FROM (SELECT * FROM clash ORDER BY ord LIMIT ${WARNINGS_PER_BUCKET}) k) AS clash_rows,
       (SELECT coalesce(json_agg(json_build_object('position', d.position, 'first', d.first) ORDER BY d.ord), '[]')
          FROM (SELECT * FROM dup ORDER BY ord LIMIT ${WARNINGS_PER_BUCKET}) d) AS duplicate_rows`;

// A comment an earlier run wrote without the author name its source gives (an import before names
// were kept) gains it when the file is imported again; one whose author was erased (author_id '')
// does not. Run for a bucket only when some of its rows were already there.
export const NAME_WRITTEN = `
UPDATE comments c SET author_name = s.author_name
  FROM (SELECT DISTINCT ON (id) id, author_id, author_name FROM import_staged_comments
         WHERE tenant_id = $1 AND run = $2 AND bucket = $3 ORDER BY id, ord) s
 WHERE c.tenant_id = $1 AND c.id = s.id AND c.author_id = s.author_id AND c.author_name IS NULL AND s.author_name IS NOT NULL
   AND s.author_name IS DISTINCT FROM (SELECT rd.name FROM readers rd WHERE rd.tenant_id = $1 AND rd.id = c.author_id)`;

// Replies staged before the file said their parent was deleted (and left out) hang from its nearest
// ancestor that is not: one pass over the run's staging, joined to the (few) deleted ones.
export const REPARENT = `
UPDATE import_staged_comments s SET parent_id = m.p, parent_key = m.k
  FROM json_to_recordset($3::json) AS m(d text, p text, k text)
 WHERE s.tenant_id = $1 AND s.run = $2 AND s.parent_id = m.d`;

export const WRITE_REACTIONS = `
WITH ins AS (
  INSERT INTO reactions (tenant_id, comment_id, reader_id, kind, created_at)
  SELECT $1, v.comment_id, v.reader_id, v.kind, v.created_at
    FROM import_staged_reactions v
    JOIN comments c ON c.id = v.comment_id AND c.tenant_id = $1
   WHERE v.tenant_id = $1 AND v.run = $2 AND v.ord >= $3 AND v.ord < $4
  ON CONFLICT DO NOTHING
  RETURNING comment_id
)
SELECT ins.comment_id, c.discussion_id FROM ins JOIN comments c ON c.id = ins.comment_id AND c.tenant_id = $1`;

// A reader's vote on a comment written (one already there stays as it is), and the comment's totals
// raised to count it where they did not (a file whose comments carry no totals): the totals a comment
// record gives count its readers' votes and those its source counted without voters.
export const WRITE_VOTES = `
WITH ins AS (
  INSERT INTO votes (tenant_id, comment_id, reader_id, value, created_at, updated_at)
  SELECT $1, v.comment_id, v.reader_id, v.value, v.created_at, v.created_at
    FROM import_staged_votes v
    JOIN comments c ON c.id = v.comment_id AND c.tenant_id = $1
   WHERE v.tenant_id = $1 AND v.run = $2 AND v.ord >= $3 AND v.ord < $4
  ON CONFLICT DO NOTHING
  RETURNING comment_id, value
), raised AS (
  UPDATE comments c SET upvotes = t.up, downvotes = t.down, score = t.up - t.down,
                        vote_best = CASE WHEN t.up > 0 THEN eng_wilson_lower_bound(t.up, t.up + t.down) ELSE 0 END
    FROM (SELECT x.id, GREATEST(x.upvotes, n.up::int) AS up, GREATEST(x.downvotes, n.down::int) AS down
            FROM (SELECT comment_id, (SELECT count(*) FROM votes w WHERE w.tenant_id = $1 AND w.comment_id = i.comment_id AND w.value > 0)
                                     + count(*) FILTER (WHERE value > 0) AS up,
                         (SELECT count(*) FROM votes w WHERE w.tenant_id = $1 AND w.comment_id = i.comment_id AND w.value < 0)
                                     + count(*) FILTER (WHERE value < 0) AS down
                    FROM ins i GROUP BY comment_id) n
            JOIN comments x ON x.tenant_id = $1 AND x.id = n.comment_id) t
   WHERE c.tenant_id = $1 AND c.id = t.id AND (c.upvotes <> t.up OR c.downvotes <> t.down)
  RETURNING 1
)
SELECT (SELECT count(*) FROM ins)::int AS inserted`;

// A reader's reaction to a page written (one already there stays), its discussion's counts
// recomputed afterwards (eng_import_recount).
export const WRITE_PAGE_REACTIONS = `
WITH ins AS (
  INSERT INTO page_reactions (tenant_id, discussion_id, reader_id, kind, created_at)
  SELECT $1, v.discussion_id, v.reader_id, v.kind, v.created_at
    FROM import_staged_page_reactions v
    JOIN discussions d ON d.tenant_id = $1 AND d.id = v.discussion_id
   WHERE v.tenant_id = $1 AND v.run = $2 AND v.ord >= $3 AND v.ord < $4
  ON CONFLICT DO NOTHING
  RETURNING discussion_id
)
SELECT (SELECT count(*) FROM ins)::int AS inserted, (SELECT coalesce(array_agg(DISTINCT discussion_id), '{}') FROM ins) AS discussions`;

// The page reaction counts of the discussions where page reactions were written: counted again from
// the rows, as eng_toggle_discussion_reaction keeps them ({kind: n}, kinds with none left out).
export const RECOUNT_PAGE_REACTIONS = `
UPDATE discussions d SET reaction_counts = x.counts
  FROM (SELECT u.id, COALESCE((SELECT jsonb_object_agg(g.kind, g.n)
                                 FROM (SELECT kind, count(*)::int AS n FROM page_reactions
                                        WHERE tenant_id = $1 AND discussion_id = u.id GROUP BY kind) g), '{}'::jsonb) AS counts
          FROM unnest($2::text[]) AS u(id)) x
 WHERE d.tenant_id = $1 AND d.id = x.id AND d.reaction_counts IS DISTINCT FROM x.counts`;
