// The bounds of the streaming XML reader (src/modules/portability/xml-reader.ts, XML_LIMITS) as the
// Disqus and WordPress readers meet them: nesting past the depth, too many attributes and one
// oversized piece end the file with a fatal error at its position, early (the rest of the file is
// never read); a record past its element or text bound is reported at its position and skipped
// while the records around it are read as usual.
import { describe, expect, it } from "vitest";
import { parseDisqus } from "../../src/modules/portability/parse-disqus.js";
import { parseWordpress } from "../../src/modules/portability/parse-wordpress.js";
import { XML_LIMITS } from "../../src/modules/portability/xml-reader.js";
import type { SourceItem } from "../../src/modules/portability/source.js";

const HEAD = '<?xml version="1.0" encoding="utf-8"?>\n<disqus xmlns:dsq="http://disqus.com/disqus-internals">\n';
const THREAD = '<thread dsq:id="t1"><id>a-1</id><link>https://x.example/1</link></thread>\n';
const post = (id: string, message: string) =>
  `<post dsq:id="${id}"><message>${message}</message><createdAt>2024-01-01T00:00:00Z</createdAt>` +
  `<author><name>A</name><username>a</username></author><thread dsq:id="t1"/></post>\n`;

async function collect(gen: AsyncGenerator<SourceItem>): Promise<SourceItem[]> {
  const items: SourceItem[] = [];
  for await (const item of gen) items.push(item);
  return items;
}

/** What `parts` yields, as 64 KB chunks made as they are read; `read()` says how many characters were taken. */
function lazy(parts: () => Generator<string>) {
  let read = 0;
  return {
    read: () => read,
    stream: (async function* () {
      let buf = "";
      for (const p of parts()) {
        buf += p;
        if (buf.length >= 65_536) {
          read += buf.length;
          yield buf;
          buf = "";
        }
      }
      read += buf.length;
      yield buf;
    })(),
  };
}

const disqus = (...parts: string[]) =>
  lazy(function* () {
    yield HEAD + THREAD;
    yield* parts;
    yield "</disqus>\n";
  });

const kinds = (items: SourceItem[]) => items.map((i) => (i.kind === "post" ? `post ${i.key}` : i.kind));

describe("XML reader bounds: the file", () => {
  it(`nesting deeper than ${XML_LIMITS.depth} ends it with a fatal error at its position, without reading on`, async () => {
    const file = lazy(function* () {
      yield HEAD + THREAD + post("p0", "fine") + '<post dsq:id="p1"><message>';
      for (let i = 0; i < 2_000_000; i++) yield "<b>"; // 6 MB
      yield "</message></post></disqus>";
    });
    const items = await collect(parseDisqus(file.stream));
    expect(kinds(items)).toEqual(["thread", "post p0", "error"]);
    expect(items.at(-1)).toEqual({
      kind: "error",
      position: expect.stringMatching(/^line 5, column \d+$/),
      message: `elements nested deeper than ${XML_LIMITS.depth}`,
      fatal: true,
    });
    expect(file.read()).toBeLessThan(200_000);
  });

  it("nesting in a WordPress comment ends a WordPress file the same way", async () => {
    const file = lazy(function* () {
      yield "<rss><channel><item><wp:post_id>1</wp:post_id><wp:comment><wp:comment_id>1</wp:comment_id><wp:comment_content>";
      for (let i = 0; i < 100_000; i++) yield "<x>";
    });
    const items = await collect(parseWordpress(file.stream));
    expect(items).toEqual([
      {
        kind: "error",
        position: expect.stringMatching(/^line 1, column \d+$/),
        message: `elements nested deeper than ${XML_LIMITS.depth}`,
        fatal: true,
      },
    ]);
  });

  it(`an element with more than ${XML_LIMITS.attributes} attributes ends it`, async () => {
    const attrs = Array.from({ length: 100_000 }, (_, i) => `a${i}="x"`).join(" ");
    const items = await collect(parseDisqus(disqus(`<post dsq:id="p1" ${attrs}/>`, post("p2", "after")).stream));
    expect(items.at(-1)).toMatchObject({
      kind: "error",
      message: `an element with more than ${XML_LIMITS.attributes} attributes`,
      fatal: true,
    });
    expect(kinds(items)).toEqual(["thread", "error"]);
  });

  it(`one piece longer than ${XML_LIMITS.piece} characters (a comment, a CDATA section, a text) ends it`, async () => {
    for (const [open, close] of [
      ["<!--", "-->"],
      ["<![CDATA[", "]]>"],
      ["", ""],
    ]) {
      const file = lazy(function* () {
        yield HEAD + THREAD + "<junk>" + open;
        for (let i = 0; i < XML_LIMITS.piece / 65_536 + 64; i++) yield "y".repeat(65_536);
        yield close + "</junk>" + post("p1", "after") + "</disqus>";
      });
      const items = await collect(parseDisqus(file.stream));
      expect(kinds(items), open).toEqual(["thread", "error"]);
      expect(items.at(-1)).toMatchObject({
        message: `a text, CDATA section, comment or tag longer than ${XML_LIMITS.piece} characters`,
        fatal: true,
      });
      expect(file.read()).toBeLessThan(XML_LIMITS.piece + 200_000);
    }
  });

  it("a long text that no record keeps is read past, whatever its length, when it comes in pieces", async () => {
    // WordPress posts' own content is not kept: only the fields a thread needs
    const items = await collect(
      parseWordpress(
        lazy(function* () {
          yield "<rss><channel><item><wp:post_id>7</wp:post_id><content:encoded>";
          for (let i = 0; i < 32; i++) yield "<p>" + "z".repeat(65_536) + "</p>"; // 2 MB, escaped markup in real files
          yield "</content:encoded><wp:comment><wp:comment_id>1</wp:comment_id><wp:comment_date_gmt>2024-01-01 00:00:00</wp:comment_date_gmt>";
          yield "<wp:comment_content>hi</wp:comment_content></wp:comment></item></channel></rss>";
        }).stream,
      ),
    );
    expect(kinds(items)).toEqual(["thread", "post 1"]);
  });
});

describe("XML reader bounds: a record", () => {
  it(`a Disqus post of more than ${XML_LIMITS.recordElements} elements is an error at its position, skipped; the next post is read`, async () => {
    const items = await collect(parseDisqus(disqus(post("p1", "<b/>".repeat(20_000)), post("p2", "after")).stream));
    expect(kinds(items)).toEqual(["thread", "error", "post p2"]);
    expect(items[1]).toEqual({
      kind: "error",
      position: "line 4, column 18",
      message: `<post>: more than ${XML_LIMITS.recordElements} elements; skipped with what it holds`,
    });
    expect(items[2]).toMatchObject({ kind: "post", body: "after" });
  });

  it(`a Disqus post of more than ${XML_LIMITS.recordText} characters of text is an error at its position, skipped`, async () => {
    const long = `<![CDATA[${"w ".repeat(XML_LIMITS.recordText / 2 + 1)}]]>`;
    const items = await collect(parseDisqus(disqus(post("p0", "before"), post("p1", long), post("p2", "after")).stream));
    expect(kinds(items)).toEqual(["thread", "post p0", "error", "post p2"]);
    expect(items[2]).toMatchObject({
      kind: "error",
      position: "line 5, column 18",
      message: `<post>: more than ${XML_LIMITS.recordText} characters of text; skipped with what it holds`,
    });
  });

  it("a WordPress comment past a bound is skipped; its item's other comments are read", async () => {
    const comment = (id: string, content: string) =>
      `<wp:comment><wp:comment_id>${id}</wp:comment_id><wp:comment_date_gmt>2024-01-01 00:00:00</wp:comment_date_gmt>` +
      `<wp:comment_content>${content}</wp:comment_content></wp:comment>\n`;
    const file = lazy(function* () {
      yield "<rss><channel>\n<item><title>T</title><link>https://x.example/t</link><wp:post_id>9</wp:post_id>\n";
      yield comment("1", "first");
      yield comment("2", "<i>x</i>".repeat(20_000));
      yield comment("3", "third");
      yield "</item></channel></rss>\n";
    });
    const items = await collect(parseWordpress(file.stream));
    expect(kinds(items)).toEqual(["thread", "post 1", "error", "post 3"]);
    expect(items[2]).toEqual({
      kind: "error",
      position: "line 4, column 12",
      message: `<wp:comment>: more than ${XML_LIMITS.recordElements} elements; skipped with what it holds`,
    });
  });
});
