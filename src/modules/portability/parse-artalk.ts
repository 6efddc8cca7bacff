// Artalk's Artrans (`artalk export`, the dashboard's export; ArtalkJS/Artransfer writes it from
// other systems' files): one JSON array, an object per comment, read as a stream (json-reader.ts).
// Artalk reads every value as a string (its own export writes them so: "true", "666", dates
// "2021-10-28 20:50:15 +0800"; Artransfer's files have JSON booleans and ISO dates): so are they
// read here, a number or a boolean as its text. A file that is not an array (one object, as the
// docs' example) is refused, as Artalk refuses it.
//
// A comment: id, rid (the comment it replies to; "", "0" or absent for none, and one naming no
// comment of the file leaves the reply top-level, as Artalk makes it), content (Artalk's Markdown,
// HTML in Artransfer's files: tags stripped as for Disqus, htmlToText), created_at, is_pending
// (pending; Artalk has no deleted or spam state), is_pinned, vote_up and vote_down (counted as
// votes), nick, email and badge_name (the author), page_key (a path or a URL), page_title,
// site_name and site_urls. Each page (site_name and page_key) is a thread, announced at its first
// comment: one whose page_key is a URL has it as its page; one named by its path has the path as
// its identifier and its page on the site's origin: the import's (`--site`), else the first of
// the comment's site_urls that is not a local address (Artalk's first site URL). Authors become
// readers `artalk:<hash of the email>` (or `artalk:name-<hash of the nick>` without one), with
// their badge when it is one (lib/badge.ts); the address is kept only with keepEmails.
// Artalk numbers its comments per database, so two files' ids may meet (importer.ts SCOPED_IDS).
import { parseBadge } from "../../lib/badge.js";
import { readJsonObjects } from "./json-reader.js";
import {
  emailOf,
  htmlToText,
  isPagePath,
  outOfRangeDate,
  parseSourceDate,
  sha256Hex,
  siteOriginOf,
  type SourceItem,
  type SourcePost,
} from "./source.js";

/** A value as Artalk reads it (every value a string): a number or a boolean as its text; anything else "". */
const valueOf = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : "");

/** Artalk's booleans: "true" (its export), true (Artransfer's), "1". */
const isTrue = (v: unknown) => ["true", "1"].includes(valueOf(v).trim().toLowerCase());

/** Artalk's counts (strconv.Atoi of the text): a non-negative integer, else 0. */
const countOfText = (v: unknown) => {
  const t = valueOf(v).trim();
  return /^\d{1,10}$/.test(t) ? Math.min(Number(t), 2 ** 31 - 1) : 0;
};

/** The site's origin a path is on: the first of site_urls that is not a local address, else the first. */
function originOfSiteUrls(text: string): string | null {
  const origins = text
    .split(",")
    .map((u) => siteOriginOf(u))
    .filter((o): o is string => o !== null);
  const local = (o: string) => /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/i.test(o);
  return origins.find((o) => !local(o)) ?? origins[0] ?? null;
}

export async function* parseArtalk(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceItem> {
  const threads = new Set<string>();
  const badged = new Set<string>();
  for await (const r of readJsonObjects(input, {
    paths: ["$.*"],
    recordDepth: 2,
    notAList: "not Artrans: Artalk's import takes a JSON array of comments, not one object",
  })) {
    if (r.kind === "error") {
      yield r; // a reading error is the file's last record
      continue;
    }
    const o = r.value;
    const post = comment(o, r.position);
    if (post.kind !== "post") {
      yield post;
      continue;
    }
    if (!threads.has(post.threadKey)) {
      threads.add(post.threadKey);
      // a URL, a path (`/posts/hello/`), or a key of the site's own naming
      const pageKey = valueOf(o.page_key).trim();
      const byUrl = /^https?:\/\//i.test(pageKey);
      yield {
        kind: "thread",
        key: post.threadKey,
        identifier: byUrl ? null : pageKey,
        url: byUrl ? pageKey : null,
        origin: isPagePath(pageKey) ? originOfSiteUrls(valueOf(o.site_urls)) : null,
        pathNeedsSite: isPagePath(pageKey),
        title: valueOf(o.page_title).trim() || null,
        createdAt: post.createdAt,
        position: r.position,
      };
    }
    const badge = parseBadge(valueOf(o.badge_name));
    if (!badged.has(post.author.id) && "badge" in badge && badge.badge) {
      badged.add(post.author.id);
      yield { kind: "reader", ...post.author, badge: badge.badge, createdAt: post.createdAt, position: r.position };
    }
    yield post;
  }
}

function comment(o: Record<string, unknown>, position: string): SourcePost | SourceItem {
  const key = valueOf(o.id).trim();
  const bad = (message: string): SourceItem => ({ kind: "error", position, message: `comment ${key}: ${message}` });
  if (!key) return bad("no id");
  const pageKey = valueOf(o.page_key).trim();
  if (!pageKey) return bad("no page_key: its page is unknown");
  const createdAt = parseSourceDate(valueOf(o.created_at));
  if (!createdAt) return bad("created_at is missing or not a date");
  const late = outOfRangeDate({ created_at: createdAt });
  if (late) return bad(late);
  const body = htmlToText(valueOf(o.content));
  if (!body) return bad("its content is empty");
  const rid = valueOf(o.rid).trim();
  const name = valueOf(o.nick).trim();
  const email = valueOf(o.email).trim().toLowerCase();
  return {
    kind: "post",
    key,
    threadKey: `${valueOf(o.site_name).trim()}\u0000${pageKey}`,
    parentKey: rid && rid !== "0" ? rid : null,
    author: {
      id: email ? `artalk:${sha256Hex(email).slice(0, 16)}` : `artalk:name-${sha256Hex(name || "anonymous").slice(0, 16)}`,
      name: (name || "Anonymous").slice(0, 200),
      email: emailOf(email),
    },
    body,
    status: isTrue(o.is_pending) ? "pending" : "approved",
    pinned: isTrue(o.is_pinned),
    createdAt,
    editedAt: null,
    deletedAt: null,
    upvotes: countOfText(o.vote_up),
    downvotes: countOfText(o.vote_down),
    position,
  };
}
