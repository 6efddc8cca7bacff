// The body renderer (src/lib/markdown.ts): what each Markdown construct becomes, plain text, the
// rendered text and link count, bounded time, and the XSS corpus (test/support/xss-corpus.ts):
// every rendering is parsed by parse5, as a browser would parse it, and every element, attribute and
// URL in it is checked against the contract's allow-list (section 18) — not by matching strings.
import { describe, expect, it } from "vitest";
import { parse } from "parse5";
import type { DefaultTreeAdapterTypes as T } from "parse5";
import fc from "fast-check";
import markdownIt from "markdown-it";
import { renderBody, renderThroughParser, sanitizeBodyHtml } from "../../src/lib/markdown.js";
import { FORMATTINGS, JAVASCRIPT_SPELLINGS, OTHER_SCHEMES, RAW_HTML, XSS_CORPUS } from "../support/xss-corpus.js";

const MD = { markdown: true, images: false };
const MD_IMAGES = { markdown: true, images: true };
const PLAIN = { markdown: false, images: false };
const REL = "nofollow ugc noopener noreferrer";

/** The contract's allow-list, written here on its own (not imported from the renderer). */
const TAGS = new Set(["p", "br", "em", "strong", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li", "a"]);
const ATTRIBUTES: Record<string, string[]> = {
  a: ["href", "title", "rel"],
  ol: ["start"],
  img: ["src", "alt", "title", "loading", "referrerpolicy"],
};

/** Every way the HTML steps outside the allow-list, as a browser's parser reads it; [] when none. */
function outsideAllowList(html: string, images: boolean): string[] {
  const problems: string[] = [];
  const doc = parse(`<!doctype html><html><head></head><body>${html}</body></html>`);
  const htmlEl = doc.childNodes.find((n): n is T.Element => n.nodeName === "html")!;
  const [head, body] = htmlEl.childNodes.filter((n): n is T.Element => "tagName" in n);
  if (head!.childNodes.length) problems.push("something moved into <head>");
  const walk = (node: T.ParentNode) => {
    for (const child of node.childNodes) {
      if (child.nodeName === "#text") continue;
      if (child.nodeName === "#comment") {
        problems.push("an HTML comment");
        continue;
      }
      const el = child as T.Element;
      if (!TAGS.has(el.tagName) && !(images && el.tagName === "img")) problems.push(`<${el.tagName}>`);
      if (el.namespaceURI !== "http://www.w3.org/1999/xhtml") problems.push(`<${el.tagName}> in ${el.namespaceURI}`);
      const allowed = ATTRIBUTES[el.tagName] ?? [];
      for (const { name, value } of el.attrs) {
        if (!allowed.includes(name)) problems.push(`<${el.tagName} ${name}>`);
        if (name === "href" && !schemeIs(value, ["http:", "https:", "mailto:"])) problems.push(`href=${JSON.stringify(value)}`);
        if (name === "src" && !schemeIs(value, ["https:"])) problems.push(`src=${JSON.stringify(value)}`);
        if (name === "rel" && value !== REL) problems.push(`rel=${JSON.stringify(value)}`);
        if (name === "start" && !/^\d+$/.test(value)) problems.push(`start=${JSON.stringify(value)}`);
      }
      if (el.tagName === "a" && el.attrs.find((a) => a.name === "rel")?.value !== REL) problems.push("<a> without its rel");
      if (el.tagName === "img" && !el.attrs.some((a) => a.name === "src")) problems.push("<img> without src");
      walk("content" in el ? (el as T.Template).content : el);
    }
  };
  walk(body!);
  return problems;
}

/** The URL as a browser resolves it (against a page of its own) has one of these schemes. */
const schemeIs = (url: string, schemes: string[]) => schemes.includes(new URL(url, "https://page.example/").protocol);

describe("the renderer: Markdown as the contract lists it", () => {
  it.each([
    [
      "*em* _em_ **strong** __strong__ ~~del~~",
      "<p><em>em</em> <em>em</em> <strong>strong</strong> <strong>strong</strong> <s>del</s></p>",
    ],
    ["`code <b>`", "<p><code>code &lt;b&gt;</code></p>"],
    ["```js\nlet a = 1 < 2;\n```", "<pre><code>let a = 1 &lt; 2;\n</code></pre>"],
    ["    indented", "<pre><code>indented\n</code></pre>"],
    ["> quoted\n> > twice", "<blockquote>\n<p>quoted</p>\n<blockquote>\n<p>twice</p>\n</blockquote>\n</blockquote>"],
    ["- a\n- b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>"],
    ["3. c\n4. d", '<ol start="3">\n<li>c</li>\n<li>d</li>\n</ol>'],
    ["hard  \nbreak\\\nagain\nsoft", "<p>hard<br />\nbreak<br />\nagain\nsoft</p>"],
    ["first\n\nsecond", "<p>first</p>\n<p>second</p>"],
    ['[site](https://x.example/a?b=1&c=2 "T")', `<p><a href="https://x.example/a?b=1&amp;c=2" title="T" rel="${REL}">site</a></p>`],
    ["<https://x.example/>", `<p><a href="https://x.example/" rel="${REL}">https://x.example/</a></p>`],
    ["see http://x.example/p.", `<p>see <a href="http://x.example/p" rel="${REL}">http://x.example/p</a>.</p>`],
    [
      "[mail](mailto:a@x.example) b@x.example",
      `<p><a href="mailto:a@x.example" rel="${REL}">mail</a> <a href="mailto:b@x.example" rel="${REL}">b@x.example</a></p>`,
    ],
    ["<b>raw</b> & <!-- c -->", "<p>&lt;b&gt;raw&lt;/b&gt; &amp; &lt;!-- c --&gt;</p>"],
    ["# not a heading\n\n---", "<p># not a heading</p>\n<p>---</p>"],
    ["[rel](/path) [ftp](ftp://x.example/)", "<p>[rel](/path) [ftp](ftp://x.example/)</p>"],
    ["![alt](https://x.example/a.png)", `<p>!<a href="https://x.example/a.png" rel="${REL}">alt</a></p>`],
  ])("%j", (body, html) => {
    expect(renderBody(body, MD).html).toBe(html);
  });

  it("shows images only with formatting.images, only https, lazily and without a referrer", () => {
    expect(renderBody("![a *b*](https://x.example/a.png) ![c](http://x.example/c.png)", MD_IMAGES)).toEqual({
      html: '<p><img src="https://x.example/a.png" alt="a b" loading="lazy" referrerpolicy="no-referrer" /> c</p>',
      links: 0,
      text: "a b c",
      hrefs: [],
    });
  });

  it("with formatting.markdown false shows the body as plain text, its line breaks kept", () => {
    expect(renderBody("<b>*x*</b> & [a](https://x.example/)\r\nline\n\nlast", PLAIN)).toEqual({
      html: "<p>&lt;b&gt;*x*&lt;/b&gt; &amp; [a](https://x.example/)<br />\nline<br />\n<br />\nlast</p>",
      links: 0,
      text: "<b>*x*</b> & [a](https://x.example/)\nline\n\nlast",
      hrefs: [],
    });
  });

  it("gives the rendered text (no markup, entities decoded, blocks on lines of their own) and the number of links", () => {
    const r = renderBody("**Hello** [big](https://x.example/) world &amp; co\n\n- one\n- two\n\n> q https://y.example", MD);
    expect(r.text).toBe("Hello big world & co\none\ntwo\nq https://y.example");
    expect(r.links).toBe(2);
  });

  it("shows nesting deeper than its limit as text, not as deeper markup", () => {
    const r = renderBody(`${"> ".repeat(100)}deep`, MD);
    expect(r.html.match(/<blockquote>/g)!.length).toBeLessThanOrEqual(20);
    expect(outsideAllowList(r.html, false)).toEqual([]);
  });

  it("renders any body of 10,000 characters quickly, however it is made (no super-linear case)", () => {
    const bodies = [
      "[",
      "*a",
      "_a",
      "**_",
      "> ",
      "- ",
      "1. ",
      "`a``",
      "<",
      "&#",
      "&aaaaaaaa",
      "[a](<",
      "[a](",
      "\\",
      "http://",
      "a@",
      "www.",
      "www.a ",
      " www.a.com/(",
      "![",
      "~~a",
      "[a]: ",
      "*_`[<",
      "a\n",
    ].map((unit) => unit.repeat(Math.ceil(10_000 / unit.length)).slice(0, 10_000));
    bodies.push(`${"[".repeat(2_500)}a${"](b)".repeat(1_874)}`);
    // the bound is relative to as many ordinary bodies of the same size rendered in the same run (a
    // busy machine slows both): a super-linear case on 10,000 characters takes far past fifty times them
    const ordinary = "Some *text* with a [link](https://x.example/) and `code`, then more words.\n\n";
    const benign = bodies.map(() => ordinary.repeat(Math.ceil(10_000 / ordinary.length)).slice(0, 10_000));
    const timed = (list: string[]) => {
      const started = performance.now();
      for (const body of list) renderBody(body, MD_IMAGES);
      return performance.now() - started;
    };
    const floor = Math.min(timed(benign), timed(benign), timed(benign));
    expect(timed(bodies)).toBeLessThan(Math.max(1_000, 50 * floor));
  });
});

describe("the renderer and the XSS corpus", () => {
  it.each(FORMATTINGS)("renders no vector outside the allow-list (%o)", (formatting) => {
    const failures = XSS_CORPUS.map((body) => ({
      body,
      problems: outsideAllowList(renderBody(body, formatting).html, formatting.images),
    })).filter((f) => f.problems.length);
    expect(failures).toEqual([]);
  });

  it("makes no link and no image of javascript:, vbscript: or data: in any spelling", () => {
    const bodies = [
      ...JAVASCRIPT_SPELLINGS.flatMap((s) => [
        `[a](${s}alert(1))`,
        `[a](<${s}alert(1)>)`,
        `![a](${s}alert(1))`,
        `<${s}alert(1)>`,
        `[a][r]\n\n[r]: ${s}alert(1)`,
      ]),
      ...OTHER_SCHEMES.flatMap((s) => [`[a](${s})`, `![a](${s})`, `<${s}>`]),
      "[a](javascript&#58;alert(1))",
    ];
    for (const body of bodies) {
      const r = renderBody(body, MD_IMAGES);
      expect({ body, links: r.links, html: r.html }).toEqual({ body, links: 0, html: expect.not.stringMatching(/<(a|img) /) });
    }
  });

  it("shows raw HTML as its text: the vector is still there to read, as characters", () => {
    for (const body of RAW_HTML.filter((b) => !b.includes("\u0000"))) {
      const r = renderBody(body, MD);
      expect(outsideAllowList(r.html, false)).toEqual([]);
      expect(r.html).not.toMatch(/<(script|img|svg|iframe|style|form)\b/i);
    }
    expect(renderBody("<img src=x onerror=alert(1)>", MD).text).toBe("<img src=x onerror=alert(1)>");
  });

  // the sanitizer is the last step whatever the parser emits: fed the raw vectors as HTML, it still
  // keeps only the allow-list (a parser bug that let raw HTML through would meet this)
  it.each([false, true])("the sanitizer alone keeps every raw HTML vector inside the allow-list (images %s)", (images) => {
    const failures = XSS_CORPUS.map((html) => ({ html, problems: outsideAllowList(sanitizeBodyHtml(html, images), images) })).filter(
      (f) => f.problems.length,
    );
    expect(failures).toEqual([]);
  });

  it("the sanitizer keeps a safe link's href, puts its rel on it and drops the rest", () => {
    expect(sanitizeBodyHtml('<a href="http://x.example/" onclick="alert(1)" target="_blank" rel="opener" style="x">x</a>', false)).toBe(
      `<a href="http://x.example/" rel="${REL}">x</a>`,
    );
    expect(sanitizeBodyHtml('<a href="jav&#x09;ascript:alert(1)">x</a>', false)).toBe(`<a rel="${REL}">x</a>`);
    expect(sanitizeBodyHtml('<img src="http://x.example/a.png"><img src="https://x.example/a.png" onerror="alert(1)">', true)).toBe(
      '<img src="https://x.example/a.png" loading="lazy" referrerpolicy="no-referrer" />',
    );
    expect(sanitizeBodyHtml("<script>alert(1)</script><style>p{}</style><p>kept</p>", false)).toBe("<p>kept</p>");
  });

  it("the sanitizer writes back what it checked: each kept attribute decoded as a browser decodes it, the first of a name, escaped again", () => {
    expect(sanitizeBodyHtml(`<a href='https://x.example/?a=1&amp;b="2"' title='say "hi" <b>'>x</a>`, false)).toBe(
      `<a href="https://x.example/?a=1&amp;b=&quot;2&quot;" title="say &quot;hi&quot; <b>" rel="${REL}">x</a>`,
    );
    // a browser keeps the first of two attributes of one name: so does the sanitizer, and judges that one
    expect(sanitizeBodyHtml('<a href="https://x.example/" href="javascript:alert(1)">x</a>', false)).toBe(
      `<a href="https://x.example/" rel="${REL}">x</a>`,
    );
    expect(sanitizeBodyHtml('<a href="javascript:alert(1)" href="https://x.example/">x</a>', false)).toBe(`<a rel="${REL}">x</a>`);
    expect(sanitizeBodyHtml('<a href="&#x6A;avascript&colon;alert(1)">x</a><a href=" https://x.example/ ">y</a>', false)).toBe(
      `<a rel="${REL}">x</a><a href="https://x.example/" rel="${REL}">y</a>`,
    );
    expect(sanitizeBodyHtml('<ol start="3x"><li>a</li></ol><ol start="007" type="i"></ol>', false)).toBe(
      '<ol><li>a</li></ol><ol start="7"></ol>',
    );
    expect(sanitizeBodyHtml('<img alt="a" src="https://x.example/a.png" srcset="http://x.example/b.png 2x">', true)).toBe(
      '<img src="https://x.example/a.png" alt="a" loading="lazy" referrerpolicy="no-referrer" />',
    );
    expect(sanitizeBodyHtml('<img src="https://x.example/a.png">', false)).toBe("");
  });
});

describe("the plain line's shortcut", () => {
  // renderBody answers a body of words and harmless punctuation without the parser and sanitizer;
  // whatever the shortcut takes must render exactly as they would render it, in both modes
  const alphabet = ["a", "Z", "é", "ß", "ж", "中", "e\u0301", "7", "½", " ", "  ", ".", ":", ",", ";", "?", "!", "'", '"', "(", ")"];
  const tricky = [
    "hello from the bench",
    'She said "no" (twice). Really: yes!',
    "Straße, 中文 and ж; ok?",
    "a . b",
    "end.",
    "x: y",
    "e.g. this",
    "www. example",
    "mailto: someone",
    "http: nothing",
    "Item 1. then 2) done",
    "a! [b",
  ];
  const shortcutTakes = (body: string) =>
    JSON.stringify(renderBody(body, MD)) !== JSON.stringify(renderThroughParser(body, MD)) ? "differs" : "same";

  it("renders every body it takes exactly as the parser and the sanitizer do", () => {
    for (const body of tricky) {
      expect(renderBody(body, MD), body).toEqual(renderThroughParser(body, MD));
      expect(renderBody(body, PLAIN), body).toEqual(renderThroughParser(body, PLAIN));
    }
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 40 }), (parts) => {
        const body = parts.join("");
        expect(renderBody(body, MD)).toEqual(renderThroughParser(body, MD));
        expect(renderBody(body, PLAIN)).toEqual(renderThroughParser(body, PLAIN));
      }),
      { numRuns: 3000 },
    );
    expect(shortcutTakes("hello")).toBe("same");
  });

  it("leaves to the parser whatever could be a link, markup, an entity or a block", () => {
    // each of these renders differently from its own text in a paragraph: the shortcut must not take it
    for (const body of [
      "see www.example.com",
      "a@b.co",
      "http://x.org",
      "*em*",
      "1. one",
      "- item",
      "> quote",
      "a &copy; b",
      " lead",
      "`c`",
    ]) {
      const full = renderThroughParser(body, MD);
      expect(full, body).not.toEqual({ html: `<p>${body}</p>`, text: body, links: 0, hrefs: [] });
      expect(renderBody(body, MD), body).toEqual(full);
    }
  });
});

describe("markdown-it as patches/markdown-it+15.0.3.patch leaves it", () => {
  it("its classes set their fields by assignment, not through the build's _defineProperty helper (a fifth of a render)", () => {
    // the helper's chain (a key conversion, an `in` test, a keyed store) for each of a Token's 13
    // fields: the same objects, made in 26 instead of 36 µs for a typical comment (bench/notes.md)
    const classes = ["Token", "Ruler", "Renderer", "ParserCore", "StateCore", "ParserBlock", "StateBlock", "ParserInline", "StateInline"];
    for (const name of classes) {
      const source = String((markdownIt as unknown as Record<string, unknown>)[name]);
      expect(source, name).toMatch(/^class/);
      expect(source, name).not.toContain("_defineProperty");
    }
    const instance = String(markdownIt("commonmark").constructor);
    expect(instance).toMatch(/^class/);
    expect(instance).not.toContain("_defineProperty");
    // a token is what it was: its fields in the build's order, each own, enumerable and writable
    const token = new (markdownIt as unknown as { Token: new (t: string, g: string, n: number) => object }).Token("text", "", 0);
    expect(Object.keys(token)).toEqual([
      "map",
      "level",
      "children",
      "content",
      "markup",
      "info",
      "block",
      "hidden",
      "type",
      "tag",
      "attrs",
      "nesting",
      "meta",
    ]);
    expect(Object.getOwnPropertyDescriptor(token, "content")).toEqual({ value: "", enumerable: true, configurable: true, writable: true });
  });
});
