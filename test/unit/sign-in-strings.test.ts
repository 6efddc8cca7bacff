// The hosted sign-in's words (src/modules/sign-in/engine/strings.ts): every language has every
// message, each with the placeholders of the English one and none it lacks, none left as English;
// the page's language from ?lang= or Accept-Language; a stored language trusted only when it is one of
// the ten; the callback's finish and refusal pages in each language.
import { describe, expect, it } from "vitest";
import { isSignInLanguage, pickLanguage, say, SIGN_IN_LANGUAGES, SIGN_IN_STRINGS } from "../../src/modules/sign-in/engine/strings.js";
import { finishPage, problemPage } from "../../src/modules/sign-in/engine/pages.js";

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

  it("trusts a stored language only when it is exactly one of the ten", () => {
    for (const lang of SIGN_IN_LANGUAGES) expect(isSignInLanguage(lang)).toBe(true);
    for (const v of ["DE", "de-AT", "xx", "", '"><script>', null, undefined, 1, ["de"]]) expect(isSignInLanguage(v), String(v)).toBe(false);
  });

  it("has the callback's pages in every language: the finish page and each refusal, with the page's lang", () => {
    const session = { token: "rs_x", reader: { id: "idp:a", name: "Ada <b>", avatarUrl: null } };
    for (const lang of SIGN_IN_LANGUAGES) {
      const finish = finishPage({ lang, origin: "https://news.example", session }).html;
      expect(finish, lang).toContain(`<html lang="${lang}">`);
      expect(finish, lang).toContain(`<title>${SIGN_IN_STRINGS[lang].signed_in_title}</title>`);
      expect(finish, lang).toContain("Ada &lt;b&gt;");
      for (const key of ["oidc_state_invalid", "oidc_cancelled", "oidc_cancelled_error", "oidc_refused", "oidc_unreachable"] as const) {
        const text = say(lang, key, { label: "Test IdP", error: "server_error" });
        if (key !== "oidc_state_invalid") expect(text, `${lang}.${key}`).toContain("Test IdP");
        const page = problemPage({ lang, title: say(lang, "oidc_refused_title"), detail: text, note: "invalid_grant" }).html;
        expect(page, `${lang}.${key}`).toContain(`<html lang="${lang}">`);
        expect(page).toContain('<p class="hint" lang="en">invalid_grant</p>');
      }
    }
  });

  it("fills placeholders once, leaving what a value holds as it is", () => {
    expect(say("en", "oidc_button", { label: "{site}" })).toBe("Sign in with {site}");
    expect(say("de", "intro", { site: "Die Zeit" })).toBe("Melden Sie sich an, um auf Die Zeit zu kommentieren.");
  });
});
