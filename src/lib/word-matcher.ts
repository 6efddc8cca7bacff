// Whole-word matching of a tenant's word lists (the safety settings bannedWords / suspectWords),
// aware of Unicode and of the common evasions. Text and list entries go through the same
// normalisation, so both sides of a comparison are in one form:
//   1. Unicode: NFKC (fullwidth and styled letters, ligatures), case folding, diacritics and
//      invisible format characters removed (`Späm` → `spam`, `ｓｐａｍ` → `spam`, `sp\u200bam` → `spam`);
//   2. spaced-out words joined: three or more single characters separated only by spaces or
//      punctuation become one word (`S P A M`, `s.p.a.m`, `5-p-4-m`), also looked up without its first
//      or last letter (`a s c a m`: the article before it);
//   3. obscenity's transformers, applied in its own order: confusable characters (Cyrillic `а` → `a`),
//      leetspeak (`5p4m` → `spam`), ASCII lower case, and repeated letters collapsed (`spaaaam` → `spam`).
// The normalised text is cut into words (letters and digits) and each word, or run of words for a
// several-word entry, is looked up in the list's table: whole words only (`spammer`, `antispam` do
// not match `spam`), and the cost of a check does not grow with the list (2,000 entries cost what 2 do).
// obscenity's own RegExpMatcher runs one regular expression per entry over the text (4,000 entries:
// 3.5–8 ms a comment, measured), and its skipNonAlphabetic transformer drops the spaces that whole
// words need; so obscenity normalises here and a table decides.
import {
  collapseDuplicatesTransformer,
  remapCharactersTransformer,
  resolveConfusablesTransformer,
  toAsciiLowerCaseTransformer,
  type StatefulTransformer,
  type TransformerContainer,
  type TransformerFn,
} from "obscenity";

/**
 * Leetspeak, as obscenity's own dictionary without the characters that are ordinary punctuation in
 * prose (`!` `|` `/` `(`): with them, `spam!` would read `spami` and no longer be the word `spam`.
 */
const LEET: Record<string, string> = { a: "@4", e: "3", g: "6", i: "1", o: "0", s: "$5", t: "7", z: "2" };
const LEET_CHARS = new Set(Object.values(LEET).join(""));

/** How many words one list entry may have (a phrase such as `buy now`). */
export const MAX_ENTRY_WORDS = 5;

/** Fewer single characters in a row than this are left alone (`e.g.` stays two words). */
const SPACED_RUN = 3;

const MARKS_AND_FORMAT = /[\p{M}\p{Cf}]/gu;
const SEPARATOR = /^[\s\p{P}\p{S}]$/u;
const NOT_WORD = /[^\p{L}\p{N}]+/u;

const isSeparatorSlow = (ch: string) => !LEET_CHARS.has(ch) && SEPARATOR.test(ch);
/** The same answer for ASCII, looked up (a comment is mostly ASCII) */
const ASCII_SEPARATOR = Array.from({ length: 128 }, (_, c) => isSeparatorSlow(String.fromCharCode(c)));
const isSeparator = (ch: string) => {
  const c = ch.charCodeAt(0);
  return c < 128 ? ASCII_SEPARATOR[c]! : isSeparatorSlow(ch);
};

/** Text that Unicode folding leaves as it is, but for case: printable ASCII, tabs and newlines. */
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;

/** Step 1: NFKC, case folding (toUpperCase first, so `ß` folds to `ss`), diacritics and format characters removed. */
function foldUnicode(s: string): string {
  if (PLAIN_ASCII.test(s)) return s.toLowerCase();
  return s.normalize("NFKC").toUpperCase().toLowerCase().normalize("NFD").replace(MARKS_AND_FORMAT, "").normalize("NFC");
}

/**
 * Step 2: runs of SPACED_RUN or more single characters with only separators between them become one
 * word. Each run also gives the word without its first and without its last character as variants:
 * `a s c a m` (an article before the spaced word) is `ascam`, and `scam` as a variant.
 */
function joinSpacedLetters(s: string): { text: string; variants: string[] } {
  // tokens alternate: [separators, word, separators, word, …]
  const parts: { sep: string; word: string }[] = [];
  let sep = "";
  let word = "";
  for (const ch of s) {
    if (isSeparator(ch)) {
      if (word) {
        parts.push({ sep, word });
        sep = word = "";
      }
      sep += ch;
    } else word += ch;
  }
  parts.push({ sep, word });
  let text = "";
  const variants: string[] = [];
  for (let i = 0; i < parts.length;) {
    let j = i;
    while (j < parts.length && [...parts[j]!.word].length === 1) j++;
    if (j - i >= SPACED_RUN) {
      const letters = parts.slice(i, j).map((p) => p.word);
      text += parts[i]!.sep + letters.join("");
      variants.push(letters.slice(1).join(""), letters.slice(0, -1).join(""));
      i = j;
    } else {
      text += parts[i]!.sep + parts[i]!.word;
      i++;
    }
  }
  return { text, variants };
}

/** Step 3: obscenity's transformers, through their public interface, in the order obscenity applies them. */
function createTransformerChain(): { apply(s: string): string } {
  const containers: TransformerContainer[] = [
    resolveConfusablesTransformer(),
    remapCharactersTransformer(LEET),
    toAsciiLowerCaseTransformer(),
    collapseDuplicatesTransformer({ defaultThreshold: 1 }),
  ];
  const steps: (StatefulTransformer | { transform: TransformerFn; reset?: undefined })[] = containers.map((c) =>
    "factory" in c ? c.factory() : { transform: c.transform },
  );
  return {
    apply(s) {
      let out = "";
      for (const ch of s) {
        let c: number | undefined = ch.codePointAt(0)!;
        for (const step of steps) {
          c = step.transform(c);
          if (c === undefined) break;
        }
        if (c !== undefined) out += String.fromCodePoint(c);
      }
      for (const step of steps) step.reset?.();
      return out;
    },
  };
}

/** A text's words (in order), and single words its spaced-out letters may also stand for. */
export interface Tokens {
  words: string[];
  variants: string[];
}

/** Normalises text into words. Holds transformer state: one per owner, used synchronously. */
export interface WordNormalizer {
  tokens(text: string): Tokens;
  /** the words alone (a list entry is its words) */
  words(text: string): string[];
}

export function createWordNormalizer(): WordNormalizer {
  const chain = createTransformerChain();
  const wordsOf = (s: string) => chain.apply(s).split(NOT_WORD).filter(Boolean);
  const tokens = (text: string): Tokens => {
    const joined = joinSpacedLetters(foldUnicode(text));
    return { words: wordsOf(joined.text), variants: joined.variants.flatMap(wordsOf) };
  };
  return { tokens, words: (text) => tokens(text).words };
}

/** One word of letters and digits: normalising keeps it one word (the common entry, checked without it). */
const PLAIN_WORD = /^[\p{L}\p{N}]+$/u;

/** What is wrong with a list entry, or null: it must keep a letter or digit, and at most MAX_ENTRY_WORDS words. */
export function entryProblem(normalizer: () => WordNormalizer, entry: string): string | null {
  if (PLAIN_WORD.test(entry)) return null;
  const n = normalizer().words(entry).length;
  if (n === 0) return "must contain a letter or digit";
  if (n > MAX_ENTRY_WORDS) return `must have at most ${MAX_ENTRY_WORDS} words`;
  return null;
}

/** A compiled word list: its entries by normalised form. */
export interface WordList {
  readonly size: number;
  /** the entries (as the list spells them) found in these tokens, each once, in order of first match */
  find(tokens: Tokens, limit?: number): string[];
}

export function compileWordList(normalizer: WordNormalizer, entries: readonly string[]): WordList {
  const table = new Map<string, string>();
  let longest = 0;
  for (const entry of entries) {
    const words = normalizer.words(entry);
    if (words.length === 0 || words.length > MAX_ENTRY_WORDS) continue;
    const key = words.join(" ");
    if (!table.has(key)) table.set(key, entry);
    longest = Math.max(longest, words.length);
  }
  return {
    size: table.size,
    find({ words, variants }, limit = 20) {
      const found = new Set<string>();
      if (table.size === 0) return [];
      for (let i = 0; i < words.length && found.size < limit; i++) {
        let key = "";
        for (let n = 0; n < longest && i + n < words.length; n++) {
          key = n === 0 ? words[i]! : `${key} ${words[i + n]!}`;
          const hit = table.get(key);
          if (hit !== undefined) found.add(hit);
        }
      }
      for (const v of variants) {
        const hit = table.get(v);
        if (hit !== undefined && found.size < limit) found.add(hit);
      }
      return [...found];
    },
  };
}
