// The embed thread's state (embed/src/thread/store.ts): pages and live events applied in any order
// end in the same picture; others' new top-level comments wait as incoming; replies nest and count;
// deletions leave tombstones only where replies hang; the viewer's pending comment shows to them alone.
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
});
