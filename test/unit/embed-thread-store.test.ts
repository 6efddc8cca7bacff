// The embed thread's state (embed/src/thread/store.ts): pages and live events applied in any order
// end in the same picture; others' new top-level comments wait as incoming; replies nest and count;
// deletions leave tombstones only where replies hang; the viewer's pending comment shows to them alone;
// a permalink's chain of replies hangs under its top-level comment in the replies' order.
import { describe, expect, it } from "vitest";
import { ThreadStore, type Comment, type Page } from "../../embed/src/thread/store.js";

let n = 0;
const at = () => new Date(Date.UTC(2026, 10, 23, 12, 0, n++)).toISOString();
const c = (id: string, over: Partial<Comment> = {}): Comment => ({
  id,
  parentId: null,
  author: { id: "ann", name: "Ann", avatarUrl: null },
  body: `body ${id}`,
  status: "approved",
  pinned: false,
  editedAt: null,
  createdAt: at(),
  reactions: {},
  replyCount: 0,
  score: 0,
  upvotes: 0,
  downvotes: 0,
  ...over,
});
const page = <T>(nodes: T[], endCursor: string | null = null): Page<T> => ({
  edges: nodes.map((node) => ({ node })),
  pageInfo: { hasNextPage: endCursor !== null, endCursor },
});

describe("ThreadStore", () => {
  it("holds others' new top-level comments back and shows the viewer's own at once", () => {
    const s = new ThreadStore("newest", "me");
    s.reset(page([c("p", { pinned: true }), c("a")]));
    s.total = 2;
    expect(s.apply({ type: "comment_created", data: { comment: c("b") } })).toBe(true);
    expect(s.top).toEqual(["p", "a"]);
    expect(s.incoming).toEqual(["b"]);
    s.apply({ type: "comment_created", data: { comment: c("mine", { author: { id: "me", name: "Me", avatarUrl: null } }) } });
    expect(s.top).toEqual(["p", "mine", "a"]);
    expect(s.revealIncoming()).toEqual(["b"]);
    expect(s.top).toEqual(["p", "b", "mine", "a"]);
    expect(s.total).toBe(4);
    // the same event again changes nothing
    s.apply({ type: "comment_created", data: { comment: c("b") } });
    expect(s.top).toEqual(["p", "b", "mine", "a"]);
    expect(s.total).toBe(4);
  });

  it("nests live replies under loaded parents and counts them once", () => {
    const s = new ThreadStore("oldest", null);
    s.reset(page([{ ...c("a", { replyCount: 1 }), replies: page([c("r1", { parentId: "a" })]) }]));
    expect(s.missingReplies("a")).toBe(0);
    s.apply({ type: "comment_created", data: { comment: c("r2", { parentId: "a" }) } });
    s.apply({ type: "comment_created", data: { comment: c("r2", { parentId: "a" }) } });
    expect(s.children.get("a")).toEqual(["r1", "r2"]);
    expect(s.comments.get("a")?.replyCount).toBe(2);
    // a reply to a reply the page has not loaded is counted as missing, not shown
    s.apply({ type: "comment_created", data: { comment: c("x", { parentId: "unknown" }) } });
    expect(s.comments.has("x")).toBe(false);
  });

  it("keeps tombstones only where replies hang, and drops rejected comments", () => {
    const s = new ThreadStore("newest", null);
    s.reset(page([{ ...c("a", { replyCount: 1 }), replies: page([c("r", { parentId: "a" })]) }, c("b")]));
    s.total = 3;
    s.apply({ type: "comment_deleted", data: { comment: c("a", { status: "deleted", body: "", replyCount: 1 }) } });
    s.apply({ type: "comment_deleted", data: { comment: c("b", { status: "deleted", body: "" }) } });
    expect(s.isShown("a")).toBe(true);
    expect(s.isShown("b")).toBe(false);
    s.apply({ type: "comment_rejected", data: { comment: c("r", { parentId: "a", status: "rejected" }) } });
    expect(s.isShown("r")).toBe(false);
    expect(s.total).toBe(0);
  });

  it("shows the viewer's pending comment to them, and counts it once approved", () => {
    const s = new ThreadStore("newest", "me");
    s.reset(page([]));
    s.addOwn(c("m", { status: "pending", author: { id: "me", name: "Me", avatarUrl: null } }));
    expect(s.isShown("m")).toBe(true);
    expect(s.total).toBe(0);
    s.apply({ type: "comment_approved", data: { comment: c("m", { author: { id: "me", name: "Me", avatarUrl: null } }) } });
    expect(s.total).toBe(1);
    const other = new ThreadStore("newest", "someone-else");
    other.reset(page([]));
    other.addOwn(c("m", { status: "pending", author: { id: "me", name: "Me", avatarUrl: null } }));
    expect(other.isShown("m")).toBe(false);
  });

  it("takes the viewer from their first write when the identity came after the load", () => {
    const s = new ThreadStore("newest");
    s.reset(page([c("a")]));
    const mine = c("mine", { author: { id: "me", name: "Me", avatarUrl: null }, status: "pending" });
    s.addOwn(mine);
    expect(s.viewerId).toBe("me");
    expect(s.isShown("mine")).toBe(true);
    expect(s.isOwn("mine")).toBe(true);
    expect(s.isOwn("a")).toBe(false);
    expect(s.top).toEqual(["mine", "a"]);
  });

  it("applies reaction counts as given and tracks the viewer's own reactions", () => {
    const s = new ThreadStore("top", "me");
    s.reset(page([c("a")]));
    s.apply({
      type: "reaction_toggled",
      data: { reaction: { commentId: "a", readerId: "me", kind: "like", active: true, counts: { like: 2 } } },
    });
    expect(s.comments.get("a")).toMatchObject({ reactions: { like: 2 }, viewerReactions: ["like"] });
    s.apply({
      type: "reaction_toggled",
      data: { reaction: { commentId: "a", readerId: "bo", kind: "like", active: false, counts: { like: 1 } } },
    });
    expect(s.comments.get("a")).toMatchObject({ reactions: { like: 1 }, viewerReactions: ["like"] });
    // an edit event (which carries no viewer reactions) keeps them
    s.apply({ type: "comment_edited", data: { comment: c("a", { body: "new", reactions: { like: 1 } }) } });
    expect(s.comments.get("a")).toMatchObject({ body: "new", viewerReactions: ["like"] });
  });

  it("applies page reactions (commentId null) to the discussion's counts, the viewer's own included, and leaves comments alone", () => {
    const s = new ThreadStore("newest", "me");
    s.reset(page([c("a", { reactions: { like: 2 } })]));
    const toggled = (readerId: string, kind: string, active: boolean, counts: Record<string, number>) =>
      s.apply({ type: "reaction_toggled", data: { reaction: { discussionId: "d", commentId: null, readerId, kind, active, counts } } });
    expect(toggled("bob", "up", true, { up: 1 })).toBe(true);
    expect(toggled("me", "up", true, { up: 2 })).toBe(true);
    expect([s.pageReactions, s.myPageReactions]).toEqual([{ up: 2 }, ["up"]]);
    expect(s.comments.get("a")?.reactions).toEqual({ like: 2 });
    toggled("me", "up", false, { up: 1 });
    expect([s.pageReactions, s.myPageReactions]).toEqual([{ up: 1 }, []]);
    // a discussion event carries the counts too
    s.apply({ type: "discussion_locked", data: { discussion: { state: "locked", reactions: { up: 1, heart: 3 } } } });
    expect([s.state, s.pageReactions]).toEqual(["locked", { up: 1, heart: 3 }]);
  });

  it("applies vote tallies as given and tracks the viewer's own vote, which comment events keep", () => {
    const s = new ThreadStore("best", "me");
    s.reset(page([c("a", { myVote: null }), c("b")]));
    expect(s.comments.get("a")).toMatchObject({ score: 0, myVote: 0 });
    const vote = (readerId: string, value: number, upvotes: number, downvotes: number) =>
      s.apply({
        type: "reaction_toggled",
        data: { reaction: { commentId: "a", readerId, kind: "vote", value, score: upvotes - downvotes, upvotes, downvotes } },
      });
    expect(vote("me", 1, 3, 1)).toBe(true);
    expect(s.comments.get("a")).toMatchObject({ score: 2, upvotes: 3, downvotes: 1, myVote: 1, reactions: {} });
    vote("bo", -1, 3, 2);
    expect(s.comments.get("a")).toMatchObject({ score: 1, upvotes: 3, downvotes: 2, myVote: 1 });
    // an edit event (which carries no viewer vote) keeps it, and takes the tallies it carries
    s.apply({ type: "comment_edited", data: { comment: c("a", { body: "new", score: 1, upvotes: 3, downvotes: 2 }) } });
    expect(s.comments.get("a")).toMatchObject({ body: "new", score: 1, myVote: 1 });
    vote("me", 0, 2, 2);
    expect(s.comments.get("a")).toMatchObject({ score: 0, myVote: 0 });
    expect(s.comments.get("b")).toMatchObject({ score: 0, myVote: 0 });
  });

  it("moves a newly pinned comment first and follows the discussion's state", () => {
    const s = new ThreadStore("newest", null);
    s.reset(page([c("a"), c("b")], "next"));
    expect(s.topAfter).toBe("next");
    s.apply({ type: "comment_pinned", data: { comment: c("b", { pinned: true }) } });
    expect(s.top).toEqual(["b", "a"]);
    s.apply({ type: "discussion_locked", data: { discussion: { state: "locked" } } });
    expect(s.state).toBe("locked");
    s.addTopPage(page([c("a"), c("z")]));
    expect(s.top).toEqual(["b", "a", "z"]);
    expect(s.topAfter).toBe(null);
  });

  it("places a permalink's chain under its top-level comment, in the replies' order, and the pages of replies go on around it", () => {
    const root = c("root", { replyCount: 8 });
    const early = [1, 2, 3, 4, 5].map((i) => c(`r${i}`, { parentId: "root" }));
    const r6 = c("r6", { parentId: "root" });
    const r7 = c("r7", { parentId: "root", replyCount: 2 });
    const r8 = c("r8", { parentId: "root" });
    const deep = c("deep", { parentId: "r7", replyCount: 1 });
    const target = c("target", { parentId: "deep" });
    const s = new ThreadStore("newest");
    s.reset(page([{ ...root, replies: page(early, "after-r5") }]));
    expect(s.missingReplies("root")).toBe(3);
    s.placeChain([root, r7, deep, target]);
    expect(s.children.get("root")).toEqual(["r1", "r2", "r3", "r4", "r5", "r7"]);
    expect(s.children.get("r7")).toEqual(["deep"]);
    expect(s.children.get("deep")).toEqual(["target"]);
    expect(s.isShown("target")).toBe(true);
    // the root's next page of replies still starts after r5, and r7 stays once, in its place
    expect(s.repliesAfter.get("root")).toBe("after-r5");
    expect(s.missingReplies("root")).toBe(2);
    s.addReplies("root", page([r6, r7, r8]));
    expect(s.children.get("root")).toEqual(["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"]);
    expect(s.missingReplies("root")).toBe(0);
    // r7's other reply comes before the deep one when it is older, and a chain placed again changes nothing
    s.addReplies("r7", page([c("r7a", { parentId: "r7", createdAt: new Date(Date.parse(deep.createdAt) - 1000).toISOString() })]));
    s.placeChain([root, r7, deep, target]);
    expect(s.children.get("r7")).toEqual(["r7a", "deep"]);
    expect(s.children.get("deep")).toEqual(["target"]);
    // a reply whose parent the page does not show is not placed
    s.placeChain([c("elsewhere", { parentId: "unknown" })]);
    expect(s.comments.has("elsewhere")).toBe(false);
  });
});

describe("ThreadStore's count against the page's seq", () => {
  const me = { id: "me", name: "Me", avatarUrl: null };
  /** a first page read at seq 5 with a count of 2 */
  const snapshot = (nodes = [c("a"), c("b")]) => {
    const s = new ThreadStore("newest", "me");
    s.reset(page(nodes));
    s.total = 2;
    s.seq = 5;
    return s;
  };

  it("skips events the page already holds (at or before its seq), a reply it did not load included", () => {
    const s = snapshot();
    // held while the page loaded: a comment of the page, and a reply under a comment it did not load
    expect(s.apply({ type: "comment_created", seq: 4, data: { comment: c("b") } })).toBe(false);
    expect(s.apply({ type: "comment_created", seq: 5, data: { comment: c("x", { parentId: "elsewhere" }) } })).toBe(false);
    expect(s.total).toBe(2);
    expect(s.apply({ type: "comment_created", seq: 6, data: { comment: c("y", { parentId: "elsewhere" }) } })).toBe(true);
    expect(s.total).toBe(3);
    // the same event again (a replay after a reconnect) changes nothing
    expect(s.apply({ type: "comment_created", seq: 6, data: { comment: c("y", { parentId: "elsewhere" }) } })).toBe(false);
    expect(s.total).toBe(3);
  });

  it("counts the viewer's own write once, whether its answer or its event comes first", () => {
    const answerFirst = snapshot();
    answerFirst.addOwn(c("m", { author: me }));
    answerFirst.apply({ type: "comment_created", seq: 6, data: { comment: c("m", { author: me }) } });
    expect(answerFirst.total).toBe(3);
    const eventFirst = snapshot();
    eventFirst.apply({ type: "comment_created", seq: 6, data: { comment: c("m", { author: me }) } });
    eventFirst.addOwn(c("m", { author: me }));
    expect(eventFirst.total).toBe(3);
    expect(eventFirst.top).toEqual(["m", "a", "b"]);
  });

  it("counts a comment written after the page once, though a later page of replies brought it before its event", () => {
    const s = snapshot([{ ...c("a", { replyCount: 1 }) }, c("b")]);
    // "Show replies" read r after it was written (seq 6), before the stream brought its event
    s.addReplies("a", page([c("r", { parentId: "a" })]));
    s.apply({ type: "comment_created", seq: 6, data: { comment: c("r", { parentId: "a" }) } });
    expect(s.total).toBe(3);
    // a reply the page's count already held (read by a later page, its event at or before the seq) is not counted again
    s.addReplies("b", page([c("old", { parentId: "b" })]));
    s.apply({ type: "comment_created", seq: 5, data: { comment: c("old", { parentId: "b" }) } });
    expect(s.total).toBe(3);
    // rejected, then approved again: out of the count and back in, once each
    s.apply({ type: "comment_rejected", seq: 7, data: { comment: c("r", { parentId: "a", status: "rejected" }) } });
    expect(s.total).toBe(2);
    s.apply({ type: "comment_approved", seq: 8, data: { comment: c("r", { parentId: "a" }) } });
    expect(s.total).toBe(3);
  });

  it("without a seq (an event or a page that has none) applies every event as before", () => {
    const s = new ThreadStore("newest", null);
    s.reset(page([c("a")]));
    s.total = 1;
    s.apply({ type: "comment_created", seq: 1, data: { comment: c("a") } });
    s.apply({ type: "comment_created", data: { comment: c("n") } });
    expect(s.total).toBe(2);
  });
});
