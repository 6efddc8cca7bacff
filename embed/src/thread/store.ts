// What <engagement-thread> knows of a discussion, and how pages and live events change it. Pure
// logic, no DOM: the element renders from it (embed/src/thread/view.ts) and tests drive it directly
// (test/unit/embed-thread-store.test.ts).
//
// Every live event carries the resource as it is now (contract section 5), so applying one is
// idempotent, and events that arrive while a page loads are applied after it. The count is not a
// resource: it is the page's commentCount (read by the page's own statement, with the discussion's
// event seq) plus what the events after that seq changed. An event at or before the seq is already in
// the page and is skipped; one after it counts a comment once, however it got into the store (the
// viewer's own write, a later page of replies, the event itself). New top-level comments by others wait in `incoming`
// (shown behind an "N new comments" button) so that the text a reader is reading does not move.

import type { Comment, CommentWithReplies, DiscussionState, LiveEvent, LiveReaction, Page, Sort } from "./types.js";

export type { Author, Comment, CommentStatus, CommentWithReplies, DiscussionState, LiveEvent, LiveReaction, Page, Sort } from "./types.js";

export class ThreadStore {
  readonly comments = new Map<string, Comment & { viewerReactions: string[]; myVote: number }>();
  /** top-level comment ids in the order shown (pinned first, then the sort) */
  top: string[] = [];
  /** reply ids per parent, oldest first */
  readonly children = new Map<string, string[]>();
  /** where the next page of a parent's replies starts; absent once all are loaded */
  readonly repliesAfter = new Map<string, string>();
  /** where the next page of top-level comments starts; null once all are loaded */
  topAfter: string | null = null;
  /** new top-level comments by others, newest last, not yet shown */
  incoming: string[] = [];
  state: DiscussionState = "open";
  /** visible comments of the discussion (its commentCount), kept current by live events */
  total = 0;
  /**
   * The discussion's event seq that `total` and the first page reflect (null: not known, every event
   * is applied): events up to it are skipped, and it follows the events applied after it.
   */
  seq: number | null = null;
  /** comments `total` has counted since `seq` (the viewer's own write, or an event after it) */
  private readonly countedSince = new Set<string>();
  /** the discussion's page reactions (its reactions), and the viewer's own (myReactions) */
  pageReactions: Record<string, number> = {};
  myPageReactions: string[] = [];
  /** where the discussion's Bluesky post is (its replies are the comments of kind bluesky); null: none */
  blueskyUrl: string | null = null;

  constructor(
    public sort: Sort,
    public viewerId: string | null = null,
  ) {}

  /** Replaces everything with a first page (after a load, a sort change or a new identity). */
  reset(page: Page<CommentWithReplies>): void {
    this.comments.clear();
    this.children.clear();
    this.repliesAfter.clear();
    this.top = [];
    this.incoming = [];
    this.addTopPage(page);
  }

  /** Appends a page of top-level comments ("Load more"), each with its first replies. */
  addTopPage(page: Page<CommentWithReplies>): void {
    for (const { node } of page.edges) {
      const { replies, ...comment } = node;
      const known = this.comments.has(comment.id);
      this.put(comment);
      if (!known && !this.top.includes(comment.id)) this.top.push(comment.id);
      this.incoming = this.incoming.filter((id) => id !== comment.id);
      if (replies) this.addReplies(comment.id, replies);
    }
    this.topAfter = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
  }

  /**
   * Appends a page of one comment's replies (in the replies' order: pinned first, then oldest first),
   * and the replies read with each of them.
   */
  addReplies(parentId: string, page: Page<CommentWithReplies>): void {
    const list = this.childList(parentId);
    for (const { node } of page.edges) {
      const { replies, ...comment } = node;
      this.put(comment);
      if (!list.includes(comment.id)) list.push(comment.id);
      if (replies) this.addReplies(comment.id, replies);
    }
    this.orderReplies(list);
    if (page.pageInfo.hasNextPage && page.pageInfo.endCursor) this.repliesAfter.set(parentId, page.pageInfo.endCursor);
    else this.repliesAfter.delete(parentId);
  }

  /**
   * A permalink's chain (its top-level comment first, the comment last): each reply shown under its
   * parent, in its place among the loaded replies, whether or not its parent's pages of replies
   * reached it (they go on from where they were; a page that brings it again adds nothing).
   */
  placeChain(chain: Comment[]): void {
    for (const comment of chain) {
      if (!comment.parentId || !this.comments.has(comment.parentId)) continue;
      const list = this.childList(comment.parentId);
      if (!this.comments.has(comment.id)) this.put(comment);
      if (list.includes(comment.id)) continue;
      list.push(comment.id);
      this.orderReplies(list);
    }
  }

  /** Replies in their list's order: pinned first, then oldest first. */
  private orderReplies(list: string[]): void {
    const key = (id: string): [number, number] => {
      const c = this.comments.get(id);
      return [c?.pinned ? 0 : 1, c ? Date.parse(c.createdAt) : 0];
    };
    list.sort((a, b) => key(a)[0] - key(b)[0] || key(a)[1] - key(b)[1] || a.localeCompare(b));
  }

  /** How many of a comment's replies are not loaded yet. */
  missingReplies(id: string): number {
    const c = this.comments.get(id);
    if (!c) return 0;
    const loaded = (this.children.get(id) ?? []).filter((child) => this.isCounted(child)).length;
    return Math.max(0, c.replyCount - loaded);
  }

  /** The viewer's own comment, as the write answered it: shown at once, pending ones included, marked theirs. */
  addOwn(comment: Comment): void {
    // the first write after a new identity tells who the viewer is before the thread reloads
    this.viewerId ??= comment.author.id;
    const known = this.comments.has(comment.id);
    this.put(comment);
    if (known) return;
    if (comment.status === "approved") this.count(comment.id);
    if (comment.parentId) this.attachReply(comment, false);
    else this.placeTop(comment.id);
  }

  /** Shows the comments waiting behind the "N new comments" button. */
  revealIncoming(): string[] {
    const shown = this.incoming;
    this.incoming = [];
    for (const id of shown) this.placeTop(id);
    return shown;
  }

  /** Applies a stream event; answers whether anything shown changed. */
  apply(event: LiveEvent): boolean {
    const { comment, reaction, discussion } = event.data;
    // past: the event is newer than the page's snapshot, its change not in `total`
    let past = false;
    if (event.seq !== undefined && this.seq !== null) {
      if (event.seq <= this.seq) return false;
      this.seq = event.seq;
      past = true;
    }
    switch (event.type) {
      case "comment_created":
      case "comment_approved":
        return comment ? this.arrive(comment, past) : false;
      case "comment_edited":
      case "comment_pinned":
      case "comment_unpinned":
      case "comment_deleted":
      case "comment_rejected":
        return comment ? this.change(comment) : false;
      case "reaction_toggled": {
        if (!reaction) return false;
        if (reaction.commentId === null) return this.pageReaction(reaction);
        const c = this.comments.get(reaction.commentId);
        if (!c) return false;
        if ("value" in reaction) {
          c.score = reaction.score;
          c.upvotes = reaction.upvotes;
          c.downvotes = reaction.downvotes;
          if (reaction.readerId === this.viewerId) c.myVote = reaction.value;
          return true;
        }
        c.reactions = { ...reaction.counts };
        if (reaction.readerId === this.viewerId) {
          const mine = new Set(c.viewerReactions);
          if (reaction.active) mine.add(reaction.kind);
          else mine.delete(reaction.kind);
          c.viewerReactions = [...mine];
        }
        return true;
      }
      case "discussion_locked":
      case "discussion_unlocked":
      case "discussion_archived":
        if (!discussion) return false;
        this.state = discussion.state;
        if (discussion.reactions) this.pageReactions = { ...discussion.reactions };
        return true;
      default:
        return false;
    }
  }

  /** A page reaction toggled: the discussion's counts, and the viewer's own when it was theirs. */
  private pageReaction(reaction: Extract<LiveReaction, { commentId: null }>): boolean {
    this.pageReactions = { ...reaction.counts };
    if (reaction.readerId === this.viewerId) {
      const mine = new Set(this.myPageReactions);
      if (reaction.active) mine.add(reaction.kind);
      else mine.delete(reaction.kind);
      this.myPageReactions = [...mine];
    }
    return true;
  }

  /** Whether a comment is shown: approved; deleted with replies (a tombstone); the viewer's own pending one. */
  isShown(id: string): boolean {
    const c = this.comments.get(id);
    if (!c) return false;
    if (c.status === "approved") return true;
    if (c.status === "deleted") return c.replyCount > 0 || (this.children.get(id) ?? []).some((child) => this.isShown(child));
    return c.status === "pending" && c.author.id === this.viewerId;
  }

  isOwn(id: string): boolean {
    return this.viewerId !== null && this.comments.get(id)?.author.id === this.viewerId;
  }

  /** Counts a comment into `total` (once since the snapshot). */
  private count(id: string): void {
    this.total += 1;
    this.countedSince.add(id);
  }

  /**
   * A reply or a comment of the page, newly visible: placed, counted, or held back as incoming.
   * `past`: the event is after the snapshot's seq, so the comment is counted unless already counted
   * since (one the store read after the snapshot, in a later page, is not yet counted).
   */
  private arrive(comment: Comment, past: boolean): boolean {
    const existing = this.comments.get(comment.id);
    if (existing) {
      const counted = past ? this.countedSince.has(comment.id) : existing.status === "approved";
      this.put(comment);
      if (!counted && comment.status === "approved") this.count(comment.id);
      return true;
    }
    if (comment.status !== "approved") return false;
    this.count(comment.id);
    if (comment.parentId) {
      // a reply under a comment this page has not loaded is only counted
      if (!this.comments.has(comment.parentId)) return true;
      this.put(comment);
      this.attachReply(comment, true);
      return true;
    }
    this.put(comment);
    if (comment.author.id === this.viewerId) this.placeTop(comment.id);
    else this.incoming.push(comment.id);
    return true;
  }

  private change(comment: Comment): boolean {
    const existing = this.comments.get(comment.id);
    if (!existing) return false;
    const wasCounted = existing.status === "approved";
    this.put(comment);
    const counted = comment.status === "approved";
    if (wasCounted !== counted) {
      if (counted) this.count(comment.id);
      else {
        this.total -= 1;
        this.countedSince.delete(comment.id);
      }
    }
    if (comment.status === "rejected" || (comment.status === "deleted" && !this.isShown(comment.id))) {
      this.incoming = this.incoming.filter((id) => id !== comment.id);
    }
    if (comment.parentId === null && comment.pinned && this.top.includes(comment.id)) {
      this.top = [comment.id, ...this.top.filter((id) => id !== comment.id)];
    }
    return true;
  }

  /** Links a new reply under its parent (when the parent is loaded) and counts it there. */
  private attachReply(comment: Comment, fromStream: boolean): void {
    const parentId = comment.parentId;
    if (!parentId) return;
    const parent = this.comments.get(parentId);
    if (!parent) return;
    const list = this.childList(parentId);
    if (list.includes(comment.id)) return;
    list.push(comment.id);
    if (fromStream || comment.status === "approved") parent.replyCount += 1;
  }

  /** Where a top-level comment goes when it appears now: after the pinned ones, or last for "oldest". */
  private placeTop(id: string): void {
    if (this.top.includes(id)) return;
    if (this.sort === "oldest") {
      this.top.push(id);
      return;
    }
    const firstUnpinned = this.top.findIndex((other) => !this.comments.get(other)?.pinned);
    const at = firstUnpinned === -1 ? this.top.length : firstUnpinned;
    this.top.splice(at, 0, id);
  }

  private isCounted(id: string): boolean {
    const c = this.comments.get(id);
    return !!c && (c.status === "approved" || c.status === "deleted");
  }

  private childList(parentId: string): string[] {
    let list = this.children.get(parentId);
    if (!list) this.children.set(parentId, (list = []));
    return list;
  }

  /** Stores a comment as it is now, keeping what events do not carry (the viewer's reactions and vote). */
  private put(comment: Comment): void {
    const before = this.comments.get(comment.id);
    const viewerReactions = comment.viewerReactions ?? before?.viewerReactions ?? [];
    const myVote = comment.myVote ?? before?.myVote ?? 0;
    // a reply count the stream has moved on keeps the larger of the two (events carry the comment as
    // it was when it changed, which may predate replies counted here since)
    const replyCount = Math.max(comment.replyCount, before?.replyCount ?? 0);
    this.comments.set(comment.id, { ...comment, replyCount, viewerReactions, myVote });
  }
}
