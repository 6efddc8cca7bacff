// The header boundary of email: whatever stored data holds (a discussion's title, the tenant's name,
// sender or reply address, a recipient), no header value carries a line break or another control
// character — the sender's fields (src/modules/email/engine/sender.ts) and the templates' subjects.
import { describe, expect, it } from "vitest";
import { headerFields, mailbox } from "../../src/modules/email/engine/sender.js";
import { renderModerationDigest, renderReplyEmail } from "../../src/modules/email/templates.js";
import { isSingleLine, oneLine } from "../../src/lib/single-line.js";

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const BREAKS = /[\r\n\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const INJECTION = "\r\nBcc: eve@evil.example\r\n\r\n<p>body</p>";

describe("one line", () => {
  it("turns each run of line breaks and other control characters into one space, and tells them apart", () => {
    expect(oneLine("a\r\nb\nc\rd\te\u0000f\u007fg\u0085h\u2028i\u2029j")).toBe("a b c d e f g h i j");
    expect(oneLine("a\r\n\r\n\tb")).toBe("a b");
    expect(oneLine("The Daily – “ünï” <news@daily.example>")).toBe("The Daily – “ünï” <news@daily.example>");
    expect(isSingleLine("The Daily – “ünï”")).toBe(true);
    for (const c of ["\r", "\n", "\t", "\u0000", "\u001b", "\u007f", "\u0085", "\u2028", "\u2029"])
      expect(isSingleLine(`a${c}b`)).toBe(false);
  });
});

describe("the sender's header fields", () => {
  it("puts every stored value on one line: subject, sender, reply address, recipient and the list headers", () => {
    const h = headerFields(
      {
        id: "0b6c2f4e-2f55-4a43-9d3e-1c1f00000001",
        toAddress: `ann@readers.example${INJECTION}`,
        subject: `bob replied to your comment on “On rivers${INJECTION}”`,
        unsubscribeUrl: `https://comments.example/api/v1/unsubscribe/tok${INJECTION}`,
        from: "The Daily\r\nBcc: eve@evil.example <news@daily.example>",
        replyTo: `editors@daily.example${INJECTION}`,
      },
      "Comments <comments@service.example>",
    );
    const values = [h.from.name, h.from.address, h.to.address, h.subject, h.messageId, ...Object.values(h.headers)];
    for (const v of values) expect(v, JSON.stringify(v)).not.toMatch(BREAKS);
    expect(h.subject).toBe("bob replied to your comment on “On rivers Bcc: eve@evil.example <p>body</p>”");
    // a name (quoted by the transport), never more addresses
    expect(h.from).toEqual({ name: "The Daily Bcc: eve@evil.example", address: "news@daily.example" });
    expect(h.to).toEqual({ name: "", address: "ann@readers.example Bcc: eve@evil.example <p>body</p>" });
    expect(h.replyTo).toBeUndefined(); // no single address in it: left out
    expect(h.messageId).toBe("<0b6c2f4e-2f55-4a43-9d3e-1c1f00000001@daily.example>");
    expect(h.headers["List-Unsubscribe-Post"]).toBe("List-Unsubscribe=One-Click");
  });

  it("uses the service's sender when the tenant has none, and no Reply-To without one", () => {
    const h = headerFields(
      { id: "x", toAddress: "ann@readers.example", subject: "Hi", unsubscribeUrl: null, from: null, replyTo: null },
      "Comments\r\n<comments@service.example>",
    );
    expect(h).toEqual({
      from: { name: "Comments", address: "comments@service.example" },
      to: { name: "", address: "ann@readers.example" },
      replyTo: undefined,
      subject: "Hi",
      messageId: "<x@service.example>",
      headers: {},
    });
  });
});

describe("a mailbox", () => {
  it("is a name and one plausible address, or nothing", () => {
    expect(mailbox("The Daily <news@daily.example>")).toEqual({ name: "The Daily", address: "news@daily.example" });
    expect(mailbox('"The Daily" <news@daily.example>')).toEqual({ name: "The Daily", address: "news@daily.example" });
    expect(mailbox(" news@daily.example\r\n")).toEqual({ name: "", address: "news@daily.example" });
    expect(mailbox("editors@daily.example\r\nBcc: eve@evil.example")).toBeNull();
    expect(mailbox("a@b.example, eve@evil.example")).toBeNull();
    expect(mailbox("Eve <a@b.example>, <eve@evil.example>")).toBeNull();
    expect(mailbox("nobody")).toBeNull();
  });

  it("the tenant's sender without one gives way to the service's; a reply address without one is left out", () => {
    const h = headerFields(
      { id: "x", toAddress: "a@b.example", subject: "s", unsubscribeUrl: "https://u.example/t", from: "x\r\n<y>", replyTo: "a, b@c" },
      "Comments <comments@service.example>",
    );
    expect([h.from, h.replyTo]).toEqual([{ name: "Comments", address: "comments@service.example" }, undefined]);
    expect(h.headers["List-Unsubscribe"]).toBe("<https://u.example/t>, <mailto:comments@service.example?subject=unsubscribe>");
  });
});

describe("the templates' subjects", () => {
  it("are one line whatever the title, the names and the tenant's name hold", () => {
    const item = {
      commentId: "c1",
      authorName: `bob${INJECTION}`,
      body: "line one\nline two",
      bodyHtml: null,
      parentBody: null,
      discussionTitle: `On rivers${INJECTION}`,
      discussionUrl: null,
    };
    const reply = renderReplyEmail({ tenantName: "The Daily", readerName: "Ann", kind: "replies", items: [item], unsubscribeUrl: "u" });
    expect(reply.subject).not.toMatch(BREAKS);
    expect(reply.subject).toBe(
      "bob Bcc: eve@evil.example <p>body</p> replied to your comment on “On rivers Bcc: eve@evil.example <p>body</p>”",
    );
    expect(reply.text).toContain("> line one"); // the body keeps its lines
    const digest = renderModerationDigest({
      tenantName: `The Daily${INJECTION}`,
      pending: 1,
      reported: 0,
      oldest: [{ authorName: "bob", body: "b", discussionTitle: `On rivers${INJECTION}` }],
      consoleUrl: "https://console.example",
      unsubscribeUrl: "u",
    });
    expect(digest.subject).not.toMatch(BREAKS);
    expect(digest.subject).toBe("The Daily Bcc: eve@evil.example <p>body</p>: 1 comment waits for review");
  });
});
