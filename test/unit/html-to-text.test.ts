// Comment HTML as plain text (src/modules/portability/source.ts `htmlToText`): exact output for the
// shapes imports meet, and, for inputs made to make a backtracking matcher blow up (a run of
// `<a href="`, unclosed tags, nested quotes, huge attribute runs), an answer within a bounded time.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { htmlToText } from "../../src/modules/portability/source.js";

describe("htmlToText: exact output", () => {
  it.each([
    ["<p>First!</p>\n\n<p>Second line<br>third</p>", "First!\n\nSecond line\nthird"],
    ["line1\r\nline2<br/>line3<BR >x", "line1\nline2\nline3\nx"],
    ['<a href="h" rel="nofollow"><b>bold</b> link</a> after', "bold link (h) after"],
    ['<A HREF="https://x.example/?a=1&amp;b=2">https://x.example/?a=1&amp;b=2</A>', "https://x.example/?a=1&b=2"],
    ['<a href="https://x.example"> </a>', "https://x.example"],
    ['<a href="x">t<a href="y">u</a>v</a>', "tu (y)v"], // an <a> closes an open one, as in browsers
    ['<a href="x">never closed', "never closed"],
    ["<p>one</p>\n\n\n\n<p>two</p> <b>three</b>", "one\n\ntwo\n\nthree"],
    ["&quot;hi&quot; &apos;x&apos;&nbsp;y &#8364; &unknown; 3 &gt; 2", "\"hi\" 'x' y € &unknown; 3 > 2"],
    ["<ul><li>a</li><li>b</li></ul><!-- note --><img src=x>c", "abc"],
    ["I <3 you", "I <3 you"],
    ["a\u0000b", "ab"],
    ['text <a href="', "text"],
  ])("%j → %j", (html, text) => {
    expect(htmlToText(html)).toBe(text);
  });
});

/** Runs `f` and answers how long it took, in ms. */
const timed = (f: () => unknown) => {
  const start = performance.now();
  f();
  return performance.now() - start;
};

const PATHOLOGICAL = [
  '<a href="',
  "<a ",
  'href="',
  '"',
  "'",
  "<",
  ">",
  "</a>",
  "<p>",
  "</p>",
  "<br",
  "&",
  "&#x",
  "&amp",
  'x="y" ',
  " ",
  "\n",
  "<!--",
  "a",
];

// The bound is relative to ordinary HTML of the same size converted in the same run (a busy machine
// slows both): a backtracking matcher on these inputs takes minutes, far past ten times the floor.
const BENIGN = '<p>Some <b>text</b> and a <a href="https://x.example">link</a>.</p>\n'.repeat(1_600);
let limit = 1_000;

describe("htmlToText: bounded time on hostile input", () => {
  beforeAll(() => {
    const floor = Math.min(...[0, 1, 2].map(() => timed(() => htmlToText(BENIGN))));
    limit = Math.max(1_000, 10 * floor);
  });

  it('100 KB of a repeated `<a href="` (a backtracking matcher takes minutes) in a bounded time', () => {
    const html = '<a href="'.repeat(Math.ceil(100_000 / 9));
    let out = "";
    expect(timed(() => (out = htmlToText(html)))).toBeLessThan(limit);
    expect(typeof out).toBe("string");
  });

  it("huge attribute runs, unclosed tags and nested quotes, each 100 KB, in a bounded time", () => {
    const inputs = [
      "<a " + 'x="y" '.repeat(17_000),
      "<b>".repeat(33_000),
      '<a href="\'"\'"'.repeat(8_000),
      '<a href="x">'.repeat(8_500),
      '<a href="x">t</a'.repeat(6_000),
      "&#x".repeat(33_000),
      "<p" + "\n".repeat(100_000),
    ];
    for (const html of inputs)
      expect(
        timed(() => htmlToText(html)),
        html.slice(0, 20),
      ).toBeLessThan(limit);
  });

  it("any mix of the pieces backtracking matchers choke on, 100 KB, answers in bounded time", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PATHOLOGICAL), { minLength: 1, maxLength: 64 }), (pieces) => {
        const unit = pieces.join("");
        const html = unit.repeat(Math.ceil(100_000 / unit.length));
        let out = "";
        const ms = timed(() => (out = htmlToText(html)));
        expect(ms).toBeLessThan(limit);
        expect(out.length).toBeLessThanOrEqual(html.length * 2);
      }),
      { numRuns: 60 },
    );
  });
});
