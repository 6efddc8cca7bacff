// Bluesky's pure parts (contract section 30): which post a string names (src/modules/bluesky/post-ref.ts),
// a thread read into replies (thread.ts: links as Markdown, blocked and not-found posts skipped with
// what is under them, parents first, bounded), and the poller's pace (engine/pace.ts).
import { describe, expect, it } from "vitest";
import { parsePostRef, postWebUrl } from "../src/modules/bluesky/post-ref.js";
import { MAX_THREAD_REPLIES, readThread, textWithLinks } from "../src/modules/bluesky/thread.js";
import { MAX_BACKOFF_MS, MIN_POLL_MS, nextPollDelay } from "../src/modules/bluesky/engine/pace.js";

const DID = "did:plc:abcdefghijklmnopqrstuvwx";

describe("parsePostRef", () => {
  it("reads at:// URIs and bsky.app URLs into a repository and a key", () => {
    expect(parsePostRef(`at://${DID}/app.bsky.feed.post/3kabc`)).toEqual({ did: DID, rkey: "3kabc" });
    expect(parsePostRef("at://Alice.bsky.social/app.bsky.feed.post/3kabc")).toEqual({ handle: "alice.bsky.social", rkey: "3kabc" });
    expect(parsePostRef("https://bsky.app/profile/alice.bsky.social/post/3kabc")).toEqual({ handle: "alice.bsky.social", rkey: "3kabc" });
    expect(parsePostRef(`https://bsky.app/profile/${DID}/post/3kabc/`)).toEqual({ did: DID, rkey: "3kabc" });
  });
  it("refuses anything else", () => {
    for (const bad of [
      "",
      "not a post",
      `at://${DID}/app.bsky.feed.like/3kabc`,
      `at://${DID}/app.bsky.feed.post/`,
      `at://${DID}/app.bsky.feed.post/..`,
      "http://bsky.app/profile/alice.bsky.social/post/3kabc",
      "https://bsky.app.evil.example/profile/alice.bsky.social/post/3kabc",
      "https://user:pw@bsky.app/profile/alice.bsky.social/post/3kabc",
      "https://bsky.app/profile/alice/post/3kabc",
      "https://bsky.app/profile/alice.bsky.social/lists/3kabc",
      "did:plc:xyz",
      `at://${DID}/app.bsky.feed.post/${"a".repeat(2000)}`,
    ]) {
      expect(parsePostRef(bad), bad).toBeNull();
    }
  });
  it("makes a post's web address from its URI", () => {
    expect(postWebUrl(`at://${DID}/app.bsky.feed.post/3kabc`)).toBe(`https://bsky.app/profile/${DID}/post/3kabc`);
    expect(postWebUrl("at://alice.bsky.social/app.bsky.feed.post/3kabc")).toBeNull();
  });
});

describe("textWithLinks", () => {
  it("writes link facets (UTF-8 byte ranges) as Markdown links and keeps the rest", () => {
    const text = "Voilà: example.org/long… and more";
    const start = Buffer.byteLength("Voilà: ");
    const end = start + Buffer.byteLength("example.org/long…");
    const facets = [
      {
        index: { byteStart: start, byteEnd: end },
        features: [{ $type: "app.bsky.richtext.facet#link", uri: "https://example.org/long/path" }],
      },
    ];
    expect(textWithLinks(text, facets)).toBe("Voilà: [example.org/long…](<https://example.org/long/path>) and more");
  });
  it("ignores facets out of range, of other schemes or kinds", () => {
    const f = (byteStart: number, byteEnd: number, uri: string, $type = "app.bsky.richtext.facet#link") => ({
      index: { byteStart, byteEnd },
      features: [{ $type, uri }],
    });
    expect(
      textWithLinks("abc", [
        f(0, 10, "https://x.example"),
        f(0, 1, "javascript:alert(1)"),
        f(1, 2, "https://x.example", "app.bsky.richtext.facet#tag"),
      ]),
    ).toBe("abc");
    expect(textWithLinks("a]b", [f(0, 3, "https://x.example/>")])).toBe("[a\\]b](<https://x.example/%3E>)");
  });
});

const view = (uri: string, text: string, replies: unknown[] = [], author: Record<string, unknown> = {}) => ({
  $type: "app.bsky.feed.defs#threadViewPost",
  post: {
    uri,
    cid: "c",
    author: { did: DID, handle: "carol.test", ...author },
    record: { text, createdAt: "2026-11-01T10:00:00Z" },
    indexedAt: "2026-11-01T10:00:01Z",
  },
  replies,
});

describe("readThread", () => {
  it("lists replies parents first, skipping not-found and blocked posts with what is under them", () => {
    const thread = view("at://root", "root", [
      view("at://a", "A", [view("at://a1", "A1")], { displayName: "Carol", avatar: "https://cdn.example/a.jpg" }),
      { $type: "app.bsky.feed.defs#notFoundPost", uri: "at://gone", notFound: true },
      { $type: "app.bsky.feed.defs#blockedPost", uri: "at://blocked", blocked: true, author: { did: DID } },
      view("at://b", "B", [view("at://b1", "B1", [view("at://b11", "B11")])]),
    ]);
    const read = readThread(thread);
    expect(read.found).toBe(true);
    expect(read.replies.map((r) => [r.uri, r.parentUri])).toEqual([
      ["at://a", "at://root"],
      ["at://b", "at://root"],
      ["at://a1", "at://a"],
      ["at://b1", "at://b"],
      ["at://b11", "at://b1"],
    ]);
    expect(read.blocked).toEqual(new Set(["at://blocked"]));
    expect(read.replies[0]).toMatchObject({ displayName: "Carol", avatar: "https://cdn.example/a.jpg", handle: "carol.test", body: "A" });
    expect(read.replies[0]!.createdAt.toISOString()).toBe("2026-11-01T10:00:00.000Z");
  });
  it("finds nothing in a post not found or blocked, and keeps an avatar only when it is an http(s) URL", () => {
    expect(readThread({ $type: "app.bsky.feed.defs#notFoundPost", uri: "at://x", notFound: true }).found).toBe(false);
    expect(readThread({ $type: "app.bsky.feed.defs#blockedPost", uri: "at://x", blocked: true }).found).toBe(false);
    expect(readThread(null).found).toBe(false);
    const r = readThread(view("at://root", "root", [view("at://a", "A", [], { avatar: "javascript:alert(1)" })]));
    expect(r.replies[0]!.avatar).toBeNull();
  });
  it("stops at MAX_THREAD_REPLIES, saying so (nothing is then taken as deleted)", () => {
    const many = Array.from({ length: MAX_THREAD_REPLIES + 3 }, (_, i) => view(`at://r${i}`, `R${i}`));
    const read = readThread(view("at://root", "root", many));
    expect(read.replies).toHaveLength(MAX_THREAD_REPLIES);
    expect(read.truncated).toBe(true);
  });
  it("walks a deep thread without recursion", () => {
    let node = view("at://d2999", "deep");
    for (let i = 2998; i >= 0; i--) node = view(`at://d${i}`, `d${i}`, [node]);
    const read = readThread(view("at://root", "root", [node]));
    expect(read.replies).toHaveLength(3000);
    expect(read.replies.at(-1)!.parentUri).toBe("at://d2998");
  });
});

describe("nextPollDelay", () => {
  const linkedAt = new Date("2026-11-01T00:00:00Z");
  const at = (ms: number) => new Date(linkedAt.getTime() + ms);
  it("reads every minute while new replies come or readers are on the page, less often as the discussion ages", () => {
    expect(nextPollDelay({ now: at(10 * 60_000), linkedAt, changedAt: null, failures: 0 })).toBe(MIN_POLL_MS);
    expect(nextPollDelay({ now: at(3 * 3_600_000), linkedAt, changedAt: null, failures: 0 })).toBe(5 * 60_000);
    expect(nextPollDelay({ now: at(3 * 3_600_000), linkedAt, changedAt: at(3 * 3_600_000 - 1000), failures: 0 })).toBe(MIN_POLL_MS);
    expect(nextPollDelay({ now: at(3 * 86_400_000), linkedAt, changedAt: null, failures: 0 })).toBe(30 * 60_000);
    expect(nextPollDelay({ now: at(10 * 86_400_000), linkedAt, changedAt: null, failures: 0 })).toBe(3 * 3_600_000);
    expect(nextPollDelay({ now: at(60 * 86_400_000), linkedAt, changedAt: null, failures: 0 })).toBe(12 * 3_600_000);
    expect(nextPollDelay({ now: at(60 * 86_400_000), linkedAt, changedAt: null, failures: 0, readers: true })).toBe(MIN_POLL_MS);
  });
  it("backs off after failed reads: 1, 2, 4 … minutes, at most an hour", () => {
    const delays = [1, 2, 3, 4, 7, 30].map((failures) => nextPollDelay({ now: at(0), linkedAt, changedAt: null, failures }));
    expect(delays).toEqual([60_000, 120_000, 240_000, 480_000, 3_600_000, MAX_BACKOFF_MS]);
  });
});
