// How a page's address is compared (contract section 27): src/modules/discussions/url-key.ts.
import { describe, expect, it } from "vitest";
import { discussionIdForKey, urlKey } from "../../src/modules/discussions/url-key.js";
import { DISCUSSION_ID_RE } from "../../src/lib/ids.js";

describe("urlKey", () => {
  it("lower-cases scheme and host, drops the default port and the fragment", () => {
    expect(urlKey("HTTPS://News.Example.COM:443/Posts/Hello#comments")).toBe("https://news.example.com/Posts/Hello");
    expect(urlKey("http://news.example:80/a")).toBe("http://news.example/a");
    expect(urlKey("https://news.example:80/a")).toBe("https://news.example:80/a");
    expect(urlKey("http://news.example:8080/a#x")).toBe("http://news.example:8080/a");
  });

  it("makes an empty path / and ignores a trailing slash on a longer one", () => {
    expect(urlKey("https://news.example")).toBe("https://news.example/");
    expect(urlKey("https://news.example/")).toBe("https://news.example/");
    expect(urlKey("https://news.example/posts/hello/")).toBe("https://news.example/posts/hello");
    expect(urlKey("https://news.example/posts/hello//")).toBe("https://news.example/posts/hello");
    expect(urlKey("https://news.example//")).toBe("https://news.example/");
  });

  it("keeps the query as it is (it can name another page), and the path's case", () => {
    expect(urlKey("https://news.example/?p=12")).toBe("https://news.example/?p=12");
    expect(urlKey("https://news.example/read/?p=12&b=2#c")).toBe("https://news.example/read?p=12&b=2");
    expect(urlKey("https://news.example/a?")).toBe("https://news.example/a");
    expect(urlKey("https://news.example/A")).not.toBe(urlKey("https://news.example/a"));
  });

  it("gives one key for the ways one page's address is written", () => {
    const forms = [
      "https://news.example/posts/hello",
      "HTTPS://NEWS.EXAMPLE/posts/hello/",
      "https://news.example:443/posts/hello#comment-cmt_1",
      " https://news.example/posts/./hello ",
      "https://user@news.example/posts/hello",
    ];
    expect(new Set(forms.map(urlKey))).toEqual(new Set(["https://news.example/posts/hello"]));
  });

  it("is null for what is no http(s) page", () => {
    for (const bad of [
      "",
      "/posts/hello",
      "news.example/a",
      "ftp://news.example/a",
      "javascript:alert(1)",
      "mailto:a@b.example",
      "https://",
    ])
      expect(urlKey(bad), bad).toBeNull();
  });
});

describe("discussionIdForKey", () => {
  it("is a discussion id, the same for the same key and another for another", () => {
    const a = discussionIdForKey("https://news.example/posts/hello");
    expect(a).toMatch(/^page:[0-9a-f]{16}$/);
    expect(DISCUSSION_ID_RE.test(a)).toBe(true);
    expect(discussionIdForKey("https://news.example/posts/hello")).toBe(a);
    expect(discussionIdForKey("https://news.example/posts/hello2")).not.toBe(a);
    // FNV-1a 64 of the empty string is its offset basis
    expect(discussionIdForKey("")).toBe("page:cbf29ce484222325");
    expect(discussionIdForKey("ü")).not.toBe(discussionIdForKey("u"));
  });
});
