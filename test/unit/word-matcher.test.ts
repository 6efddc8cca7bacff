// The safety word lists' matcher (src/lib/word-matcher.ts) and the compiled rules (src/tenancy/safety-rules.ts):
// whole words after Unicode folding and the common evasions; 2,000-entry lists compile once.
import { describe, expect, it } from "vitest";
import { compileWordList, createWordNormalizer, entryProblem } from "../../src/lib/word-matcher.js";
import { createSafetyRules } from "../../src/tenancy/safety-rules.js";
import { renderBody } from "../../src/lib/markdown.js";
import { DEFAULT_SETTINGS } from "../../src/tenancy/settings/tree.js";
import { checkSettings } from "../../src/tenancy/settings/resolve.js";
import { type SafetySettings } from "../../src/tenancy/settings/safety.js";

const normalizer = createWordNormalizer();
const list = (entries: string[]) => compileWordList(normalizer, entries);
const found = (entries: string[], text: string) => list(entries).find(normalizer.tokens(text));
/** n distinct words that no folding merges: each digit as a consonant-vowel syllable */
const SYLLABLES = ["ka", "ke", "ki", "ko", "ku", "ma", "me", "mi", "mo", "mu"];
const distinctWords = (n: number, prefix = "") =>
  Array.from({ length: n }, (_, i) => prefix + [...String(i)].map((d) => SYLLABLES[Number(d)]).join("") + "r");

describe("word lists: whole words after folding and evasions", () => {
  it.each([
    ["spam", "plain"],
    ["Buy SPAM now", "case"],
    ["S P A M", "spaced letters"],
    ["s.p.a.m", "dotted letters"],
    ["s-p-a-m!", "dashed letters"],
    ["spaaaam", "repeated letters"],
    ["sppaammm", "doubled letters"],
    ["5p4m", "leetspeak"],
    ["$p@m", "leetspeak symbols"],
    ["5 p 4 m", "spaced leetspeak"],
    ["späm", "diacritics"],
    ["ｓｐａｍ", "fullwidth letters"],
    ["𝐬𝐩𝐚𝐦", "mathematical bold letters"],
    ["ѕрам", "Cyrillic look-alikes"],
    ["sp\u200bam", "a zero-width space inside"],
    ["spam.", "punctuation after"],
    ["(spam)", "brackets around"],
    ["it is a s p a m", "an article before spaced letters"],
    ["what a S.P.A.M", "an article before dotted letters"],
  ])("%j (%s) is the listed word", (text) => {
    expect(found(["spam"], text)).toEqual(["spam"]);
  });

  it.each([["spammer"], ["antispam"], ["s p a m m e r"], ["spa m"], ["Sam's pam"], ["spamspam"]])("%j is not the word spam", (text) => {
    expect(found(["spam"], text)).toEqual([]);
  });

  it("matches a longer word only when it is listed itself", () => {
    expect(found(["spam", "spammer"], "what a spammer")).toEqual(["spammer"]);
    expect(found(["antispam"], "antispam filters")).toEqual(["antispam"]);
  });

  it("normalises the list the same way: its entries may carry case, diacritics and doubled letters", () => {
    expect(found(["Späm"], "SPAM")).toEqual(["Späm"]);
    expect(found(["assassin"], "a55a55in")).toEqual(["assassin"]);
    expect(found(["Straße"], "STRASSE")).toEqual(["Straße"]);
  });

  it("matches phrases word by word, whatever separates them", () => {
    expect(found(["buy now"], "please BUY   NOW, friend")).toEqual(["buy now"]);
    expect(found(["buy now"], "buy-now")).toEqual(["buy now"]);
    expect(found(["buy now"], "buy nowhere")).toEqual([]);
  });

  it("reports each listed entry once, as the list spells it", () => {
    expect(found(["Spam", "scam", "ham"], "spam SPAM scam s.c.a.m")).toEqual(["Spam", "scam"]);
  });

  it("leaves ordinary prose alone (abbreviations, numbers, punctuation)", () => {
    expect(found(["eg", "usa"], "e.g. this")).toEqual([]);
    expect(found(["spam"], "It costs 5 dollars, or 4! Spam-free.")).toEqual(["spam"]);
    expect(found(["i"], "Wow!")).toEqual([]);
  });

  it("refuses entries without a letter or digit, and phrases of more than five words", () => {
    expect(entryProblem(() => normalizer, "---")).toBe("must contain a letter or digit");
    expect(entryProblem(() => normalizer, "a b c d e f g".replace(/ /g, "x "))).toMatch(/at most 5 words/);
    expect(entryProblem(() => normalizer, "spam")).toBeNull();
  });

  it("compiles a list in time linear in its entries, and checks a comment as fast with 2,000 entries as with 10", () => {
    // bounds relative to the same work on a small list in the same run (a busy machine slows both):
    // linear compiling is 10× for 10× the entries, checking is a lookup a token whatever the list's size
    const fastest = (f: () => unknown) =>
      Math.min(
        ...[0, 1, 2].map(() => {
          const started = performance.now();
          f();
          return performance.now() - started;
        }),
      );
    const entries = distinctWords(2000);
    const small = distinctWords(200, "z");
    const compileSmall = fastest(() => list(small));
    const compileBig = fastest(() => list(entries));
    expect(compileBig).toBeLessThan(Math.max(50, 40 * compileSmall));
    const big = list(entries);
    expect(big.size).toBe(2000);
    const tiny = list(distinctWords(10, "q"));
    const text = "Great article! I really enjoyed reading this, thanks for writing it. Looking forward to the next one.";
    const checkTiny = fastest(() => {
      for (let i = 0; i < 1000; i++) tiny.find(normalizer.tokens(text));
    });
    const checkBig = fastest(() => {
      for (let i = 0; i < 1000; i++) big.find(normalizer.tokens(text));
    });
    expect(checkBig).toBeLessThan(Math.max(20, 5 * checkTiny));
    expect(big.find(normalizer.tokens(`and then K.A.R, said ${entries[1999]!.toUpperCase()}`))).toEqual(["kar", entries[1999]]);
  });
});

/** A body as the rules read it: rendered as the default formatting settings say. */
const rendered = (body: string) => renderBody(body, DEFAULT_SETTINGS.formatting);

describe("links", () => {
  it("are the rendered ones: schemes, www. and emails (GitHub's autolinks) and Markdown links; not bare domains or ordinary dots", () => {
    expect(rendered("see https://a.example/x and www.b.org and c.com").links).toBe(2);
    expect(rendered("mail me at a@b.example. End. e.g. this").links).toBe(1);
    expect(rendered("[one](https://a.example) and [two](javascript:alert(1)) and `https://in.code/x`").links).toBe(1);
  });
});

describe("compiled rules", () => {
  const safety = (over: Partial<SafetySettings>): SafetySettings => ({ ...DEFAULT_SETTINGS.safety, ...over });

  it("banned beats suspect beats links; null when nothing applies", () => {
    const rules = createSafetyRules().compiled("t1", safety({ bannedWords: ["scam"], suspectWords: ["cheap"], maxLinks: 1 }));
    expect(rules.check(rendered("cheap s c a m"))).toEqual({
      status: "rejected",
      reason: { source: "rule", rule: "bannedWords", words: ["scam"] },
    });
    expect(rules.check(rendered("Cheap! a.com b.org"))).toEqual({
      status: "pending",
      reason: { source: "rule", rule: "suspectWords", words: ["cheap"] },
    });
    expect(rules.check(rendered("www.a.com https://b.org/x"))).toEqual({
      status: "pending",
      reason: { source: "rule", rule: "maxLinks", links: 2, maxLinks: 1 },
    });
    expect(rules.check(rendered("a.com, and a fine comment"))).toBeNull();
  });

  it("read the rendered text and the links' targets: markup cannot hide a word, a link's target cannot either", () => {
    const rules = createSafetyRules().compiled("t1", safety({ bannedWords: ["scam"], maxLinks: 1 }));
    const banned = { status: "rejected", reason: { source: "rule", rule: "bannedWords", words: ["scam"] } };
    expect(rules.check(rendered("what a s**ca**m"))).toEqual(banned);
    expect(rules.check(rendered("what a s&#99;am"))).toEqual(banned);
    expect(rules.check(rendered("[a fine site](https://scam.example/)"))).toEqual(banned);
    // a link written so that it renders as text is not a link: [x](javascript:…) stays source text
    expect(rules.check(rendered("[x](javascript:alert(1)) and [y](https://ok.example)"))).toBeNull();
    expect(rules.check(rendered("**[x](https://a.example)** [y](https://b.example)"))).toMatchObject({
      reason: { rule: "maxLinks", links: 2 },
    });
  });

  it("compiles once per change of the rules: the same settings object, or the same lists in a new one, reuse it", () => {
    const rules = createSafetyRules();
    const s = safety({ bannedWords: distinctWords(2000), suspectWords: ["maybe"] });
    const first = rules.compiled("t1", s);
    expect(rules.compiled("t1", s)).toBe(first);
    expect(rules.compiled("t1", structuredClone(s))).toBe(first); // a re-read tenant row
    expect(rules.compilations).toBe(1);
    rules.compiled("t1", { ...s, suspectWords: ["maybe", "perhaps"] });
    expect(rules.compilations).toBe(2);
    expect(createSafetyRules().compilations).toBe(0); // each app its own
  });
});

describe("settings validation", () => {
  it("lists every problem with its path", () => {
    const r = checkSettings({
      safety: {
        bannedWords: ["ok", "", "!!!"],
        suspectWords: Array.from({ length: 2001 }, () => "x"),
        maxLinks: -1,
        newReaderHold: 1.5,
        reportThreshold: 0,
        reportAction: "delete",
        hook: { url: "ftp://x", timeoutMs: 9000, onTimeout: "maybe" },
      },
    });
    expect(r.success).toBe(false);
    const paths = r.error!.issues.map((i) => i.path.join(".")).sort();
    expect(paths).toEqual([
      "safety.bannedWords.1",
      "safety.bannedWords.2",
      "safety.hook.onTimeout",
      "safety.hook.timeoutMs",
      "safety.hook.url",
      "safety.maxLinks",
      "safety.newReaderHold",
      "safety.reportAction",
      "safety.reportThreshold",
      "safety.suspectWords",
    ]);
  });

  it("fills the hook's defaults", () => {
    const r = checkSettings({ safety: { hook: { url: "https://hook.example/check" } } });
    expect(r.success && r.data.safety.hook).toEqual({ url: "https://hook.example/check", timeoutMs: 1500, onTimeout: "hold" });
  });
});
