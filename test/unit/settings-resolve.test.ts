// Stored settings that a newer rule refuses (src/tenancy/settings/resolve.ts resolveSettings): the value
// refused falls back to its default alone, and the tenant keeps every other setting it chose.
import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/tenancy/settings/tree.js";
import { resolveSettings } from "../../src/tenancy/settings/resolve.js";

describe("resolveSettings on stored values a rule now refuses", () => {
  it("drops only the refused members: an SMTP-free sender with a line break, a hook url with credentials, a provider with a query", () => {
    const stored = {
      moderation: "pre",
      maxBodyLength: 1234,
      safety: { bannedWords: ["spam"], hook: { url: "https://user:pw@hooks.example.com/in", timeoutMs: 1000, onTimeout: "hold" } },
      email: { from: "Name\r\nBcc: eve@evil.example <news@example.com>", digestHour: 7 },
      identity: {
        providers: [
          { issuer: "https://idp.example.com/?x=1", audience: ["a"] },
          { issuer: "https://ok.example.com", audience: ["b"] },
        ],
      },
    };
    const s = resolveSettings(stored);
    expect(s.moderation).toBe("pre");
    expect(s.maxBodyLength).toBe(1234);
    expect(s.safety.bannedWords).toEqual(["spam"]);
    expect(s.safety.hook).toBeNull();
    expect(s.email.from).toBeNull();
    expect(s.email.digestHour).toBe(7);
    expect(s.identity.providers.map((p) => p.issuer)).toEqual(["https://ok.example.com"]);
    // the stored object itself is left as it was
    expect(stored.identity.providers).toHaveLength(2);
  });

  it("falls back to the defaults when nothing stored is an object", () => {
    expect(resolveSettings("nonsense")).toBe(DEFAULT_SETTINGS);
    expect(resolveSettings(null)).toEqual(DEFAULT_SETTINGS);
  });
});
