// The email's pure parts: templates (both parts from one set of data, escaped, linked), the
// link to a comment, the List-Unsubscribe headers, a provider's unverified address refused, and the
// SQL that queues reply emails using the same defaults as the settings model.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { commentLink, excerpt, renderReplyEmail } from "../../src/modules/email/templates.js";
import { bareAddress, listHeaders } from "../../src/modules/email/engine/sender.js";
import { readerAddress } from "../../src/context/reader-addresses.js";
import type { ProviderIdentity } from "../../src/auth/identity-providers.js";
import { DEFAULT_SETTINGS } from "../../src/tenancy/settings/tree.js";
import { renderBody } from "../../src/lib/markdown.js";

const item = {
  commentId: "c 1",
  authorName: "Bob & co",
  body: "A <script>alert(1)</script>\n\nreply",
  bodyHtml: null as string | null,
  parentBody: "Ann's first",
  discussionTitle: "On <rivers>",
  discussionUrl: "https://daily.example/rivers#top",
};

describe("reply email template", () => {
  it("renders one reply in both parts, escaped in HTML, with the link and the unsubscribe URL", () => {
    const m = renderReplyEmail({
      tenantName: "The Daily",
      readerName: "Ann",
      kind: "replies",
      items: [item],
      unsubscribeUrl: "https://s.example/u/t",
    });
    expect(m.subject).toBe("Bob & co replied to your comment on “On <rivers>”");
    expect(m.text).toContain("> A <script>alert(1)</script> reply");
    expect(m.text).toContain("Read it and reply: https://daily.example/rivers#comment-c%201");
    expect(m.text).toContain("https://s.example/u/t");
    expect(m.html).not.toContain("<script>");
    expect(m.html).toContain("A &#60;script&#62;alert(1)&#60;/script&#62; reply");
    expect(m.html).toContain('href="https://daily.example/rivers#comment-c%201"');
    expect(m.html).not.toMatch(/<img|src=/i);
  });

  it("shows a reply's stored rendering in the HTML part and its Markdown source in the text part", () => {
    const body = "A **bold** <img src=x onerror=alert(1)> [link](https://ok.example/)";
    const bodyHtml = renderBody(body, DEFAULT_SETTINGS.formatting).html;
    const m = renderReplyEmail({
      tenantName: "T",
      readerName: "A",
      kind: "replies",
      items: [{ ...item, body, bodyHtml }],
      unsubscribeUrl: "u",
    });
    expect(m.html).toContain("<strong>bold</strong>");
    expect(m.html).toContain('<a href="https://ok.example/" rel="nofollow ugc noopener noreferrer">link</a>');
    expect(m.html).not.toMatch(/<img/i);
    expect(m.html).toContain("&lt;img src=x onerror=alert(1)&gt;"); // raw HTML is shown as text
    expect(m.text).toContain("> A **bold** <img src=x onerror=alert(1)> [link](https://ok.example/)");
  });

  it("names a digest and counts many replies", () => {
    const two = [item, { ...item, commentId: "c2", discussionUrl: null }];
    expect(renderReplyEmail({ tenantName: "T", readerName: "A", kind: "replies", items: two, unsubscribeUrl: "u" }).subject).toBe(
      "2 new replies to your comments on T",
    );
    const digest = renderReplyEmail({ tenantName: "T", readerName: "A", kind: "digest", items: two, unsubscribeUrl: "u" });
    expect(digest.subject).toBe("Your daily digest from T: 2 replies");
    expect(digest.text.match(/Read it and reply/g)).toHaveLength(1); // no link without the discussion's url
  });

  it("links only http(s) pages and shortens long bodies", () => {
    expect(commentLink("javascript:alert(1)", "c")).toBeNull();
    expect(commentLink(null, "c")).toBeNull();
    expect(excerpt("x".repeat(700)).length).toBe(600);
  });
});

describe("headers and addresses", () => {
  it("List-Unsubscribe has the https URL and a mailto; List-Unsubscribe-Post is RFC 8058's", () => {
    expect(listHeaders("https://s.example/u/t", "The Daily <news@daily.example>")).toEqual({
      "List-Unsubscribe": "<https://s.example/u/t>, <mailto:news@daily.example?subject=unsubscribe>",
      "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    });
    expect(listHeaders(null, "a@b.example")).toEqual({});
    expect(bareAddress("a@b.example")).toBe("a@b.example");
  });

  it("takes an assertion's address, a provider's only when verified", () => {
    expect(readerAddress({ id: "a", name: "A", avatarUrl: null, email: "a@b.example" })).toBe("a@b.example");
    expect(readerAddress({ id: "a", name: "A", avatarUrl: null, email: "not an address" })).toBeNull();
    const provider = (emailVerified: boolean): ProviderIdentity => ({
      ...{ id: "p", name: "P", avatarUrl: null, email: "p@b.example", issuer: "i", subject: "s", exp: 0 },
      emailVerified,
    });
    expect(readerAddress(provider(false))).toBeNull();
    expect(readerAddress(provider(true))).toBe("p@b.example");
  });

  it("queues with the settings model's defaults (eng_log_event in prisma/sql/70-events.sql)", () => {
    const sql = readFileSync(new URL("../../prisma/sql/70-events.sql", import.meta.url), "utf8");
    const fn = sql.slice(
      sql.indexOf("FUNCTION public.eng_log_event"),
      sql.indexOf("$function$;", sql.indexOf("FUNCTION public.eng_log_event")),
    );
    expect(fn).toContain(`t.settings #>> '{email,defaultReplies}', '${DEFAULT_SETTINGS.email.defaultReplies}')`);
    expect(fn).toContain(`(t.settings #>> '{email,digestHour}')::int, ${DEFAULT_SETTINGS.email.digestHour})`);
  });
});
