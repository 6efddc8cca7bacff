// The thread element's permalinks (embed/src/thread/address.ts): which comment a URL's hash names,
// and the address its Link action copies, which is the one reply emails link to (commentLink in
// src/modules/email/templates.ts), so the element opens at what either gives.
import { describe, expect, it } from "vitest";
import { commentAddress, commentAnchor, commentIdFromHash } from "../../embed/src/thread/address.js";
import { commentLink } from "../../src/modules/email/templates.js";

describe("commentIdFromHash", () => {
  it("reads #comment-<id>, encoded or not", () => {
    expect(commentIdFromHash("#comment-cmt_AbC-12_x")).toBe("cmt_AbC-12_x");
    expect(commentIdFromHash("#comment-cmt%5FAbC")).toBe("cmt_AbC");
    expect(commentIdFromHash("#comment-imp.old:42")).toBe("imp.old:42");
  });

  it("is null for any other hash", () => {
    for (const hash of [
      "",
      "#",
      "#comments",
      "#comment-",
      "#section-2",
      "#comment-a b",
      "#comment-%E0%A4%A",
      "#comment-<x>",
      "#comment-a#b",
    ]) {
      expect(commentIdFromHash(hash), hash).toBeNull();
    }
    expect(commentIdFromHash(`#comment-${"x".repeat(129)}`)).toBeNull();
  });
});

describe("commentAddress", () => {
  it("is the discussion's URL, else the page's, without its hash, then #comment-<id>", () => {
    expect(commentAddress("https://blog.example/post?x=1#top", null, "cmt_1")).toBe("https://blog.example/post?x=1#comment-cmt_1");
    expect(commentAddress("https://blog.example/post#comment-cmt_0", "", "cmt_1")).toBe("https://blog.example/post#comment-cmt_1");
    expect(commentAddress("http://127.0.0.1:8080/preview", "https://blog.example/post#intro", "cmt_1")).toBe(
      "https://blog.example/post#comment-cmt_1",
    );
    expect(commentAnchor("cmt_1")).toBe("comment-cmt_1");
  });

  it("is the address a reply email links to, and its hash names the comment again", () => {
    for (const id of ["cmt_AbC-12_x", "imp.old:42"]) {
      const url = "https://blog.example/2026/post?utm=mail#top";
      const mailed = commentLink(url, id);
      expect(commentAddress("https://elsewhere.example/", url, id)).toBe(mailed);
      expect(commentIdFromHash(new URL(mailed!).hash)).toBe(id);
    }
  });
});
