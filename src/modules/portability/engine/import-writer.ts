// The bulk writes of an import, in two phases. While the file is read, nothing is written: its
// discussions, readers, comments and reactions are staged in file order into
// import_staged_discussions / _readers / _comments / _reactions / _votes / _page_reactions (UNLOGGED,
// keyed by run and place), a batch per statement. Then `finish(true)` writes them: the discussions
// and readers (INSERT … SELECT FROM the staging … ON CONFLICT, a chunk at a time), the staged
// comments a bucket of discussions at a time (BUCKET_DISCUSSIONS, two buckets at once), each bucket
// one statement in (discussion, time) order: the comments indexes are written where they were last
// written instead of at random, several times faster on a big table. Then the reactions, votes and
// page reactions (our own export's, per reader), then the counts.
// `finish(false)` (a file that turned out not to be well-formed) writes none of it.
//
// A comment keeps the author name its source gives it (comments.author_name) when that differs
// from its reader's name: readers are merged by the source's author id (an email's hash), and
// each comment still shows the name written on it.
//
// Comment ids come from the source's ids (source.ts importedCommentId), so a re-run's rows conflict
// and change nothing, and a grown file adds only what is new; a source id twice in one file keeps
// its first, and each later one is reported as a bad record (opts.skip) when its bucket is written
// (one in another discussion's bucket finds the first already there, and is counted unchanged). A
// reply names its parent when the parent is in the same discussion, already written or staged in
// this run (a child before its parent is linked all the same); a parent that never came leaves it
// top-level with a warning, and a later run that brings the parent links it. Depths and reply counts
// are computed as a bucket is written (WRITE_BUCKET). Counts and search documents are made again at the
// end for the discussions the import touched (import-settle.ts).
import { randomUUID } from "node:crypto";
import type { Sql } from "../../../db/sql.js";
import { tenantSql, type TenantSql } from "../../../db/tenant-store.js";
import {
  type ImportedCommentRow,
  type ImportedDiscussionRow,
  type ImportedReactionRow,
  type ImportedReaderRow,
  WRITE_DISCUSSIONS,
  FIND_THREAD_DISCUSSION,
  WRITE_READERS,
  WRITE_BUCKET,
  type BucketResult,
  NAME_WRITTEN,
  REPARENT,
  WRITE_REACTIONS,
  WRITE_VOTES,
  WRITE_PAGE_REACTIONS,
  RECOUNT_PAGE_REACTIONS,
} from "./import-statements.js";
import { emptyBatch, stageBatch, type Batch, type ImportedPageReactionRow, type ImportedVoteRow } from "./import-staging.js";
import { urlKey } from "../../discussions/url-key.js";
import { discussionIdOf } from "../source.js";
import { settleImport } from "./import-settle.js";

export interface WriterCounts {
  threads: number;
  comments: number;
  readers: number;
  reactions: number;
  /** records that were already there (a re-run, a grown file) */
  unchanged: number;
}

/** discussions written by one statement of the second phase */
const BUCKET_DISCUSSIONS = 64;
/** buckets written at once (each on its own connection) */
const BUCKET_WRITERS = 2;
/** staged reactions (discussions, readers) written by one statement */
const REACTION_CHUNK = 10_000;
/** the limit of an import's maintenance statements (a bucket, ANALYZE, a group's recount) */
const MAINTENANCE_TIMEOUT_MS = 10 * 60_000;
/** staging older than this was left by an import whose process died: deleted by the next import */
const STALE_STAGING = "1 day";
/** the staging tables, emptied of a run's rows when it ends */
const STAGING = [
  "import_staged_discussions",
  "import_staged_readers",
  "import_staged_comments",
  "import_staged_reactions",
  "import_staged_votes",
  "import_staged_page_reactions",
] as const;

export class ImportWriter {
  readonly counts: WriterCounts = { threads: 0, comments: 0, readers: 0, reactions: 0, unchanged: 0 };
  /** this run's staging rows (import_staged_comments.run) */
  private readonly run = randomUUID();
  private batch = emptyBatch();
  private readonly seenDiscussions = new Set<string>();
  private readonly seenReaders = new Set<string>();
  /** the url keys staged so far: a page has one discussion, the run's first thread of it */
  private readonly seenPages = new Set<string>();
  /** each page's discussion in this run (discussionFor), by url key */
  private readonly pageDiscussion = new Map<string, string>();
  /** readers named by a comment only, held back until their own record comes (or the file ends) */
  private readonly provisionalReaders = new Map<string, ImportedReaderRow>();
  private readonly provisionalDiscussions = new Map<string, ImportedDiscussionRow>();
  /** the bucket of each discussion with comments, in the order they first came */
  private readonly bucketOf = new Map<string, number>();
  private buckets = 0;
  private inBucket = 0;
  private commentOrd = 0;
  private reactionOrd = 0;
  private voteOrd = 0;
  private pageReactionOrd = 0;
  private discussionOrd = 0;
  private readerOrd = 0;
  /** discussions whose rows changed: their counts are recomputed at the end */
  private readonly touched = new Set<string>();
  /** discussions where an earlier run's comment gained its parent: their depths are recomputed */
  private readonly depthDirty = new Set<string>();
  private readonly reacted = new Map<string, Set<string>>();
  private inflight: Promise<void> = Promise.resolve();
  /** comments left out as deleted, with the parent their replies hang from instead */
  private reparented: { id: string; parentId: string | null; parentKey: string | null }[] = [];
  private staleCleared: Promise<void> | undefined;
  /** the tenant's rows, staged and written: every statement through the tenant's store (`$1` its id) */
  private readonly store: TenantSql;

  constructor(
    /** what crosses tenants or names no row (the stale staging's sweep, ANALYZE): the app's raw SQL */
    private readonly sql: Sql,
    tenantId: string,
    private readonly opts: {
      batchSize: number;
      now: Date;
      warn: (position: string, message: string) => void;
      /** a record left out (a source id met again), reported */
      skip: (position: string, message: string) => void;
      /** more records left out than are reported one by one */
      skipped: (n: number) => void;
      onFlush?: () => void;
    },
  ) {
    this.store = tenantSql(sql, tenantId);
  }

  /**
   * Stages a discussion once (the first record of an id is kept). One only named by a comment is
   * `provisional`: held until the discussion's own record comes (the generic JSON lets it come
   * later), which replaces it, or the file ends.
   */
  addDiscussion(d: ImportedDiscussionRow, provisional = false): void {
    if (this.seenDiscussions.has(d.id)) return;
    if (provisional) {
      if (!this.provisionalDiscussions.has(d.id)) this.provisionalDiscussions.set(d.id, d);
      return;
    }
    const held = this.provisionalDiscussions.get(d.id);
    if (held) this.provisionalDiscussions.delete(d.id);
    this.seenDiscussions.add(d.id);
    const createdAt = held && held.createdAt < d.createdAt ? held.createdAt : d.createdAt;
    this.batch.discussions.push({ ...d, createdAt, ord: this.discussionOrd++ });
  }

  /**
   * Stages a reader once (the first record of an id is kept). A `provisional` one (named by a
   * comment whose source describes its readers in records of their own) is held until such a
   * record comes, which replaces it, or the file ends.
   */
  addReader(r: ImportedReaderRow, provisional = false): void {
    if (this.seenReaders.has(r.id)) return;
    if (provisional) {
      if (!this.provisionalReaders.has(r.id)) this.provisionalReaders.set(r.id, r);
      return;
    }
    const held = this.provisionalReaders.get(r.id);
    if (held) this.provisionalReaders.delete(r.id);
    this.seenReaders.add(r.id);
    // a reader is as old as the first comment that names them
    const createdAt = held && held.createdAt < r.createdAt ? held.createdAt : r.createdAt;
    this.batch.readers.push({ ...r, createdAt, ord: this.readerOrd++ });
  }

  /**
   * The comments left out as deleted and where their replies go instead (their nearest ancestor
   * that is not deleted, or none): replies staged before the file said so are moved at the end.
   */
  reparent(rows: { id: string; parentId: string | null; parentKey: string | null }[]): void {
    this.reparented = rows;
  }

  /** Stages a comment; resolves when the batch it filled (if any) is on its way. */
  async addComment(c: ImportedCommentRow): Promise<void> {
    this.addDiscussion({ id: c.discussionId, title: null, url: null, state: "open", createdAt: c.createdAt }, true);
    let bucket = this.bucketOf.get(c.discussionId);
    if (bucket === undefined) {
      if (this.inBucket === BUCKET_DISCUSSIONS || this.buckets === 0) {
        this.buckets++;
        this.inBucket = 0;
      }
      bucket = this.buckets - 1;
      this.inBucket++;
      this.bucketOf.set(c.discussionId, bucket);
    }
    this.batch.comments.push({ ...c, bucket, ord: this.commentOrd++ });
    if (this.batch.comments.length >= this.opts.batchSize) await this.flush();
  }

  async addReaction(r: ImportedReactionRow): Promise<void> {
    this.batch.reactions.push({ ...r, ord: this.reactionOrd++ });
    if (this.batch.reactions.length >= this.opts.batchSize) await this.flush();
  }

  async addVote(v: ImportedVoteRow): Promise<void> {
    this.batch.votes.push({ ...v, ord: this.voteOrd++ });
    if (this.batch.votes.length >= this.opts.batchSize) await this.flush();
  }

  async addPageReaction(p: ImportedPageReactionRow): Promise<void> {
    this.batch.pageReactions.push({ ...p, ord: this.pageReactionOrd++ });
    if (this.batch.pageReactions.length >= this.opts.batchSize) await this.flush();
  }

  /** Sends the buffered rows: waits for the batch before it, then writes this one in the background. */
  async flush(): Promise<void> {
    const b = this.batch;
    this.batch = emptyBatch();
    await this.inflight;
    const writing = this.write(b);
    writing.catch(() => undefined); // awaited by the next flush or finish
    this.inflight = writing;
  }

  /**
   * The discussion a source thread's comments go to (contract section 27: a page has one
   * discussion, and an import attaches to it). The thread's own discussion when the tenant has it
   * already (an earlier run of this or an older version); else the one that holds its page: an
   * earlier thread of the page in this file, or a discussion of the tenant with that URL (one the
   * page made on its first comment, one the API made, another source's); else its own, which then
   * holds the page for the rest of the run. Its own id held by another site's page of the same path
   * (isso's `/about/` on two blogs) is never taken: an id named by its URL instead. Idempotent.
   */
  async discussionFor(ownId: string, url: string | null): Promise<string> {
    const key = url ? urlKey(url) : null;
    const inRun = key === null ? undefined : this.pageDiscussion.get(key);
    if (inRun === ownId) return ownId;
    const rows = await this.store.query<{ id: string; url_key: string | null }>(FIND_THREAD_DISCUSSION, [ownId, key]);
    const own = rows.find((r) => r.id === ownId);
    const page = key === null ? undefined : rows.find((r) => r.url_key === key);
    const anotherPage = own !== undefined && key !== null && own.url_key !== null && own.url_key !== key;
    const id = own && !anotherPage ? ownId : (inRun ?? page?.id ?? (anotherPage ? (discussionIdOf(url, true) ?? ownId) : ownId));
    if (key !== null && !inRun) this.pageDiscussion.set(key, id);
    return id;
  }

  /** The url's key for the run's first thread of that page; null for a later one (it keeps its url, without the key). */
  private firstOfPage(url: string | null): string | null {
    const key = url ? urlKey(url) : null;
    if (key === null || this.seenPages.has(key)) return null;
    this.seenPages.add(key);
    return key;
  }

  /** Staging a crashed import left behind (older than a day) goes before this one's is written. */
  private clearStale(): Promise<void> {
    return (this.staleCleared ??= (async () => {
      for (const table of STAGING) {
        await this.sql.long(`DELETE FROM ${table} WHERE staged_at < now() - interval '${STALE_STAGING}'`, [], MAINTENANCE_TIMEOUT_MS);
      }
    })());
  }

  private async write(b: Batch): Promise<void> {
    const { store } = this;
    if (b.discussions.length || b.readers.length || b.comments.length || b.reactions.length || b.votes.length || b.pageReactions.length)
      await this.clearStale();
    await stageBatch(store, this.run, b, (url) => this.firstOfPage(url));
    this.opts.onFlush?.();
  }

  /** Writes one bucket's staged comments (once more after a deadlock with the other writer). */
  private async writeBucket(bucket: number): Promise<void> {
    let result: BucketResult | undefined;
    for (let attempt = 0; !result; attempt++) {
      try {
        [result] = await this.store.long<BucketResult>(WRITE_BUCKET, [this.run, bucket], MAINTENANCE_TIMEOUT_MS);
      } catch (err) {
        if (attempt > 0 || (err as { code?: string }).code !== "40P01") throw err;
      }
    }
    this.counts.comments += result.inserted;
    this.counts.unchanged += result.staged - result.duplicates - result.clashes - result.written;
    for (const d of result.duplicate_rows) this.opts.skip(d.position, `the comment id is already in this file (at ${d.first}): skipped`);
    this.opts.skipped(result.duplicates - result.duplicate_rows.length);
    for (const k of result.clash_rows)
      this.opts.skip(
        k.position,
        `its id (${k.id}) is another source's comment, in another thread or of another time: skipped, not written over`,
      );
    this.opts.skipped(result.clashes - result.clash_rows.length);
    if (result.staged > result.written) await this.store.long(NAME_WRITTEN, [this.run, bucket], MAINTENANCE_TIMEOUT_MS);
    for (const d of result.relinked) this.depthDirty.add(d); // an earlier run's top-level comment gained its parent
    for (const o of result.orphans)
      this.opts.warn(o.position, `the parent ${o.parentKey} is not in this thread: kept as a top-level comment`);
    this.opts.onFlush?.();
  }

  private async writeReactions(): Promise<void> {
    for (let from = 0; from < this.reactionOrd; from += REACTION_CHUNK) {
      const rows = await this.store.long<{ comment_id: string; discussion_id: string }>(
        WRITE_REACTIONS,
        [this.run, from, from + REACTION_CHUNK],
        MAINTENANCE_TIMEOUT_MS,
      );
      this.counts.reactions += rows.length;
      this.counts.unchanged += Math.min(REACTION_CHUNK, this.reactionOrd - from) - rows.length;
      for (const { comment_id, discussion_id } of rows) {
        this.touched.add(discussion_id);
        let set = this.reacted.get(discussion_id);
        if (!set) this.reacted.set(discussion_id, (set = new Set()));
        set.add(comment_id);
      }
      this.opts.onFlush?.();
    }
  }

  /**
   * Writes the staged votes and page reactions (our own export's), a chunk at a time: each new one
   * counts as a reaction, each already there as unchanged; the discussions whose page reactions
   * changed have their counts recomputed.
   */
  private async writeVotesAndPageReactions(): Promise<void> {
    for (let from = 0; from < this.voteOrd; from += REACTION_CHUNK) {
      const [row] = await this.store.long<{ inserted: number }>(
        WRITE_VOTES,
        [this.run, from, from + REACTION_CHUNK],
        MAINTENANCE_TIMEOUT_MS,
      );
      const inserted = row?.inserted ?? 0;
      this.counts.reactions += inserted;
      this.counts.unchanged += Math.min(REACTION_CHUNK, this.voteOrd - from) - inserted;
      this.opts.onFlush?.();
    }
    for (let from = 0; from < this.pageReactionOrd; from += REACTION_CHUNK) {
      const [row] = await this.store.long<{ inserted: number; discussions: string[] }>(
        WRITE_PAGE_REACTIONS,
        [this.run, from, from + REACTION_CHUNK],
        MAINTENANCE_TIMEOUT_MS,
      );
      const inserted = row?.inserted ?? 0;
      this.counts.reactions += inserted;
      this.counts.unchanged += Math.min(REACTION_CHUNK, this.pageReactionOrd - from) - inserted;
      if (row?.discussions.length) await this.store.long(RECOUNT_PAGE_REACTIONS, [row.discussions], MAINTENANCE_TIMEOUT_MS);
      this.opts.onFlush?.();
    }
  }

  /** Writes the staged discussions or readers, a chunk at a time; answers how many were new. */
  private async writeStaged(statement: string, staged: number): Promise<number> {
    let inserted = 0;
    for (let from = 0; from < staged; from += REACTION_CHUNK) {
      const [row] = await this.store.long<{ inserted: number }>(statement, [this.run, from, from + REACTION_CHUNK], MAINTENANCE_TIMEOUT_MS);
      inserted += row?.inserted ?? 0;
      this.opts.onFlush?.();
    }
    return inserted;
  }

  /**
   * Ends the run. `commit`: writes what was staged — the discussions and readers, the staged
   * comments a bucket at a time (two at once), then the reactions — and recomputes the counts of
   * every discussion the import touched (under each one's lock, a group at a time). Without it
   * nothing is written. The staging is deleted whatever happens.
   */
  async finish(commit = true): Promise<void> {
    try {
      if (commit) {
        for (const r of [...this.provisionalReaders.values()]) this.addReader(r);
        for (const d of [...this.provisionalDiscussions.values()]) this.addDiscussion(d);
      }
      this.provisionalReaders.clear();
      this.provisionalDiscussions.clear();
      await this.flush();
      await this.inflight;
      if (!commit) return;
      this.counts.threads += await this.writeStaged(WRITE_DISCUSSIONS, this.discussionOrd);
      this.counts.readers += await this.writeStaged(WRITE_READERS, this.readerOrd);
      if (this.reparented.length && this.buckets) {
        const rows = this.reparented.map((r) => ({ d: r.id, p: r.parentId, k: r.parentKey }));
        await this.store.long(REPARENT, [this.run, JSON.stringify(rows)], MAINTENANCE_TIMEOUT_MS);
      }
      for (const d of this.seenDiscussions) this.touched.add(d);
      // the staging's statistics as they are now: without them the planner takes a bucket for a few
      // rows and joins its rows to each other in nested loops, quadratic in a big discussion
      if (this.buckets) await this.sql.long("ANALYZE import_staged_comments", [], MAINTENANCE_TIMEOUT_MS);
      let next = 0;
      const writer = async () => {
        while (next < this.buckets) await this.writeBucket(next++);
      };
      await Promise.all(Array.from({ length: Math.min(BUCKET_WRITERS, this.buckets) }, writer));
      await this.writeReactions();
      await this.writeVotesAndPageReactions();
    } finally {
      if (this.staleCleared) {
        for (const table of STAGING)
          await this.store.long(`DELETE FROM ${table} WHERE tenant_id = $1 AND run = $2`, [this.run], MAINTENANCE_TIMEOUT_MS);
      }
    }
    if (!commit) return;
    const touched = { discussions: this.touched, depthDirty: this.depthDirty, reacted: this.reacted };
    await settleImport(this.sql, this.store, touched, this.counts.comments, MAINTENANCE_TIMEOUT_MS);
  }
}
