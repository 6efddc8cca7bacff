// The indexable thread's words are the thread element's (src/modules/indexable/words.ts): English
// the same as embed/src/thread/i18n.ts, the other languages read from its files; its JSON stays
// inside a <script> element whatever it holds, and a body's text is read from its stored HTML.
import { describe, expect, it } from "vitest";
import { EN } from "../../embed/src/thread/i18n.js";
import { ENGLISH_FRAGMENT_WORDS, fragmentWords, THREAD_LANGUAGES, threadLanguageOf } from "../../src/modules/indexable/words.js";
import { scriptJson, textOfBodyHtml } from "../../src/modules/indexable/structured-data.js";
import { renderBody } from "../../src/lib/markdown.js";

describe("indexable thread words", () => {
  it("are the thread element's, in every language", () => {
    for (const [k, v] of Object.entries(ENGLISH_FRAGMENT_WORDS)) expect([k, v]).toEqual([k, EN[k as keyof typeof EN]]);
    for (const lang of THREAD_LANGUAGES.filter((l) => l !== "en")) {
      const words = fragmentWords(lang);
      // each translated (none fell back to English but "Link", which several languages keep)
      for (const k of ["title", "count_other", "load_more", "deleted"] as const) expect([lang, k, words[k]]).not.toEqual([lang, k, EN[k]]);
    }
    expect(fragmentWords("de").title).toBe("Kommentare");
    expect(threadLanguageOf("de-AT")).toBe("de");
    expect(threadLanguageOf("xx")).toBe("en");
  });
});

describe("scriptJson", () => {
  it("writes no <, > or & and no line separators, and reads back the same value", () => {
    const value = { a: "</script><script>alert(1)</script><!-- & \u2028\u2029 -->", b: ["<!--", "]]>"] };
    const out = scriptJson(value);
    expect(out).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(out)).toEqual(value);
  });
});

describe("textOfBodyHtml", () => {
  it("is the text a reader reads: tags dropped, entities decoded, blocks on lines of their own", () => {
    const { html } = renderBody("**Deep** water & <b>raw</b>\n\n- one\n- two\n\n`a < b`", { markdown: true, images: false });
    expect(textOfBodyHtml(html)).toBe("Deep water & <b>raw</b>\none\ntwo\na < b");
  });
});
