// The hosted sign-in's words (src/modules/sign-in/engine/strings.ts): every language has every
// message, each with the placeholders of the English one and none it lacks, none left as English;
// the page's language from ?lang= or Accept-Language.
import { describe, expect, it } from "vitest";
import { pickLanguage, say, SIGN_IN_LANGUAGES, SIGN_IN_STRINGS } from "../../src/modules/sign-in/engine/strings.js";

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("sign-in strings", () => {
  it("has every message in every language, with the same placeholders", () => {
    const en = SIGN_IN_STRINGS.en;
    for (const lang of SIGN_IN_LANGUAGES) {
      const strings = SIGN_IN_STRINGS[lang];
      expect(Object.keys(strings).sort(), lang).toEqual(Object.keys(en).sort());
      for (const [key, text] of Object.entries(strings)) {
        expect(text.trim(), `${lang}.${key}`).not.toBe("");
        expect(placeholders(text), `${lang}.${key}`).toEqual(placeholders(en[key as keyof typeof en]));
        // a translation, not the English left in place (short words such as "Email" or "Name" may match)
        if (lang !== "en" && en[key as keyof typeof en].length > 12) expect(text, `${lang}.${key}`).not.toBe(en[key as keyof typeof en]);
      }
    }
  });

  it("picks ?lang= first, then the best Accept-Language entry of its ten, else English", () => {
    expect(pickLanguage("de", "fr")).toBe("de");
    expect(pickLanguage("pt-BR", undefined)).toBe("pt");
    expect(pickLanguage("xx", "fr-CA,fr;q=0.9")).toBe("fr");
    expect(pickLanguage(undefined, "sv, nl;q=0.7, ja;q=0.8")).toBe("ja");
    expect(pickLanguage(undefined, "zh-Hans-CN")).toBe("zh");
    expect(pickLanguage(undefined, "sv, fi")).toBe("en");
    expect(pickLanguage(undefined, "de;q=0")).toBe("en");
    expect(pickLanguage(["de"], undefined)).toBe("en");
    expect(pickLanguage(undefined, undefined)).toBe("en");
  });

  it("fills placeholders once, leaving what a value holds as it is", () => {
    expect(say("en", "oidc_button", { label: "{site}" })).toBe("Sign in with {site}");
    expect(say("de", "intro", { site: "Die Zeit" })).toBe("Melden Sie sich an, um auf Die Zeit zu kommentieren.");
  });
});
