// The bulk writes of an import: discussions, readers, comments and reactions buffered and written
// in batches, each batch one multi-row INSERT … SELECT FROM unnest(…) ON CONFLICT per table (one
// statement each, no events). While a batch is written the next one is read from the file (one
// batch in flight at a time, so a batch sees the one before it committed).
//
// Comment ids come from the source's ids (source.ts importedCommentId), so a re-run's rows conflict
// and change nothing, and a grown file adds only what is new. A reply names its parent when the
// parent is already written or in the same batch; otherwise (a child before its parent) it is
// written as a top-level comment and linked at the end, or left top-level with a warning when the
// parent never came. Depth comes from the parent's, known here for the comments of this run
// (a bounded cache) or read from the parent's row; where it could not be, the discussion's depths
// are recomputed at the end. Counts (comment, reply and reaction counts) are recomputed at the end
// for the discussions the import touched, under their locks: eng_import_recount in prisma/functions.sql.
import type { Sql } from "../../db/sql.js";
import type { CommentStatus } from "./source.js";

export interface DiscussionRow {
  id: string;
  title: string | null;
  url: string | null;
  state: "open" | "locked" | "archived";
  createdAt: Date;
}

export interface ReaderRow {
  id: string;
  name: string;
  avatarUrl: string | null;
  createdAt: Date;
}

export interface CommentRow {
  id: string;
  discussionId: string;
  parentId: string | null;
  authorId: string;
  body: string;
  status: CommentStatus;
  pinned: boolean;
  createdAt: Date;
  editedAt: Date | null;
  deletedAt: Date | null;
  position: string;
}

export interface ReactionRow {
  commentId: string;
  discussionId: string;
  readerId: string;
  kind: string;
  createdAt: Date;
}

export interface WriterCounts {
  threads: number;
  comments: number;
  readers: number;
  reactions: number;
  /** records that were already there (a re-run, a grown file) */
  unchanged: number;
}

const DEPTH_CACHE_MAX = 200_000;
const RECOUNT_GROUP = 50;
/** the limit of an import's maintenance statements (ANALYZE, a group's recount) */
const MAINTENANCE_TIMEOUT_MS = 5 * 60_000;
/** comments written past which the table is analyzed before the counts are recomputed */
const ANALYZE_AFTER = 10_000;

const INSERT_DISCUSSIONS = `
INSERT INTO discussions AS d (tenant_id, id, title, url, state, created_at, updated_at)
SELECT $1, v.id, v.title, v.url, v.state::"DiscussionState", v.created_at, v.created_at
  FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS v(id, title, url, state, created_at)
ON CONFLICT (tenant_id, id) DO UPDATE SET title = COALESCE(d.title, EXCLUDED.title), url = COALESCE(d.url, EXCLUDED.url)
 WHERE (d.title IS NULL AND EXCLUDED.title IS NOT NULL) OR (d.url IS NULL AND EXCLUDED.url IS NOT NULL)
RETURNING (xmax = 0) AS inserted`;

const INSERT_READERS = `
INSERT INTO readers (tenant_id, id, name, avatar_url, created_at, updated_at)
SELECT $1, v.id, v.name, v.avatar_url, v.created_at, v.created_at
  FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS v(id, name, avatar_url, created_at)
ON CONFLICT (tenant_id, id) DO NOTHING
RETURNING id`;

// A parent is named when it is written (same tenant and discussion) or in this batch (checked at the
// statement's end); a row already there changes only to gain the parent it lacked.
const INSERT_COMMENTS = `
INSERT INTO comments AS c (id, tenant_id, discussion_id, parent_id, depth, author_id, body, status, pinned,
                           edited_at, deleted_at, created_at, published_at)
SELECT v.id, $1, v.discussion_id,
       CASE WHEN v.parent_id IS NULL THEN NULL WHEN p.id IS NOT NULL OR v.parent_id = ANY($2::text[]) THEN v.parent_id END,
       COALESCE(v.depth, p.depth + 1, 0), v.author_id, v.body, v.status::"CommentStatus", v.pinned,
       v.edited_at, v.deleted_at, v.created_at, CASE WHEN v.status = 'approved' THEN v.created_at END
  FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::boolean[],
              $10::timestamptz[], $11::timestamptz[], $12::timestamptz[])
       AS v(id, discussion_id, parent_id, depth, author_id, body, status, pinned, edited_at, deleted_at, created_at)
  LEFT JOIN comments p ON p.id = v.parent_id AND p.tenant_id = $1 AND p.discussion_id = v.discussion_id
ON CONFLICT (id) DO UPDATE SET parent_id = EXCLUDED.parent_id
 WHERE c.tenant_id = $1 AND c.parent_id IS NULL AND EXCLUDED.parent_id IS NOT NULL
RETURNING c.id, c.parent_id, c.depth, (xmax = 0) AS inserted`;

const INSERT_REACTIONS = `
INSERT INTO reactions (tenant_id, comment_id, reader_id, kind, created_at)
SELECT $1, v.comment_id, v.reader_id, v.kind, v.created_at
  FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS v(comment_id, reader_id, kind, created_at)
  JOIN comments c ON c.id = v.comment_id AND c.tenant_id = $1
ON CONFLICT DO NOTHING
RETURNING comment_id`;

const LINK_PARENTS = `
UPDATE comments c SET parent_id = v.parent_id
  FROM unnest($2::text[], $3::text[]) AS v(id, parent_id)
 WHERE c.tenant_id = $1 AND c.id = v.id AND c.parent_id IS NULL
   AND EXISTS (SELECT 1 FROM comments p WHERE p.tenant_id = $1 AND p.id = v.parent_id AND p.discussion_id = c.discussion_id)
RETURNING c.id`;

interface Batch {
  discussions: DiscussionRow[];
  readers: ReaderRow[];
  comments: (CommentRow & { depth: number | null })[];
  reactions: ReactionRow[];
}

const emptyBatch = (): Batch => ({ discussions: [], readers: [], comments: [], reactions: [] });

export class ImportWriter {
  readonly counts: WriterCounts = { threads: 0, comments: 0, readers: 0, reactions: 0, unchanged: 0 };
  private batch = emptyBatch();
  /** ids of the comments in the batch being filled, with their discussions */
  private batchIds = new Map<string, string>();
  private readonly seenDiscussions = new Set<string>();
  private readonly seenReaders = new Set<string>();
  /** depths of this run's comments known for certain (a root, or a child of a known one) */
  private depths = new Map<string, number>();
  /** discussions whose rows changed: their counts are recomputed at the end */
  private readonly touched = new Set<string>();
  /** discussions where a depth could not be known when written */
  private readonly depthDirty = new Set<string>();
  private readonly reacted = new Map<string, Set<string>>();
  private deferred: { id: string; parentId: string; discussionId: string; position: string }[] = [];
  private inflight: Promise<void> = Promise.resolve();

  constructor(
    private readonly sql: Sql,
    private readonly tenantId: string,
    private readonly opts: { batchSize: number; now: Date; warn: (position: string, message: string) => void; onFlush?: () => void },
  ) {}

  addDiscussion(d: DiscussionRow): void {
    if (this.seenDiscussions.has(d.id)) return;
    this.seenDiscussions.add(d.id);
    this.batch.discussions.push(d);
  }

  addReader(r: ReaderRow): void {
    if (this.seenReaders.has(r.id)) return;
    this.seenReaders.add(r.id);
    this.batch.readers.push(r);
  }

  /** Adds a comment; resolves when the batch it filled (if any) is on its way. */
  async addComment(c: CommentRow): Promise<void> {
    if (this.batchIds.has(c.id)) {
      this.counts.unchanged++; // the same source id twice in one batch: the first one counts
      return;
    }
    this.addDiscussion({ id: c.discussionId, title: null, url: null, state: "open", createdAt: c.createdAt });
    let parentId = c.parentId;
    const inBatch = parentId ? this.batchIds.get(parentId) : undefined;
    if (parentId && inBatch !== undefined && inBatch !== c.discussionId) {
      this.opts.warn(c.position, `the parent ${parentId} is in another thread: kept as a top-level comment`);
      parentId = null;
    }
    const parentDepth = parentId ? this.depths.get(parentId) : -1;
    const depth = parentDepth === undefined ? null : parentDepth + 1;
    if (depth === null && inBatch !== undefined) this.depthDirty.add(c.discussionId);
    if (depth !== null) {
      if (this.depths.size >= DEPTH_CACHE_MAX) this.depths = new Map();
      this.depths.set(c.id, depth);
    }
    this.batchIds.set(c.id, c.discussionId);
    this.batch.comments.push({ ...c, parentId, depth });
    if (this.batch.comments.length >= this.opts.batchSize) await this.flush();
  }

  async addReaction(r: ReactionRow): Promise<void> {
    this.batch.reactions.push(r);
    if (this.batch.reactions.length >= this.opts.batchSize) await this.flush();
  }

  /** Sends the buffered rows: waits for the batch before it, then writes this one in the background. */
  async flush(): Promise<void> {
    const b = this.batch;
    this.batch = emptyBatch();
    this.batchIds = new Map();
    await this.inflight;
    const writing = this.write(b);
    writing.catch(() => undefined); // awaited by the next flush or finish
    this.inflight = writing;
  }

  private async write(b: Batch): Promise<void> {
    const { sql, tenantId: t } = this;
    if (b.discussions.length) {
      const rows = await sql.query<{ inserted: boolean }>(INSERT_DISCUSSIONS, [
        t,
        b.discussions.map((d) => d.id),
        b.discussions.map((d) => d.title),
        b.discussions.map((d) => d.url),
        b.discussions.map((d) => d.state),
        b.discussions.map((d) => d.createdAt),
      ]);
      for (const r of rows) if (r.inserted) this.counts.threads++;
      for (const d of b.discussions) this.touched.add(d.id);
    }
    if (b.readers.length) {
      const rows = await sql.query<{ id: string }>(INSERT_READERS, [
        t,
        b.readers.map((r) => r.id),
        b.readers.map((r) => r.name),
        b.readers.map((r) => r.avatarUrl),
        b.readers.map((r) => r.createdAt),
      ]);
      this.counts.readers += rows.length;
    }
    if (b.comments.length) await this.writeComments(b.comments);
    if (b.reactions.length) {
      const rows = await sql.query<{ comment_id: string }>(INSERT_REACTIONS, [
        t,
        b.reactions.map((r) => r.commentId),
        b.reactions.map((r) => r.readerId),
        b.reactions.map((r) => r.kind),
        b.reactions.map((r) => r.createdAt),
      ]);
      this.counts.reactions += rows.length;
      this.counts.unchanged += b.reactions.length - rows.length;
      const discussionOf = new Map(b.reactions.map((r) => [r.commentId, r.discussionId]));
      for (const { comment_id } of rows) {
        const d = discussionOf.get(comment_id)!;
        this.touched.add(d);
        let set = this.reacted.get(d);
        if (!set) this.reacted.set(d, (set = new Set()));
        set.add(comment_id);
      }
    }
    this.opts.onFlush?.();
  }

  private async writeComments(rows: (CommentRow & { depth: number | null })[]): Promise<void> {
    const written = await this.sql.query<{ id: string; parent_id: string | null; depth: number; inserted: boolean }>(INSERT_COMMENTS, [
      this.tenantId,
      rows.map((c) => c.id),
      rows.map((c) => c.discussionId),
      rows.map((c) => c.parentId),
      rows.map((c) => c.depth),
      rows.map((c) => c.authorId),
      rows.map((c) => c.body),
      rows.map((c) => c.status),
      rows.map((c) => c.pinned),
      rows.map((c) => c.editedAt),
      rows.map((c) => c.deletedAt),
      rows.map((c) => c.createdAt),
    ]);
    const byId = new Map(rows.map((c) => [c.id, c]));
    let inserted = 0;
    for (const w of written) {
      const c = byId.get(w.id)!;
      this.touched.add(c.discussionId);
      if (!w.inserted) {
        this.depthDirty.add(c.discussionId); // an earlier run's top-level comment gained its parent
        continue;
      }
      inserted++;
      // a depth read from the parent's row is right; one guessed for a parent in this batch is not
      if (c.depth === null && w.parent_id !== null && byId.has(w.parent_id)) this.depthDirty.add(c.discussionId);
      else if (c.depth === null && w.parent_id !== null) {
        if (this.depths.size >= DEPTH_CACHE_MAX) this.depths = new Map();
        this.depths.set(c.id, w.depth);
      }
      if (c.parentId !== null && w.parent_id === null) {
        this.deferred.push({ id: c.id, parentId: c.parentId, discussionId: c.discussionId, position: c.position });
      }
    }
    this.counts.comments += inserted;
    this.counts.unchanged += rows.length - written.length;
  }

  /**
   * Writes what is left, links the children that came before their parents, and recomputes the
   * counts of every discussion the import touched (under each one's lock, a group at a time).
   */
  async finish(): Promise<void> {
    await this.flush();
    await this.inflight;
    const deferred = this.deferred;
    this.deferred = [];
    for (let i = 0; i < deferred.length; i += 1000) {
      const part = deferred.slice(i, i + 1000);
      const linked = new Set(
        (await this.sql.query<{ id: string }>(LINK_PARENTS, [this.tenantId, part.map((d) => d.id), part.map((d) => d.parentId)])).map(
          (r) => r.id,
        ),
      );
      for (const d of part) {
        if (linked.has(d.id)) this.depthDirty.add(d.discussionId);
        else this.opts.warn(d.position, `the parent ${d.parentId} is not in this thread: kept as a top-level comment`);
      }
    }
    // after a large import the planner's statistics of comments are far off: refreshed first (a
    // sample, bounded whatever the table's size), with a longer limit than a request's statements
    // (statements with a limit of their own, not a request's: src/db/sql.ts `long`)
    if (this.counts.comments >= ANALYZE_AFTER) await this.sql.long("ANALYZE comments, discussions, readers", [], MAINTENANCE_TIMEOUT_MS);
    const all = [...this.touched].sort();
    for (let i = 0; i < all.length; i += RECOUNT_GROUP) {
      const group = all.slice(i, i + RECOUNT_GROUP);
      await this.sql.long(
        "SELECT eng_import_recount($1, $2::text[], $3::text[], $4::text[]) AS n",
        [this.tenantId, group, group.filter((d) => this.depthDirty.has(d)), group.flatMap((d) => [...(this.reacted.get(d) ?? [])])],
        MAINTENANCE_TIMEOUT_MS,
      );
    }
  }
}
