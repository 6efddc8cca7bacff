// The few words an indexable thread shows, in the thread element's ten languages and in its own words:
// English as embed/src/thread/i18n.ts has it (test/unit/indexable-words.test.ts holds them equal),
// the other nine read from the element's own files (embed/src/thread/i18n/<lang>.json), so the
// server-rendered thread and the live one say the same. A language tag is read as the element reads
// its `lang` ("de-AT" → de; one it lacks → English).
import { readFileSync } from "node:fs";

export const THREAD_LANGUAGES = ["en", "de", "fr", "es", "pt", "it", "nl", "pl", "ja", "zh"] as const;
export type ThreadLanguage = (typeof THREAD_LANGUAGES)[number];

const EN = {
  title: "Comments",
  count_one: "{n} comment",
  count_other: "{n} comments",
  empty: "No comments yet. Start the discussion.",
  composer_placeholder: "Join the discussion…",
  locked: "Comments are closed on this discussion.",
  archived: "This discussion is archived: it can be read but no longer changed.",
  edited: "edited",
  on_bluesky: "on Bluesky",
  pinned: "Pinned",
  deleted: "This comment was deleted.",
  load_more: "Load more comments",
  more_replies_one: "Show {n} more reply",
  more_replies_other: "Show {n} more replies",
  link: "Link",
  comment_on_page: "Comment on the page itself, with JavaScript on",
};
export type FragmentWords = typeof EN;
export const ENGLISH_FRAGMENT_WORDS: Readonly<FragmentWords> = EN;

const I18N = new URL("../../../embed/src/thread/i18n/", import.meta.url);

function wordsOf(language: ThreadLanguage): FragmentWords {
  if (language === "en") return EN;
  const all = JSON.parse(readFileSync(new URL(`${language}.json`, I18N), "utf8")) as Partial<Record<string, string>>;
  const words = { ...EN };
  for (const key of Object.keys(EN) as (keyof FragmentWords)[]) words[key] = all[key] ?? EN[key];
  return words;
}

/** Every language's words, read once when the module loads (a constant table, not a cache). */
const WORDS = new Map(THREAD_LANGUAGES.map((l) => [l, wordsOf(l)] as const));

/** A language tag's built-in language, English when there is none (as the element's languageOf). */
export function threadLanguageOf(tag: string | null | undefined): ThreadLanguage {
  const base = (tag ?? "").toLowerCase().split("-")[0] ?? "";
  return (THREAD_LANGUAGES as readonly string[]).includes(base) ? (base as ThreadLanguage) : "en";
}

export function fragmentWords(language: ThreadLanguage): FragmentWords {
  return WORDS.get(language) ?? EN;
}

/** Every language's date format (a medium date, in UTC), made once when the module loads. */
const DATES = new Map(THREAD_LANGUAGES.map((l) => [l, new Intl.DateTimeFormat(l, { dateStyle: "medium", timeZone: "UTC" })] as const));

export function fragmentDates(language: ThreadLanguage): Intl.DateTimeFormat {
  return DATES.get(language)!;
}

/** A string with its `{n}` filled in. */
export const fillCount = (template: string, n: number): string => template.replace("{n}", String(n));
