// The emails' words (contract section 15): one template per kind, each giving a plain-text and an
// HTML part from the same data. Pure: the mail queue (mail-queue.ts) gathers the data, these render
// it. No tracking pixels, no external images, no scripts: the HTML is a few paragraphs and links, and
// each reply as the comment shows it (its stored bodyHtml, sanitized when it was written; the text
// part quotes the Markdown source).
// A subject is one line (src/lib/single-line.ts), whatever the names and titles in it hold.
import { oneLine } from "../../lib/single-line.js";

/** One reply a reader is told of. */
export interface ReplyItem {
  commentId: string;
  /** the replier's display name */
  authorName: string;
  body: string;
  /** the reply as the service rendered it (sanitized: src/lib/markdown.ts), shown in the HTML part; null: not rendered yet */
  bodyHtml: string | null;
  /** the reader's comment it answers (null when it is gone) */
  parentBody: string | null;
  discussionTitle: string | null;
  /** the discussion's page, from its `url`; a link to the reply is this plus `#comment-<id>` */
  discussionUrl: string | null;
}

export interface ReplyEmailData {
  tenantName: string;
  readerName: string;
  /** `replies`: sent within minutes; `digest`: the daily digest */
  kind: "replies" | "digest";
  /** what the items are: replies to the reader (default), or new comments in discussions they follow (contract section 19) */
  about?: "replies" | "following";
  items: ReplyItem[];
  unsubscribeUrl: string;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

const EXCERPT = 600;

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The first `max` characters of a body, on one paragraph's worth of whitespace. */
export function excerpt(body: string, max = EXCERPT): string {
  const flat = body.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

/** The link to a comment: its discussion's page and an anchor; null when the discussion has no http(s) url. */
export function commentLink(discussionUrl: string | null, commentId: string): string | null {
  if (!discussionUrl || !/^https?:\/\//i.test(discussionUrl)) return null;
  return `${discussionUrl.split("#")[0]}#comment-${encodeURIComponent(commentId)}`;
}

const quoted = (s: string) => `“${s}”`;

export function renderReplyEmail(data: ReplyEmailData): RenderedEmail {
  if (data.about === "following") return renderFollowingEmail(data);
  const n = data.items.length;
  const first = data.items[0]!;
  const where = (item: ReplyItem) => (item.discussionTitle ? ` on ${quoted(item.discussionTitle)}` : "");
  const subject = oneLine(
    data.kind === "digest"
      ? `Your daily digest from ${data.tenantName}: ${n} ${n === 1 ? "reply" : "replies"}`
      : n === 1
        ? `${first.authorName} replied to your comment${where(first)}`
        : `${n} new replies to your comments on ${data.tenantName}`,
  );
  const intro =
    data.kind === "digest"
      ? `Since yesterday's digest, ${n === 1 ? "one reply has" : `${n} replies have`} come in to your comments on ${data.tenantName}.`
      : n === 1
        ? `${first.authorName} replied to your comment${where(first)}.`
        : `${n} replies have come in to your comments on ${data.tenantName}.`;
  return renderItems(data, subject, intro, {
    why: `You get these emails because you comment on ${data.tenantName}.`,
    stop: "Stop reply emails",
  });
}

/** New comments in the discussions the reader follows (subscription `all`): at once, or the daily digest. */
function renderFollowingEmail(data: ReplyEmailData): RenderedEmail {
  const n = data.items.length;
  const first = data.items[0]!;
  const where = (item: ReplyItem) => (item.discussionTitle ? ` on ${quoted(item.discussionTitle)}` : "");
  const comments = n === 1 ? "one new comment" : `${n} new comments`;
  const subject = oneLine(
    data.kind === "digest"
      ? `Your daily digest from ${data.tenantName}: ${comments} in discussions you follow`
      : n === 1
        ? `${first.authorName} commented${where(first)}`
        : `${comments} in discussions you follow on ${data.tenantName}`,
  );
  const intro =
    data.kind === "digest"
      ? `Since yesterday's digest, ${comments} came in to the discussions you follow on ${data.tenantName}.`
      : n === 1
        ? `${first.authorName} commented${where(first)}, a discussion you follow.`
        : `${comments} came in to the discussions you follow on ${data.tenantName}.`;
  return renderItems(data, subject, intro, {
    why: `You get these emails because you follow discussions on ${data.tenantName}.`,
    stop: "Stop emails of followed discussions",
  });
}

function renderItems(data: ReplyEmailData, subject: string, intro: string, footerWords: { why: string; stop: string }): RenderedEmail {
  const where = (item: ReplyItem) => (item.discussionTitle ? ` on ${quoted(item.discussionTitle)}` : "");
  const textItems = data.items.map((item) => {
    const link = commentLink(item.discussionUrl, item.commentId);
    return [
      `${item.authorName} wrote${where(item)}:`,
      ...excerpt(item.body)
        .split("\n")
        .map((l) => `> ${l}`),
      ...(item.parentBody !== null ? ["", `In reply to your comment: ${quoted(excerpt(item.parentBody, 200))}`] : []),
      ...(link ? ["", `Read it and reply: ${link}`] : []),
    ].join("\n");
  });
  const footer = [footerWords.why, `${footerWords.stop} (one click, no sign-in): ${data.unsubscribeUrl}`];
  const text = [`Hello ${data.readerName},`, "", intro, "", textItems.join("\n\n---\n\n"), "", "-- ", ...footer, ""].join("\n");

  const htmlItems = data.items.map((item) => {
    const link = commentLink(item.discussionUrl, item.commentId);
    return [
      `<p><strong>${escapeHtml(item.authorName)}</strong> wrote${escapeHtml(where(item))}:</p>`,
      `<blockquote style="margin:0 0 0 0.5em;padding-left:0.75em;border-left:3px solid #ccc">${item.bodyHtml ?? escapeHtml(excerpt(item.body))}</blockquote>`,
      item.parentBody !== null
        ? `<p style="color:#555">In reply to your comment: ${escapeHtml(quoted(excerpt(item.parentBody, 200)))}</p>`
        : "",
      link ? `<p><a href="${escapeHtml(link)}">Read it and reply</a></p>` : "",
    ].join("\n");
  });
  const html = [
    "<!doctype html>",
    `<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    `<body style="font-family:system-ui,sans-serif;line-height:1.5;color:#222;max-width:40em">`,
    `<p>Hello ${escapeHtml(data.readerName)},</p>`,
    `<p>${escapeHtml(intro)}</p>`,
    htmlItems.join('\n<hr style="border:0;border-top:1px solid #ddd">\n'),
    `<p style="color:#666;font-size:0.9em">${escapeHtml(footerWords.why)}<br>`,
    `<a href="${escapeHtml(data.unsubscribeUrl)}">${escapeHtml(footerWords.stop)}</a> (one click, no sign-in).</p>`,
    "</body></html>",
    "",
  ].join("\n");
  return { subject, text, html };
}

/** A comment waiting for review, as a moderation digest lists it. */
export interface WaitingComment {
  authorName: string;
  body: string;
  discussionTitle: string | null;
}

export interface ModerationDigestData {
  tenantName: string;
  /** comments held for review (pending) */
  pending: number;
  /** comments with open reports */
  reported: number;
  /** the oldest pending comments, a few */
  oldest: WaitingComment[];
  /** the console's moderation queue */
  consoleUrl: string;
  unsubscribeUrl: string;
}

/** An operator's digest of what waits for review (sent only when something does). */
export function renderModerationDigest(data: ModerationDigestData): RenderedEmail {
  const parts = [
    data.pending ? `${data.pending} ${data.pending === 1 ? "comment waits" : "comments wait"} for review` : null,
    data.reported ? `${data.reported} reported ${data.reported === 1 ? "comment" : "comments"}` : null,
  ].filter((p): p is string => p !== null);
  const summary = parts.join(" and ");
  const subject = oneLine(`${data.tenantName}: ${summary}`);
  const line = (c: WaitingComment) =>
    `${c.authorName}${c.discussionTitle ? ` on ${quoted(c.discussionTitle)}` : ""}: ${quoted(excerpt(c.body, 200))}`;
  const text = [
    `On ${data.tenantName}, ${summary}.`,
    ...(data.oldest.length ? ["", "Waiting longest:", ...data.oldest.map((c) => `- ${line(c)}`)] : []),
    "",
    `Review them in the console: ${data.consoleUrl}`,
    "",
    "-- ",
    "You get this digest because you chose it in the console.",
    `Stop moderation digests (one click, no sign-in): ${data.unsubscribeUrl}`,
    "",
  ].join("\n");
  const html = [
    "<!doctype html>",
    `<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    `<body style="font-family:system-ui,sans-serif;line-height:1.5;color:#222;max-width:40em">`,
    `<p>On ${escapeHtml(data.tenantName)}, ${escapeHtml(summary)}.</p>`,
    data.oldest.length ? `<p>Waiting longest:</p><ul>${data.oldest.map((c) => `<li>${escapeHtml(line(c))}</li>`).join("")}</ul>` : "",
    `<p><a href="${escapeHtml(data.consoleUrl)}">Review them in the console</a></p>`,
    `<p style="color:#666;font-size:0.9em">You get this digest because you chose it in the console.<br>`,
    `<a href="${escapeHtml(data.unsubscribeUrl)}">Stop moderation digests</a> (one click, no sign-in).</p>`,
    "</body></html>",
    "",
  ].join("\n");
  return { subject, text, html };
}
