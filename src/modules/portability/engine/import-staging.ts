// How an import's rows are staged (import-writer.ts): a batch of the file's discussions, readers,
// comments, reactions, votes and page reactions, each kind one statement of its STAGE_* (a JSON
// array of short-named members: JSON.stringify is native, array parameters are escaped in JavaScript).
import type { TenantSql } from "../../../db/tenant-store.js";
import {
  type ImportedCommentRow,
  type ImportedDiscussionRow,
  type ImportedPageReactionRow,
  type ImportedReactionRow,
  type ImportedReaderRow,
  type ImportedVoteRow,
  STAGE_COMMENTS,
  STAGE_DISCUSSIONS,
  STAGE_PAGE_REACTIONS,
  STAGE_REACTIONS,
  STAGE_READERS,
  STAGE_VOTES,
} from "./import-statements.js";

export type { ImportedPageReactionRow, ImportedVoteRow };

/** a comment as staged: its place in the file and the bucket of its discussion */
type StagedComment = ImportedCommentRow & { bucket: number; ord: number };
type StagedReaction = ImportedReactionRow & { ord: number };

export interface Batch {
  discussions: (ImportedDiscussionRow & { ord: number })[];
  readers: (ImportedReaderRow & { ord: number })[];
  comments: StagedComment[];
  reactions: StagedReaction[];
  votes: (ImportedVoteRow & { ord: number })[];
  pageReactions: (ImportedPageReactionRow & { ord: number })[];
}

export const emptyBatch = (): Batch => ({ discussions: [], readers: [], comments: [], reactions: [], votes: [], pageReactions: [] });

/** Stages a batch of this run's rows (`urlKeyOf`: the page key a discussion is staged with, or null). */
export async function stageBatch(store: TenantSql, run: string, b: Batch, urlKeyOf: (url: string | null) => string | null): Promise<void> {
  if (b.discussions.length) {
    const rows = b.discussions.map((d) => ({
      o: d.ord,
      i: d.id,
      t: d.title,
      u: d.url,
      k: urlKeyOf(d.url),
      s: d.state,
      c: d.createdAt,
    }));
    await store.query(STAGE_DISCUSSIONS, [run, JSON.stringify(rows)]);
  }
  if (b.readers.length) {
    const rows = b.readers.map((r) => ({
      o: r.ord,
      i: r.id,
      n: r.name,
      a: r.avatarUrl,
      e: r.email,
      ...(r.badge ? { g: r.badge } : {}),
      ...(r.trustLevel ? { l: r.trustLevel } : {}),
      c: r.createdAt,
    }));
    await store.query(STAGE_READERS, [run, JSON.stringify(rows)]);
  }
  if (b.comments.length) {
    const rows = b.comments.map((c) => ({
      o: c.ord,
      b: c.bucket,
      i: c.id,
      d: c.discussionId,
      p: c.parentId,
      k: c.parentKey,
      a: c.authorId,
      m: c.authorName,
      t: c.body,
      h: c.bodyHtml,
      s: c.status,
      n: c.pinned,
      e: c.editedAt,
      x: c.deletedAt,
      c: c.createdAt,
      w: c.position,
      ...(c.upvotes ? { u: c.upvotes } : {}),
      ...(c.downvotes ? { v: c.downvotes } : {}),
      ...(c.reactionCounts ? { r: c.reactionCounts } : {}),
      ...(c.kind !== "comment" ? { y: c.kind } : {}),
      ...(c.legacyId ? { l: c.legacyId } : {}),
    }));
    await store.query(STAGE_COMMENTS, [run, JSON.stringify(rows)]);
  }
  if (b.reactions.length) {
    const rows = b.reactions.map((r) => ({ o: r.ord, i: r.commentId, d: r.discussionId, r: r.readerId, k: r.kind, c: r.createdAt }));
    await store.query(STAGE_REACTIONS, [run, JSON.stringify(rows)]);
  }
  if (b.votes.length) {
    const rows = b.votes.map((v) => ({ o: v.ord, i: v.commentId, d: v.discussionId, r: v.readerId, v: v.value, c: v.createdAt }));
    await store.query(STAGE_VOTES, [run, JSON.stringify(rows)]);
  }
  if (b.pageReactions.length) {
    const rows = b.pageReactions.map((p) => ({ o: p.ord, d: p.discussionId, r: p.readerId, k: p.kind, c: p.createdAt }));
    await store.query(STAGE_PAGE_REACTIONS, [run, JSON.stringify(rows)]);
  }
}
