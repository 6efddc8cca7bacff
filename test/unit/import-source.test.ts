// The pure parts of reading an import's records (src/modules/portability/source.ts): discussion ids
// made of any text, comment HTML as plain text, source dates, and the author addresses an import
// may keep.
import { describe, expect, it } from "vitest";
import { discussionIdOf, emailOf, htmlToText, outOfRangeDate, parseSourceDate } from "../../src/modules/portability/source.js";

describe("discussionIdOf", () => {
  it("keeps an id that already is one, slugs a URL, hashes what has no usable character, bounds the length", () => {
    expect(discussionIdOf("article-42")).toBe("article-42");
    expect(discussionIdOf("https://news.example/a/2?x=1", true)).toBe("news.example-a-2-x-1");
    expect(discussionIdOf("   ")).toBeNull();
    expect(discussionIdOf("ü")).toMatch(/^h-[0-9a-f]{24}$/);
    const long = discussionIdOf(`x y ${"a".repeat(200)}`)!;
    expect(long).toHaveLength(128);
    expect(long).toMatch(/^x-y-a+-[0-9a-f]{16}$/);
  });
});

describe("htmlToText", () => {
  it("turns paragraphs and breaks into lines, links into text (href), and decodes entities", () => {
    expect(htmlToText("<p>First!</p><p>Second line<br>third</p>")).toBe("First!\n\nSecond line\nthird");
    expect(htmlToText('<a href="https://x.example">see</a> &amp; &#x263A; &lt;b&gt;')).toBe("see (https://x.example) & ☺ <b>");
    expect(htmlToText('<a href="https://x.example">https://x.example</a>')).toBe("https://x.example");
    expect(htmlToText("a\u0000b")).toBe("ab");
  });
});

describe("outOfRangeDate", () => {
  it("takes years 1 to 9999, names the first date outside them (an invalid one too), as `shown` says or as a date", () => {
    const at = (iso: string) => new Date(iso);
    expect(outOfRangeDate({ a: at("0001-01-01T00:00:00.000Z"), b: at("9999-12-31T23:59:59.999Z"), c: null })).toBeNull();
    const outside = "outside the dates an import takes (years 1 to 9999)";
    expect(outOfRangeDate({ a: at("2024-01-01T00:00:00Z"), b: at("0000-12-31T23:59:59.999Z") })).toBe(
      `b is 0000-12-31T23:59:59.999Z, ${outside}`,
    );
    expect(outOfRangeDate({ a: at("+010000-01-01T00:00:00Z") })).toBe(`a is +010000-01-01T00:00:00.000Z, ${outside}`);
    expect(outOfRangeDate({ t: new Date(1e23) }, { t: "1e20 seconds" })).toBe(`t is 1e20 seconds, ${outside}`);
    expect(outOfRangeDate({ t: new Date(Number.NaN) })).toBe(`t is not a date, ${outside}`);
  });
});

describe("parseSourceDate", () => {
  it("reads ISO 8601, WordPress's UTC form and Go's; anything else is null", () => {
    expect(parseSourceDate("2024-01-02T03:04:05Z")?.toISOString()).toBe("2024-01-02T03:04:05.000Z");
    expect(parseSourceDate("2024-01-02 03:04:05")?.toISOString()).toBe("2024-01-02T03:04:05.000Z");
    // Go's time format (Artalk's export), SQLite's with fractions, ISO without a zone: UTC whatever the server's zone
    expect(parseSourceDate("2021-10-28 20:50:15 +0800")?.toISOString()).toBe("2021-10-28T12:50:15.000Z");
    expect(parseSourceDate("2021-10-28 20:50:15 -0130")?.toISOString()).toBe("2021-10-28T22:20:15.000Z");
    expect(parseSourceDate("2024-01-02 03:04:05.123456")?.toISOString()).toBe("2024-01-02T03:04:05.123Z");
    expect(parseSourceDate("2024-01-02T03:04:05")?.toISOString()).toBe("2024-01-02T03:04:05.000Z");
    expect(parseSourceDate("2024-01-02T03:04:05+02:00")?.toISOString()).toBe("2024-01-02T01:04:05.000Z");
    expect(parseSourceDate("0000-00-00 00:00:00")).toBeNull();
    expect(parseSourceDate("yesterday")).toBeNull();
    expect(parseSourceDate("")).toBeNull();
  });
});

describe("emailOf", () => {
  it("answers an address in lower case, and null for what is not one", () => {
    expect(emailOf(" Jane@Example.COM ")).toBe("jane@example.com");
    expect(emailOf("jane@localhost")).toBeNull();
    expect(emailOf("not an address")).toBeNull();
    expect(emailOf("a b@example.com")).toBeNull();
    expect(emailOf('"x"@example.com')).toBeNull();
    expect(emailOf(`${"a".repeat(250)}@example.com`)).toBeNull();
    expect(emailOf(null)).toBeNull();
  });
});
