// The first error of a file that is not well-formed, as the XML reader
// (src/modules/portability/xml-reader.ts) reports it: a bare `&` where it stands whatever the chunks
// (ampersands.ts), references and `&` in CDATA, comments and instructions left alone; a mismatched
// close tag as its one error, the records before it read and nothing of the elements it closed;
// whitespace and a BOM before `<?xml` skipped, positions counting them; and the format a file's
// start shows (sniff.ts).
import { describe, expect, it } from "vitest";
import { AmpersandScanner } from "../../src/modules/portability/ampersands.js";
import { parseDisqus } from "../../src/modules/portability/parse-disqus.js";
import { formatOf } from "../../src/modules/portability/sniff.js";
import type { SourceItem } from "../../src/modules/portability/source.js";

async function collect(chunks: string[]): Promise<SourceItem[]> {
  const items: SourceItem[] = [];
  for await (const item of parseDisqus(
    (async function* () {
      yield* chunks;
    })(),
  ))
    items.push(item);
  return items;
}

/** the text cut into chunks of `size` characters */
const cut = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

/** the first bare `&` the scanner finds in `text` given in chunks of `size`, as line:column */
function bare(text: string, size: number): string | null {
  const s = new AmpersandScanner();
  const chunks = cut(text, size);
  for (let i = 0; i < chunks.length; i++) {
    const found = s.scan(chunks[i]!, i === chunks.length - 1);
    if (found) return `${found.line}:${found.column}`;
  }
  return null;
}

const HEAD = '<?xml version="1.0"?>\n<disqus xmlns:dsq="http://disqus.com/disqus-internals">\n';
const THREAD = '<thread dsq:id="t1"><id>a-1</id><link>https://x.example/1</link></thread>\n';
const post = (id: string, name: string) =>
  `<post dsq:id="${id}"><message><![CDATA[<p>a &nbsp; b & c</p>]]></message><createdAt>2024-01-01T00:00:00Z</createdAt>` +
  `<author><name>${name}</name><username>u${id}</username></author><thread dsq:id="t1"/></post>\n`;

describe("a bare &", () => {
  it("is found where it stands, whatever the chunks; references and & in CDATA, comments and instructions are not", () => {
    const ok = `<a x="&amp;&#38;&#x26;">&lt;<![CDATA[ & ]]><!-- & --><?pi & ?>&quot;\n&apos;</a>`;
    const badText = `<a>\n  <b>one &amp; two</b>\n  <c>three & four</c>\n</a>`;
    for (const size of [1, 2, 3, 7, 64, 10_000]) {
      expect(bare(ok, size), `chunks of ${size}`).toBeNull();
      expect(bare(badText, size), `chunks of ${size}`).toBe("3:12");
      expect(bare("<a>x &y</a>", size)).toBe("1:6");
      expect(bare('<a t="1 & 2"/>', size)).toBe("1:9");
      expect(bare(`<a>&${"n".repeat(100)};</a>`, size)).toBe("1:4");
    }
  });

  it("ends a Disqus file there: the records before it are read, nothing after", async () => {
    const file = HEAD + THREAD + post("p1", "A") + post("p2", "B & C") + post("p3", "D") + "</disqus>\n";
    for (const size of [5, 100, 100_000]) {
      const items = await collect(cut(file, size));
      const errors = items.filter((i) => i.kind === "error");
      const column = post("p2", "B & C").indexOf("B & C") + 3;
      expect(errors).toEqual([
        { kind: "error", position: `line 5, column ${column}`, message: "not well-formed XML: a bare & (write &amp;)", fatal: true },
      ]);
      expect(items.filter((i) => i.kind === "post").map((p) => p.kind === "post" && p.key)).toEqual(["p1"]);
    }
  });
});

describe("the first error only", () => {
  it("a mismatched close tag is the one error: the elements it would close are not handed on", async () => {
    const broken = post("p2", "B").replace("</author>", "</autor>");
    const items = await collect([HEAD + THREAD + post("p1", "A") + broken + post("p3", "C") + "</disqus>\n"]);
    expect(items.filter((i) => i.kind === "error")).toEqual([
      {
        kind: "error",
        position: expect.stringMatching(/^line 5, column \d+$/),
        message: "not well-formed XML: unexpected close tag.",
        fatal: true,
      },
    ]);
    expect(items.filter((i) => i.kind === "post").length).toBe(1);
  });

  it("whitespace and a BOM before <?xml are skipped; positions count them", async () => {
    const items = await collect(["\uFEFF\n \n  " + HEAD + THREAD + post("p1", "A & B") + "</disqus>\n"]);
    const column = post("p1", "A & B").indexOf("A & B") + 3;
    expect(items.filter((i) => i.kind === "error")).toEqual([expect.objectContaining({ position: `line 6, column ${column}` })]);
    const fine = await collect(["\n\n", "  ", HEAD, THREAD + post("p1", "A") + "</disqus>\n"]);
    expect(fine.map((i) => i.kind)).toEqual(["thread", "post"]);
  });
});

describe("formatOf", () => {
  it("tells Disqus, WordPress (WXR 1.0–1.2) and NDJSON apart from a file's start", () => {
    expect(formatOf('\uFEFF <?xml version="1.0"?>\n<!-- x --><disqus xmlns="http://disqus.com">')).toBe("disqus");
    for (const v of ["1.0", "1.1", "1.2"])
      expect(formatOf(`<?xml version="1.0"?>\n<rss version="2.0" xmlns:wp="http://wordpress.org/export/${v}/">`)).toBe("wordpress");
    expect(formatOf('{"type":"export","version":1}\n')).toBe("ndjson");
    expect(formatOf("<rss><channel/></rss>")).toBeNull();
    expect(formatOf("hello")).toBeNull();
  });

  it("tells Artalk's array, Twikoo's array, results and lines, and isso's and Cusdis's SQLite schemas apart; an SQLite file naming neither is neither", () => {
    expect(formatOf('[{"id":"1","rid":"0","content":"hi","page_key":"/a/"}]')).toBe("artalk");
    expect(formatOf('[\n  {\n    "_id": "a1",\n    "nick": "A",\n    "url": "/a/",\n    "comment": "<p>hi</p>"\n  }\n]')).toBe("twikoo");
    expect(formatOf('{"results":[{"_id":"a1","url":"/a/","comment":"hi"}]}')).toBe("twikoo");
    expect(formatOf('{"_id":{"$oid":"a1"},"url":"/a/","href":"https://x.example/a/","comment":"hi"}\n{"_id":"a2"')).toBe("twikoo");
    // one Artrans object (Artalk refuses it): no format
    expect(formatOf('{"id":"1","content":"hi","page_key":"/a/"}')).toBeNull();
    const sqlite = (schema: string) => `SQLite format 3\u0000\u0010\u0000${schema}`;
    expect(
      formatOf(sqlite('CREATE TABLE "comments" ("id" TEXT NOT NULL PRIMARY KEY, "pageId" TEXT NOT NULL, "by_nickname" TEXT NOT NULL')),
    ).toBe("cusdis");
    expect(formatOf(sqlite("CREATE TABLE threads (id INTEGER PRIMARY KEY, uri VARCHAR(256) UNIQUE, title VARCHAR(256))"))).toBe("isso");
    expect(formatOf(sqlite("CREATE TABLE notes (id INTEGER PRIMARY KEY)"))).toBeNull();
    // a plain pg_dump is Cusdis's, the one format read from PostgreSQL; pg_dumpall's is none
    expect(formatOf("--\n-- PostgreSQL database dump\n--\n\n\\restrict k\n")).toBe("cusdis");
    expect(formatOf("--\n-- PostgreSQL database cluster dump\n--\n")).toBeNull();
  });
});
