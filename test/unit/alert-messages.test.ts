// A chat alert's message (src/modules/alerts/engine/messages.ts), the pure composer: every text a reader
// or a tenant controls — the reader's name and id, the comment's excerpt, the discussion's title, id
// and URL, the site's name, the reason (a hook's words, a rule's words) — is escaped for the chat it
// goes to, in every place it appears. Slack: `&`, `<`, `>` as entities in the fallback `text` and in
// every mrkdwn object (marked verbatim: no automatic links, channel names or mentions), plain_text
// only for our own words; Discord: its markup characters escaped and no mention allowed.
import { describe, expect, it } from "vitest";
import { renderAlert, type AlertMessage } from "../../src/modules/alerts/engine/messages.js";

const base: AlertMessage = {
  site: "Acme",
  trigger: "pending",
  comment: { id: "cmt_1", body: "Hello" },
  reader: { id: "ann", name: "Ann" },
  discussion: { id: "launch", title: "Launch", url: "https://news.example/launch" },
  reason: "The site holds new comments for review (pre-moderation)",
  links: { approve: "https://svc.example/moderate/v1/a.A", reject: "https://svc.example/moderate/v1/a.R" },
  at: new Date("2030-01-02T03:04:05.000Z"),
};

/** What a hostile reader or tenant would write: a broadcast, a disguised link, mentions and markup. */
const HOSTILE = "<!here> <http://evil.example|Official> <@U123> @everyone & [x](http://evil.example) **b** #general";
const SLACK = "&lt;!here&gt; &lt;http://evil.example|Official&gt; &lt;@U123&gt; @everyone &amp; [x](http://evil.example) **b** #general";
const DISCORD =
  "\\<!here\\> \\<http\\://evil.example\\|Official\\> \\<\\@U123\\> \\@everyone & \\[x\\]\\(http\\://evil.example\\) \\*\\*b\\*\\* \\#general";

/** Each field a reader or a tenant controls, set to the hostile text. */
const FIELDS: Record<string, (m: AlertMessage) => AlertMessage> = {
  "reader name": (m) => ({ ...m, reader: { ...m.reader, name: HOSTILE } }),
  "reader id": (m) => ({ ...m, reader: { ...m.reader, id: HOSTILE } }),
  "comment excerpt": (m) => ({ ...m, comment: { ...m.comment, body: HOSTILE } }),
  "discussion title": (m) => ({ ...m, discussion: { ...m.discussion, title: HOSTILE } }),
  "discussion id (no title)": (m) => ({ ...m, discussion: { id: HOSTILE, title: null, url: null } }),
  "site name": (m) => ({ ...m, site: HOSTILE }),
  reason: (m) => ({ ...m, reason: `The moderation hook held it: ${HOSTILE}` }),
};

/** The fields the fallback `text` names (the reader and the discussion). */
const IN_FALLBACK = ["reader name", "discussion title", "discussion id (no title)"];
const slackLabel = (title: string) => (title === HOSTILE ? SLACK : title);

const slackOf = (m: AlertMessage) => JSON.parse(renderAlert("slack", m)) as { text: string; blocks: any[] };
const discordOf = (m: AlertMessage) =>
  JSON.parse(renderAlert("discord", m)) as { content: string; allowed_mentions: unknown; embeds: any[] };

/** Every text object of a Slack message's blocks, with its type. */
function slackTexts(blocks: any[]): { type: string; text: string; verbatim?: boolean }[] {
  const out: { type: string; text: string; verbatim?: boolean }[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      if ((o.type === "mrkdwn" || o.type === "plain_text") && typeof o.text === "string") out.push(o as never);
      else Object.values(o).forEach(visit);
    }
  };
  visit(blocks);
  return out;
}

/** Slack's control sequences (`<…>`) in a text: only our own link to the discussion may be one. */
const controls = (s: string) => [...s.matchAll(/<[^>]*>/g)].map((m) => m[0]);

describe("a Slack alert escapes every text a reader or tenant controls", () => {
  for (const [field, set] of Object.entries(FIELDS)) {
    it(field, () => {
      const m = set(base);
      const s = slackOf(m);
      const texts = slackTexts(s.blocks);
      const all = [s.text, ...texts.map((t) => t.text)];
      expect(all.join("\n")).not.toContain(HOSTILE);
      // the hostile text is somewhere (each field is shown), and only escaped
      if (IN_FALLBACK.includes(field)) expect(s.text).toContain(SLACK);
      expect(texts.some((t) => t.text.includes(SLACK))).toBe(true);
      // Slack's control sequences: only our own link to the discussion, whatever the field says
      const ours = m.discussion.url
        ? [`<${m.discussion.url}|${m.discussion.title === null ? SLACK : slackLabel(m.discussion.title)}>`]
        : [];
      for (const text of all) for (const c of controls(text)) expect(ours, `${field}: ${text}`).toContain(c);
      // nothing a reader wrote is in a plain_text object (ours only: the headline and the buttons)
      for (const t of texts.filter((t) => t.type === "plain_text"))
        expect(["A comment is waiting for review", "Approve", "Reject"]).toContain(t.text);
      // mrkdwn objects are verbatim: no automatic links, channel names or mentions from the text
      for (const t of texts.filter((t) => t.type === "mrkdwn")) expect(t.verbatim, t.text).toBe(true);
    });
  }

  it("the fallback text names the reader and the discussion, escaped", () => {
    const s = slackOf({ ...base, reader: { id: "r", name: "<!channel> & co" }, discussion: { id: "d", title: "A <b> & c", url: null } });
    expect(s.text).toBe("A comment is waiting for review: &lt;!channel&gt; &amp; co in A &lt;b&gt; &amp; c");
  });

  it("a name or title on several lines is shown on one (no line of its own can pass for a field)", () => {
    const s = slackOf({ ...base, reader: { id: "r", name: "Ann\n*Reason*\nApproved by the admin" } });
    const reader = slackTexts(s.blocks).find((t) => t.text.startsWith("*Reader*"))!;
    expect(reader.text).toBe("*Reader*\nAnn *Reason* Approved by the admin (`r`)");
    expect(s.text).not.toContain("\n");
  });

  it("the discussion's URL is one link: its own `|`, `>` and `&` cannot end it or relabel it", () => {
    const s = slackOf({ ...base, discussion: { id: "d", title: "T", url: "https://news.example/a?b=1&c=<2>|Official" } });
    const field = slackTexts(s.blocks).find((t) => t.text.startsWith("*Discussion*"))!;
    expect(field.text).toBe("*Discussion*\n<https://news.example/a?b=1&amp;c=%3C2%3E%7COfficial|T>");
    // a URL that is not http(s) is not linked at all
    const js = slackOf({ ...base, discussion: { id: "d", title: "T", url: "javascript:alert(1)" } });
    expect(slackTexts(js.blocks).find((t) => t.text.startsWith("*Discussion*"))!.text).toBe("*Discussion*\nT");
  });
});

describe("a Discord alert escapes every text a reader or tenant controls", () => {
  /** The texts Discord renders as markdown: the embed's description and its fields' values. */
  const rendered = (d: ReturnType<typeof discordOf>) => [
    d.embeds[0].description as string,
    ...d.embeds[0].fields.map((f: any) => f.value as string),
  ];

  for (const [field, set] of Object.entries(FIELDS)) {
    it(field, () => {
      const d = discordOf(set(base));
      expect(d.allowed_mentions).toEqual({ parse: [] }); // and no mention pings, whatever the text
      const texts = rendered(d);
      if (field === "site name") {
        // the footer: plain text in Discord (no markdown, no mentions), shown as written
        expect(d.embeds[0].footer.text).toBe(`Comment cmt_1 · ${HOSTILE}`);
        return;
      }
      expect(
        texts.some((t) => t.includes(DISCORD)),
        texts.join("\n"),
      ).toBe(true);
      for (const t of texts) {
        expect(t).not.toContain(HOSTILE);
        expect(t).not.toMatch(/(^|[^\\])@everyone/);
        expect(t).not.toMatch(/(^|[^\\])<[@#!:t/]/);
      }
      // our own words only, outside the embed's markdown
      expect(d.content).toBe("A comment is waiting for review");
      expect(d.embeds[0].title).toBe("A comment is waiting for review");
    });
  }

  it("the discussion's link: its title escaped, its URL unable to close the link", () => {
    const d = discordOf({ ...base, discussion: { id: "d", title: "A [b](c)", url: "https://news.example/a_(b) c<d>" } });
    expect(d.embeds[0].fields[1].value).toBe("[A \\[b\\]\\(c\\)](https://news.example/a_%28b%29%20c%3Cd%3E)");
  });

  it("the Moderate field carries our two links and nothing of the reader's", () => {
    const d = discordOf({ ...base, reader: { id: "r", name: "[Approve](http://evil.example)" } });
    const moderate = d.embeds[0].fields.find((f: any) => f.name === "Moderate").value;
    expect(moderate).toBe("[Approve](https://svc.example/moderate/v1/a.A) · [Reject](https://svc.example/moderate/v1/a.R)");
    expect(d.embeds[0].fields[0].value).toBe("\\[Approve\\]\\(http\\://evil.example\\) (r)");
  });
});
