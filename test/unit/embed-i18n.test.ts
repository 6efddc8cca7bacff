// The words of <engagement-thread> (embed/src/thread/i18n.ts and embed/src/thread/i18n/<lang>.json):
// every language has exactly English's messages, none empty, each keeping every placeholder of the
// English one; the files the service serves are these; a language tag resolves to its base language,
// an unknown one to English.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EMBED_LANGUAGE_FILES } from "../../src/http/embed-static.js";
import { EN, LANGUAGES, languageOf } from "../../embed/src/thread/i18n.js";

const DIR = new URL("../../embed/src/thread/i18n/", import.meta.url);
const others = LANGUAGES.filter((lang) => lang !== "en");
const read = (lang: string): Record<string, unknown> => JSON.parse(readFileSync(new URL(`${lang}.json`, DIR), "utf8"));
const placeholders = (text: string): string[] => [...new Set(text.match(/\{\w+\}/g) ?? [])].sort();

describe("the thread's languages", () => {
  it("are the ten of the contract, each but English a file the service serves", () => {
    expect([...LANGUAGES].sort()).toEqual(["de", "en", "es", "fr", "it", "ja", "nl", "pl", "pt", "zh"]);
    expect(readdirSync(DIR).sort()).toEqual(others.map((lang) => `${lang}.json`).sort());
    expect(EMBED_LANGUAGE_FILES.sort()).toEqual(others.map((lang) => `i18n/${lang}.json`).sort());
  });

  it("English has no empty message", () => {
    for (const [key, text] of Object.entries(EN)) expect(text.trim(), key).not.toBe("");
  });

  it.each(others)("%s has exactly English's messages, none empty, with English's placeholders", (lang) => {
    const words = read(lang);
    expect(Object.keys(words).sort()).toEqual(Object.keys(EN).sort());
    for (const [key, english] of Object.entries(EN)) {
      const text = words[key];
      expect(typeof text, `${lang}.${key}`).toBe("string");
      expect((text as string).trim(), `${lang}.${key}`).not.toBe("");
      expect(placeholders(text as string), `${lang}.${key}`).toEqual(placeholders(english));
    }
  });

  it("a language tag resolves to its base language, an unknown one to English", () => {
    expect(languageOf("de-AT")).toBe("de");
    expect(languageOf("ja")).toBe("ja");
    expect(languageOf("zh-Hans-CN")).toBe("zh");
    expect(languageOf("PT-br")).toBe("pt");
    expect(languageOf("sv")).toBe("en");
    expect(languageOf("")).toBe("en");
    expect(languageOf(null)).toBe("en");
  });
});
