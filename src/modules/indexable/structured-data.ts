// The structured data of an indexable thread (contract section 23): one schema.org
// DiscussionForumPosting for the discussion (its title as `headline`, its page as `url`, when it was
// opened, its visible comment count) whose `comment` lists the page's comments as `Comment`s: the
// author a `Person` by name, `datePublished` (and `dateModified` once edited), `text` (the plain text
// of the stored bodyHtml), `url` the permalink, `upvoteCount` (and `downvoteCount` under updown)
// while votes are on, replies nested under `comment`. A deleted comment kept for its replies (a
// tombstone) is not a Comment: its replies move up to where it stood. The posting's own author and
// text are the host page's, which the service does not know (docs/seo.md).
// `scriptJson` writes JSON that stays inside its <script> element whatever a comment holds.
import { decodeHTML } from "entities";
import type { CommentWithAuthor } from "../comments/dto.js";
import { shownComment } from "../comments/dto.js";
import { commentLink } from "../email/templates.js";
import type { ThreadNode, ThreadSnapshot } from "./snapshot.js";

type JsonLd = Record<string, unknown>;

/** The block-level ends of the service's sanitized HTML (src/lib/markdown.ts): a line break each. */
const BLOCK_END = /<\/(p|div|li|blockquote|pre|h[1-6]|ul|ol)>|<br\s*\/?>/gi;

/** The plain text of a stored bodyHtml: tags dropped, entities decoded, one line break between blocks. */
export function textOfBodyHtml(html: string): string {
  return decodeHTML(
    html
      .replace(/>\s+</g, "><")
      .replace(BLOCK_END, "\n")
      .replace(/<[^>]*>/g, ""),
  )
    .replace(/\n{2,}/g, "\n")
    .trim();
}

/**
 * A comment's permalink as reply emails and feeds link it (`commentLink`): the discussion's page and
 * the comment's anchor; without an http(s) page, the anchor alone (the host page's own).
 */
export function permalinkOf(pageUrl: string | null, commentId: string): string {
  return commentLink(pageUrl, commentId) ?? `#comment-${encodeURIComponent(commentId)}`;
}

/** The discussion's page without its hash, when it is an http(s) URL. */
export function pageUrlOf(url: string | null): string | null {
  return url && /^https?:\/\//i.test(url) ? url.split("#")[0]! : null;
}

function commentLd(row: CommentWithAuthor, replies: JsonLd[], pageUrl: string | null, votes: string): JsonLd {
  // the comment's public shape as a caller that cannot moderate is shown it (the API's, the island's)
  const c = shownComment(row, false);
  return {
    "@type": "Comment",
    url: permalinkOf(pageUrl, c.id),
    author: { "@type": "Person", name: c.author.name },
    datePublished: c.createdAt,
    ...(c.editedAt ? { dateModified: c.editedAt } : {}),
    text: textOfBodyHtml(c.bodyHtml),
    ...(votes === "off" ? {} : { upvoteCount: c.upvotes, ...(votes === "updown" ? { downvoteCount: c.downvotes } : {}) }),
    ...(replies.length ? { comment: replies } : {}),
  };
}

function commentsLd(nodes: ThreadNode[], pageUrl: string | null, votes: string): JsonLd[] {
  return nodes.flatMap((n) => {
    const replies = commentsLd(n.replies, pageUrl, votes);
    return n.comment.status === "deleted" ? replies : [commentLd(n.comment, replies, pageUrl, votes)];
  });
}

export function discussionLd(s: ThreadSnapshot): JsonLd {
  const d = s.discussion;
  const pageUrl = pageUrlOf(d.url);
  return {
    "@context": "https://schema.org",
    "@type": "DiscussionForumPosting",
    ...(d.title ? { headline: d.title } : {}),
    ...(pageUrl ? { url: pageUrl } : {}),
    ...(s.unsaved ? {} : { datePublished: d.createdAt.toISOString() }),
    commentCount: d.commentCount,
    interactionStatistic: {
      "@type": "InteractionCounter",
      interactionType: "https://schema.org/CommentAction",
      userInteractionCount: d.commentCount,
    },
    comment: commentsLd(s.top, pageUrl, s.settings.votes),
  };
}

/**
 * JSON for inside a <script> element: `<`, `>` and `&` as \u escapes (so no `</script>`, `<!--` or
 * `<script` can end or change the element), and U+2028/U+2029 too. JSON.parse reads the same value.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
