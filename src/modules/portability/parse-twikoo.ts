// Twikoo's comments: the admin panel's export (twikoo-comment.json: a JSON array of the comment
// collection's documents), the same documents one a line (as mongoexport and the Tencent
// CloudBase console write them, and as Twikoo's importer takes them), or {"results": […]} (which
// Twikoo's importer takes too); read as a stream (json-reader.ts: the array's or the results'
// members, or each document of the file), whichever the file's first characters say.
//
// A document: _id (a string, or mongoexport's {"$oid": …}), url (the page's path as the site named
// it: a thread, announced at its first comment), href (the page's URL), nick, mail, avatar,
// comment (HTML: tags stripped as for Disqus, htmlToText), pid (the comment replied to; rid, the
// thread's top comment, when pid is absent), isSpam (rejected), top (pinned), created (epoch ms;
// {"$numberLong"} and {"$date"} as mongoexport writes them), ups and downs (the voters' ids:
// counted as votes; older versions' like as upvotes). Twikoo deletes a comment's document, so no
// deleted one comes. A thread's page is its href (without its fragment; without its query too
// when its path is the thread's url, which is then the page's own path), else its url path on the
// import's site (`--site`). Authors become readers `twikoo:<hash of the mail>` (or
// `twikoo:name-<hash of the nick>` without one); the address is kept only with keepEmails.
// `updated` is not an edit: Twikoo changes it when a moderator pins or hides a comment.
import { readJsonObjects } from "./json-reader.js";
import { asObject, idOf, textOf } from "./record-fields.js";
import { peekText } from "./sniff.js";
import {
  emailOf,
  htmlToText,
  isPagePath,
  outOfRangeDate,
  parseSourceDate,
  sha256Hex,
  type SourceItem,
  type SourceThread,
} from "./source.js";

/** the start read to tell the file's shape (whitespace and a BOM before it skipped) */
const SHAPE_CHARS = 1024;

/** An _id: a string, or mongoexport's {"$oid": "…"}. */
const idOfDocument = (v: unknown) => idOf(v) ?? idOf(asObject(v)?.$oid);

/** A count of voters: an array's length (ups, downs, like), or a number (a count kept as one). */
const votersOf = (v: unknown): number =>
  Array.isArray(v)
    ? Math.min(v.length, 2 ** 31 - 1)
    : typeof v === "number" && Number.isSafeInteger(v) && v > 0
      ? Math.min(v, 2 ** 31 - 1)
      : 0;

/** A time Twikoo keeps (epoch ms), as a number, a numeric string, or mongoexport's {"$numberLong"} / {"$date"}. */
function timeOf(v: unknown): Date | null {
  const o = asObject(v);
  if (o) {
    if ("$numberLong" in o) return timeOf(o.$numberLong);
    if ("$date" in o) return typeof o.$date === "string" && !/^-?\d+$/.test(o.$date) ? parseSourceDate(o.$date) : timeOf(o.$date);
    return null;
  }
  const ms = typeof v === "number" ? v : typeof v === "string" && /^-?\d{1,16}$/.test(v.trim()) ? Number(v) : Number.NaN;
  return Number.isFinite(ms) ? new Date(ms) : null;
}

/** A thread's page: its href, or its url when that is a URL itself (null: the path on the import's site). */
function pageOf(url: string, href: string | null): string | null {
  if (/^https?:\/\//i.test(url)) return url.split("#")[0]!;
  const page = href && /^https?:\/\//i.test(href) ? URL.parse(href) : null;
  if (!page) return null;
  page.hash = "";
  // the thread is the page's own path: its query (a visitor's ?from=…) is no part of it
  if (isPagePath(url) && URL.parse(url, page.origin)?.pathname === page.pathname) page.search = "";
  return page.href;
}

export async function* parseTwikoo(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceItem> {
  const { text, stream } = await peekText(input, SHAPE_CHARS);
  const head = text.replace(/^[\s\uFEFF]+/, "");
  // an array; {"results": […]}; or documents one after the other (one a line)
  const shape = head.startsWith("[")
    ? { paths: ["$.*"], recordDepth: 2 }
    : /^\{\s*"results"\s*:/.test(head)
      ? { paths: ["$.results.*"], recordDepth: 3 }
      : { paths: ["$"], recordDepth: 1, multiple: true };
  const threads = new Set<string>();
  for await (const r of readJsonObjects(stream, { ...shape, notAnObject: "not an object: a Twikoo comment is a JSON object" })) {
    if (r.kind === "error") {
      yield r; // a reading error is the file's last record
      continue;
    }
    const o = r.value;
    const post = comment(o, r.position);
    if (post.kind === "post" && !threads.has(post.threadKey)) {
      threads.add(post.threadKey);
      yield threadOf(post.threadKey, textOf(o.href)?.trim() || null, post.createdAt, r.position);
    }
    yield post;
  }
}

function threadOf(url: string, href: string | null, createdAt: Date, position: string): SourceThread {
  const page = pageOf(url, href);
  return {
    kind: "thread",
    key: url,
    identifier: /^https?:\/\//i.test(url) ? null : url,
    url: page,
    pathNeedsSite: !page && isPagePath(url),
    title: null,
    createdAt,
    position,
  };
}

function comment(o: Record<string, unknown>, position: string): SourceItem {
  const key = idOfDocument(o._id);
  const bad = (message: string): SourceItem => ({ kind: "error", position, message: `comment ${key ?? ""}: ${message}` });
  if (!key) return bad("no _id");
  const url = textOf(o.url)?.trim() || null;
  if (!url) return bad("no url: its page is unknown");
  const createdAt = timeOf(o.created);
  if (!createdAt) return bad("created is missing or not a time");
  const late = outOfRangeDate({ created: createdAt }, { created: `${JSON.stringify(o.created)} ms` });
  if (late) return bad(late);
  const body = htmlToText(textOf(o.comment) ?? "");
  if (!body) return bad("its comment is empty");
  const name = textOf(o.nick)?.trim() ?? "";
  const email = textOf(o.mail)?.trim().toLowerCase() ?? "";
  const parent = idOfDocument(o.pid) ?? idOfDocument(o.rid);
  const votes = o.ups !== undefined || o.downs !== undefined ? { up: o.ups, down: o.downs } : { up: o.like, down: undefined };
  return {
    kind: "post",
    key,
    threadKey: url,
    parentKey: parent,
    author: {
      id: email ? `twikoo:${sha256Hex(email).slice(0, 16)}` : `twikoo:name-${sha256Hex(name || "anonymous").slice(0, 16)}`,
      name: (name || "Anonymous").slice(0, 200),
      avatarUrl: textOf(o.avatar),
      email: emailOf(email),
    },
    body,
    status: o.isSpam === true ? "rejected" : "approved",
    pinned: o.top === true,
    createdAt,
    editedAt: null,
    deletedAt: null,
    upvotes: votersOf(votes.up),
    downvotes: votersOf(votes.down),
    position,
  };
}
