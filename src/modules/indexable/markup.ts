// The HTML of an indexable thread (contract section 23): one <engagement-thread> element whose light
// DOM is the page of comments as plain semantic HTML, readable with no script and no stylesheet: the
// heading, a line in the place of the live thread's composer ("Join the discussion…", or on a
// discussion closed to comments the live thread's notice), an <article id="comment-<id>"> per comment
// (microformats2 h-entry: a header with the author's name as p-author h-card and the date as
// dt-published inside the u-url permalink — and for a reply brought in from Bluesky an "on Bluesky"
// link to the discussion's post there — the stored bodyHtml as e-content, a reply's parent as
// u-in-reply-to; a footer linking the comment again, in the place of the live thread's actions), so
// the element is about as tall before and after it upgrades (contract section 27, docs/seo.md),
// replies in an <ol> inside their parent's article, and where a comment's replies were cut off (20
// per comment, 200 per page) a "Show n more replies" link to the fragment's replies page for it
// (`parentId`), as the live thread has its button there; then an <a rel="next"> to the next page's
// fragment, and for a reader without JavaScript (<noscript>) a line linking to the page itself, where
// the thread works. Inside the element, first, the thread element's island (island.ts) as a JSON data block
// it reads instead of asking for the page (not on a replies page, which the element does not show
// as such); after the element, the JSON-LD (structured-data.ts). Every text and attribute is
// escaped; bodies are the service's sanitized bodyHtml as stored, never rendered again, and written
// once: the island takes them from the articles beside it.
import { shownComment } from "../comments/dto.js";
import { escapeHtml } from "../email/templates.js";
import type { ThreadIsland } from "./island.js";
import type { ThreadNode, ThreadSnapshot } from "./snapshot.js";
import { discussionLd, pageUrlOf, permalinkOf, scriptJson } from "./structured-data.js";
import { fillCount, fragmentDates, type FragmentWords, type ThreadLanguage } from "./words.js";

export interface FragmentOptions {
  /** the publishable key the element uses (and the next page's link carries); null: the script tag's */
  key: string | null;
  /** the service's origin: the element's api-base and the next page's link */
  apiBase: string;
  /** the `sort` and `lang` asked for (null: not given, the element's defaults) */
  sort: string | null;
  lang: string | null;
  words: FragmentWords;
  /** the language dates are written in */
  locale: ThreadLanguage;
}

const attr = (name: string, value: string | null) => (value === null ? "" : ` ${name}="${escapeHtml(value)}"`);

/**
 * The address of a fragment with the same key, sort and language: the page at `cursor`, or with
 * `parentId` that comment's replies page (at `cursor`, when given).
 */
export function fragmentUrl(
  discussionId: string,
  opts: Pick<FragmentOptions, "apiBase" | "key" | "sort" | "lang">,
  at: { cursor?: string | null; parentId?: string | null },
): string {
  const query = new URLSearchParams();
  if (opts.key) query.set("key", opts.key);
  if (opts.sort) query.set("sort", opts.sort);
  if (opts.lang) query.set("lang", opts.lang);
  if (at.parentId) query.set("parentId", at.parentId);
  if (at.cursor) query.set("cursor", at.cursor);
  return `${opts.apiBase}/embed/v1/discussions/${encodeURIComponent(discussionId)}.html?${query.toString()}`;
}

export function fragmentHtml(s: ThreadSnapshot, island: ThreadIsland | null, opts: FragmentOptions): string {
  const d = s.discussion;
  const pageUrl = pageUrlOf(d.url);
  const w = opts.words;
  const dates = fragmentDates(opts.locale);

  /** where a comment's replies stop short of its replyCount: a link to its replies page, after those shown */
  const moreReplies = (n: ThreadNode): string => {
    const c = shownComment(n.comment, false);
    const left = c.replyCount - n.replies.length;
    if (c.id === s.parentId || c.replyCount <= 0 || (n.repliesEnd ? !n.repliesEnd.hasNextPage : false)) return "";
    const href = fragmentUrl(d.id, opts, { parentId: c.id, cursor: n.repliesEnd?.endCursor ?? null });
    const words = fillCount(left === 1 ? w.more_replies_one : w.more_replies_other, Math.max(left, 1));
    return `\n<p><a href="${escapeHtml(href)}">${escapeHtml(words)}</a></p>`;
  };

  const comment = (n: ThreadNode): string => {
    // the comment's public shape as a caller that cannot moderate is shown it (the API's, the island's)
    const c = shownComment(n.comment, false);
    const link = permalinkOf(pageUrl, c.id);
    const parentLink = c.parentId === null ? null : permalinkOf(pageUrl, c.parentId);
    const replies = (n.replies.length ? `\n<ol>${n.replies.map(comment).join("")}</ol>` : "") + moreReplies(n);
    if (c.status === "deleted")
      return `<li><article id="comment-${escapeHtml(c.id)}"><p>${escapeHtml(w.deleted)}</p>${replies}</article></li>\n`;
    const meta = [
      `<span class="p-author h-card">${escapeHtml(c.author.name)}</span>${c.author.badge ? ` <small>${escapeHtml(c.author.badge)}</small>` : ""}`,
      `<a class="u-url" href="${escapeHtml(link)}"><time class="dt-published" datetime="${c.createdAt}">${escapeHtml(dates.format(new Date(c.createdAt)))}</time></a>`,
      ...(c.editedAt ? [escapeHtml(w.edited)] : []),
      // a reply brought in from Bluesky says so, linking to the post it answers there (contract section 30)
      ...(c.kind === "bluesky"
        ? [s.blueskyUrl ? `<a href="${escapeHtml(s.blueskyUrl)}">${escapeHtml(w.on_bluesky)}</a>` : escapeHtml(w.on_bluesky)]
        : []),
      ...(c.pinned ? [escapeHtml(w.pinned)] : []),
    ].join(" · ");
    const inReplyTo = parentLink ? `<data class="u-in-reply-to" value="${escapeHtml(parentLink)}"></data>` : "";
    return (
      `<li><article id="comment-${escapeHtml(c.id)}" class="h-entry">${inReplyTo}\n<header>${meta}</header>\n` +
      `<div class="e-content">${c.bodyHtml}</div>\n<footer><a href="${escapeHtml(link)}">${escapeHtml(w.link)}</a></footer>${replies}</article></li>\n`
    );
  };

  const count = fillCount(d.commentCount === 1 ? w.count_one : w.count_other, d.commentCount);
  // in the place of the live thread's composer (or its notice on a discussion closed to comments), a line saying as much
  const invitation = d.state === "locked" ? w.locked : d.state === "archived" ? w.archived : w.composer_placeholder;
  const list = s.top.length ? `<ol class="comments">\n${s.top.map(comment).join("")}</ol>\n` : `<p>${escapeHtml(w.empty)}</p>\n`;
  const next =
    s.topEnd.hasNextPage && s.topEnd.endCursor
      ? `<p><a rel="next" href="${escapeHtml(fragmentUrl(d.id, opts, { parentId: s.parentId, cursor: s.topEnd.endCursor }))}">${escapeHtml(w.load_more)}</a></p>\n`
      : "";
  // without JavaScript, where to comment: the page itself (a browser with scripting on shows none of it)
  const onPage = pageUrl ? `<noscript><p><a href="${escapeHtml(pageUrl)}">${escapeHtml(w.comment_on_page)}</a></p></noscript>\n` : "";
  const element =
    `<engagement-thread${attr("discussion-id", d.id)}${attr("publishable-key", opts.key)}${attr("api-base", opts.apiBase)}` +
    `${attr("discussion-url", pageUrl)}${attr("sort", opts.sort)}${attr("lang", opts.lang)}>\n` +
    (island ? `<script type="application/json" data-engagement-thread>${scriptJson(island)}</script>\n` : "") +
    `<h2>${escapeHtml(w.title)} <small>(${escapeHtml(count)})</small></h2>\n<p>${escapeHtml(invitation)}</p>\n${list}${next}${onPage}</engagement-thread>\n`;
  return `${element}<script type="application/ld+json">${scriptJson(discussionLd(s))}</script>\n`;
}
