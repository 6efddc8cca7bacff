// A chat alert's message (contract section 21) in each chat's own format for incoming webhooks: Slack's
// Block Kit (`blocks`, with `text` as the notification's fallback) and Discord's `embeds`. It names the
// comment (an excerpt and its id), its reader, its discussion and the reason, with the Approve and
// Reject links (Slack: link buttons; Discord: links in a field, its incoming webhooks having no
// buttons). Everything a reader or tenant wrote (the reader's name and id, the excerpt, the discussion's
// title, id and URL, the site's name, the reason) is escaped for the chat, wherever it goes, and
// neither chat is allowed to turn it into a mention or a link:
// - Slack: `&`, `<` and `>` as entities in the fallback `text` and in every mrkdwn object, which are
//   `verbatim` (no automatic links, channel names or mentions); plain_text objects carry our own words
//   only (the headline, the buttons); the discussion's URL is percent-encoded where it could end or
//   relabel its link.
// - Discord: its markdown and mention characters backslash-escaped in the description and the fields,
//   `allowed_mentions` empty; the footer is plain text there (no markdown, no mentions), shown as written.
// A name, a title or a site's name is shown on one line, so no line of it can pass for a field.
import type { AlertKind, AlertTrigger } from "../../../tenancy/settings/alerts.js";

export interface AlertMessage {
  /** the tenant's name */
  site: string;
  trigger: AlertTrigger;
  comment: { id: string; body: string };
  reader: { id: string; name: string };
  discussion: { id: string; title: string | null; url: string | null };
  /** the reason in words (describeReason) */
  reason: string;
  /** the one-click links; null in the console's Send test */
  links: { approve: string; reject: string } | null;
  at: Date;
  /** the console's Send test: said in the message */
  test?: boolean;
}

const HEADLINES: Record<AlertTrigger, string> = {
  pending: "A comment is waiting for review",
  hook_hold: "The moderation hook held a comment",
  reported: "Readers reported a comment",
};

const EXCERPT_CHARS = 500;

/** At most `n` characters (code points), an ellipsis when cut. */
const cut = (s: string, n: number): string => {
  const chars = [...s];
  return chars.length <= n ? s : `${chars.slice(0, n - 1).join("")}…`;
};

/** The reason a comment was held or listed, in words, from its moderationReason (docs/safety.md). */
export function describeReason(reason: unknown): string {
  const r = (typeof reason === "object" && reason !== null ? reason : {}) as Record<string, unknown>;
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String).join(", ") : "");
  switch (r.source) {
    case "rule":
      if (r.rule === "suspectWords") return `Suspect words: ${list(r.words)}`;
      if (r.rule === "maxLinks") return `Too many links: ${String(r.links)} (at most ${String(r.maxLinks)})`;
      return `Rule ${String(r.rule)}`;
    case "new_reader":
      return `A new reader: their first ${String(r.newReaderHold)} comments are held (${String(r.earlierComments)} before this one)`;
    case "hook":
      if (typeof r.fallback === "string") return `The moderation hook failed (${r.fallback}: ${String(r.error ?? "")}); held`;
      return typeof r.reason === "string" && r.reason ? `The moderation hook held it: ${r.reason}` : "The moderation hook held it";
    case "akismet":
      return "Akismet says it is spam";
    case "reports": {
      const reasons = typeof r.reasons === "object" && r.reasons !== null ? Object.entries(r.reasons) : [];
      const detail = reasons.map(([k, n]) => `${k} ${String(n)}`).join(", ");
      return `Reported by ${String(r.reportCount)} readers${detail ? ` (${detail})` : ""}`;
    }
    default:
      return "The site holds new comments for review (pre-moderation)";
  }
}

/** One line: a name or a title with line breaks (or other control characters) gets spaces instead. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const oneLine = (s: string): string => s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ");

/** A URL's characters that would end or relabel a chat's link, percent-encoded (encodeURIComponent leaves `(`, `)`). */
const encodeIn = (url: string, chars: RegExp): string =>
  url.replace(chars, (c) => [...Buffer.from(c, "utf8")].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join(""));

const isWebUrl = (url: string | null): url is string => url !== null && /^https?:\/\//i.test(url);

/** Slack's mrkdwn and fallback text: `&`, `<` and `>` escaped (no links, mentions or channel pings from the text). */
const slackText = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A URL inside Slack's `<url|label>`: `<`, `>`, `|` and white space percent-encoded, `&` as Slack escapes it. */
const slackUrl = (url: string): string => encodeIn(url, /[<>|\s]/gu).replace(/&/g, "&amp;");

/** A mrkdwn text object: verbatim, so Slack adds no links, channel names or mentions of its own. */
const mrkdwn = (text: string) => ({ type: "mrkdwn", text, verbatim: true });

/** Discord's markdown: its markup and mention characters escaped, so the text shows as written. */
const discordText = (s: string): string => s.replace(/([\\*_~`|<>[\]()#@:-])/g, "\\$1");

function slack(m: AlertMessage): unknown {
  const headline = `${m.test ? "[Test] " : ""}${HEADLINES[m.trigger]}`;
  const title = oneLine(m.discussion.title ?? m.discussion.id);
  const label = slackText(cut(title, 200));
  const discussion = isWebUrl(m.discussion.url) ? `<${slackUrl(m.discussion.url)}|${label}>` : label;
  const blocks: unknown[] = [
    { type: "header", text: { type: "plain_text", text: cut(headline, 150) } },
    {
      type: "section",
      fields: [
        mrkdwn(`*Reader*\n${slackText(cut(oneLine(m.reader.name), 200))} (\`${slackText(oneLine(m.reader.id))}\`)`),
        mrkdwn(`*Discussion*\n${discussion}`),
      ],
    },
    { type: "section", text: mrkdwn(`*Reason*\n${slackText(cut(m.reason, 500))}`) },
    { type: "section", text: mrkdwn(`>${slackText(cut(m.comment.body, EXCERPT_CHARS)).replace(/\n/g, "\n>")}`) },
    { type: "context", elements: [mrkdwn(`Comment \`${slackText(m.comment.id)}\` · ${slackText(cut(oneLine(m.site), 100))}`)] },
  ];
  if (m.links) {
    blocks.push({
      type: "actions",
      elements: [
        { type: "button", action_id: "approve", text: { type: "plain_text", text: "Approve" }, style: "primary", url: m.links.approve },
        { type: "button", action_id: "reject", text: { type: "plain_text", text: "Reject" }, style: "danger", url: m.links.reject },
      ],
    });
  }
  return { text: `${headline}: ${slackText(cut(oneLine(m.reader.name), 100))} in ${slackText(cut(title, 100))}`, blocks };
}

const COLORS: Record<AlertTrigger, number> = { pending: 0xe8a317, hook_hold: 0x8e44ad, reported: 0xc0392b };

function discord(m: AlertMessage): unknown {
  const headline = `${m.test ? "[Test] " : ""}${HEADLINES[m.trigger]}`;
  const title = discordText(cut(oneLine(m.discussion.title ?? m.discussion.id), 200));
  const fields = [
    { name: "Reader", value: `${discordText(cut(oneLine(m.reader.name), 200))} (${discordText(oneLine(m.reader.id))})`, inline: true },
    {
      name: "Discussion",
      value: isWebUrl(m.discussion.url) ? `[${title}](${encodeIn(m.discussion.url, /[()<>\s]/gu)})` : title,
      inline: true,
    },
    { name: "Reason", value: discordText(cut(m.reason, 500)) },
  ];
  if (m.links) fields.push({ name: "Moderate", value: `[Approve](${m.links.approve}) · [Reject](${m.links.reject})` });
  return {
    content: headline,
    allowed_mentions: { parse: [] },
    embeds: [
      {
        title: cut(headline, 256),
        description: discordText(cut(m.comment.body, EXCERPT_CHARS)),
        color: COLORS[m.trigger],
        fields,
        footer: { text: cut(oneLine(`Comment ${m.comment.id} · ${m.site}`), 2048) },
        timestamp: m.at.toISOString(),
      },
    ],
  };
}

/** The JSON body an incoming webhook of `kind` takes. */
export function renderAlert(kind: AlertKind, m: AlertMessage): string {
  return JSON.stringify(kind === "slack" ? slack(m) : discord(m));
}
