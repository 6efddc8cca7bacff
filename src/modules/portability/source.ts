// What every import format is read into (src/modules/portability/parse-*.ts): threads, posts,
// readers and reactions keyed by the source's own ids, each with its position in the file, and bad
// records as errors with theirs. src/modules/portability/engine/importer.ts turns them into rows.
import { createHash } from "node:crypto";
import { Parser } from "htmlparser2";
import { DISCUSSION_ID_RE } from "../../lib/ids.js";
import type { CommentKind, CommentStatus, DiscussionState, TrustLevel } from "../../generated/prisma/enums.js";

export const IMPORT_FORMATS = [
  "disqus",
  "wordpress",
  "ndjson",
  "remark42",
  "commento",
  "isso",
  "github",
  "json",
  "artalk",
  "twikoo",
  "cusdis",
] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];
export const ID_FROM = ["identifier", "url", "path"] as const;
export type IdFrom = (typeof ID_FROM)[number];
export type OnError = "skip" | "stop";

/** What is chosen for an import: the CLI's flags or the POST's query give it, the import job keeps it. */
export interface ImportChoices {
  format: ImportFormat;
  idFrom: IdFrom;
  onError: OnError;
  /** authors' addresses become their readers' (for reply emails, contract section 15); else none is stored */
  keepEmails: boolean;
  /**
   * the site's origin (`https://blog.example`), against which a thread that names its page by path
   * (isso's `uri`, an Artalk `page_key`, a Twikoo `url`, a Cusdis page's slug) gets its page's URL;
   * required for isso (siteOriginOf)
   */
  site: string | null;
}

/**
 * The formats whose threads name their page by path only, the file never saying the site's origin:
 * an import of one needs it. (Artalk, Twikoo and Cusdis files name their pages by URL, or give the
 * origin, mostly: a thread of theirs named by a path only, with no origin from the file or the
 * import, fails the import then: SourceThread.pathNeedsSite.)
 */
export const NEEDS_SITE: ReadonlySet<ImportFormat> = new Set(["isso"]);

/** A site's origin as given (`https://blog.example`, a path and the rest ignored), or null when it is no http(s) URL. */
export function siteOriginOf(text: string): string | null {
  const url = URL.parse(text.trim());
  return url && (url.protocol === "http:" || url.protocol === "https:") && url.hostname ? url.origin : null;
}

/**
 * A thread's page URL: its own, or its path resolved against the site's origin: the import's
 * (`--site`), else the one its file gives (`origin`).
 */
export function threadPageUrl(t: Pick<SourceThread, "url" | "identifier" | "origin">, site: string | null): string | null {
  if (t.url) return t.url;
  const base = site ?? t.origin ?? null;
  if (!base || !isPagePath(t.identifier)) return null;
  return URL.parse(t.identifier, base)?.href ?? null;
}

/** Whether a thread's name is a page's path (`/2024/hello/`; not `//host/…`, which is a URL without its scheme). */
export const isPagePath = (text: string | null | undefined): text is string => !!text?.startsWith("/") && !text.startsWith("//");

/** What an import job keeps of the choices in its `options` (the format has a column of its own). */
export type KeptImportChoices = Omit<ImportChoices, "format">;

/**
 * Where a record starts: `line 12, column 3` (XML), `line 12` (NDJSON, remark42), `line 1, column
 * 1197 (byte 1196)` (JSON), `comments row 7 (id 7)` (isso's database).
 */
export type Position = string;

export interface SourceAuthor {
  id: string;
  name: string;
  avatarUrl?: string | null | undefined;
  /** the address the source gives (lower case, checked by emailOf), kept only with `keepEmails` */
  email?: string | null | undefined;
  /**
   * the source names the author here but describes them in a record of their own, later or
   * earlier in the file (Commento's commenters, the generic JSON's readers): this reader is written
   * only when no such record comes, and the comment shows its reader's name
   */
  provisional?: boolean;
}

export interface SourceThread {
  kind: "thread";
  /** the source's id of the thread (Disqus dsq:id, a WordPress post, our discussion id) */
  key: string;
  /** the discussion id, when the source names one itself (our own export) */
  discussionId?: string;
  identifier: string | null;
  url: string | null;
  /**
   * the site's origin the file itself gives for a thread named by its path (Artalk's `site_urls`):
   * its page is the path on it, unless the import names another (`--site`)
   */
  origin?: string | null;
  /**
   * the thread is named by a path only (`identifier`), and its page is that path on the site: with
   * no origin from the import or the file, the import fails (naming `--site`) and writes nothing
   */
  pathNeedsSite?: boolean;
  title: string | null;
  state?: DiscussionState;
  /** the source marks the thread deleted: neither it nor its comments are imported (they are counted as skipped) */
  deleted?: boolean;
  createdAt: Date | null;
  position: Position;
}

export interface SourcePost {
  kind: "post";
  key: string;
  threadKey: string;
  parentKey: string | null;
  author: SourceAuthor;
  body: string;
  status: CommentStatus;
  pinned: boolean;
  createdAt: Date;
  editedAt: Date | null;
  deletedAt: Date | null;
  /**
   * the author name kept on the comment when it is not its reader's (comments.author_name); by
   * default author.name, null where the comment shows its reader's name (a provisional author's)
   */
  shownName?: string | null;
  /** the votes the source counts for the comment (who voted is not kept) */
  upvotes?: number;
  downvotes?: number;
  /** the reactions the source counts for the comment, by kind (GitHub's) */
  reactionCounts?: Record<string, number> | null;
  /** comments.kind (our own export's); a source's comments are comments */
  commentKind?: CommentKind;
  position: Position;
}

export interface SourceReader extends SourceAuthor {
  kind: "reader";
  createdAt: Date | null;
  /** our own export's: given to a reader the import makes (one already there keeps its own) */
  badge?: string | null;
  trustLevel?: TrustLevel;
  position: Position;
}

/** A reader's vote on a comment (our own export's: who voted is kept). */
export interface SourceVote {
  kind: "vote";
  postKey: string;
  threadKey: string;
  readerId: string;
  value: 1 | -1;
  createdAt: Date;
  position: Position;
}

/** A reader's reaction to a page: to its discussion (our own export's). */
export interface SourcePageReaction {
  kind: "pageReaction";
  threadKey: string;
  readerId: string;
  reaction: string;
  createdAt: Date;
  position: Position;
}

export interface SourceReaction {
  kind: "reaction";
  postKey: string;
  threadKey: string;
  readerId: string;
  reaction: string;
  createdAt: Date;
  position: Position;
}

export interface SourceError {
  kind: "error";
  position: Position;
  message: string;
  /** a file that cannot be read on (not well-formed XML, a missing header): the import stops whatever --on-error says */
  fatal?: boolean;
}

/**
 * A file that cannot be read on, thrown from below a parser (a gzip stream that ends early, a
 * database file that is not whole): the import fails at `position`, as for a fatal SourceError.
 */
export class SourceFailure extends Error {
  constructor(
    readonly position: Position,
    message: string,
  ) {
    super(message);
    this.name = "SourceFailure";
  }
}

/** Our own export's header: a file exported from this tenant keeps its comment ids when read back. */
export interface SourceHeader {
  kind: "header";
  tenantId: string;
}

export type SourceItem =
  SourceThread | SourcePost | SourceReader | SourceReaction | SourceVote | SourcePageReaction | SourceError | SourceHeader;

export const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

/**
 * A discussion id made of any text: kept when it already is one (`[A-Za-z0-9._:-]{1,128}`), else
 * its characters outside that set become `-` (a URL loses its scheme first); one longer than 128
 * keeps 111 characters and a hash of the whole. Null for empty text.
 */
export function discussionIdOf(text: string | null | undefined, isUrl = false): string | null {
  const raw = (text ?? "").trim();
  if (!raw) return null;
  if (DISCUSSION_ID_RE.test(raw)) return raw;
  const base = (isUrl ? raw.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "") : raw).replace(/[^A-Za-z0-9._:-]+/g, "-").replace(/^-+|-+$/g, "");
  if (!base) return `h-${sha256Hex(raw).slice(0, 24)}`;
  return base.length <= 128 ? base : `${base.slice(0, 111)}-${sha256Hex(raw).slice(0, 16)}`;
}

/** A URL's path without its outer slashes (`2024/01/hello`), or null when it is empty or not a URL. */
function pathOf(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).pathname.replace(/^\/+|\/+$/g, "") || null;
  } catch {
    return null;
  }
}

/**
 * The discussion a thread becomes: by its identifier (else its URL), by its URL (else its
 * identifier), or by its URL's path (`https://blog.example/2024/01/hello/` → `2024-01-hello`; else
 * its identifier).
 */
export function threadDiscussionId(t: SourceThread, idFrom: IdFrom): string | null {
  if (t.discussionId) return t.discussionId;
  const byId = () => discussionIdOf(t.identifier);
  const byUrl = () => discussionIdOf(t.url, true);
  if (idFrom === "path") return discussionIdOf(pathOf(t.url)) ?? byId();
  return idFrom === "url" ? (byUrl() ?? byId()) : (byId() ?? byUrl());
}

/** An imported comment's id: the same for the same tenant, source and source id, so a re-run finds it. */
export const importedCommentId = (tenantId: string, source: ImportFormat, key: string) =>
  `cmt_i${sha256Hex(`${tenantId}\u0000${source}\u0000${key}`).slice(0, 24)}`;

/** An author's address as an import may keep it: lower case, one @ and a dot after it, at most 254 characters; else null. */
export function emailOf(text: string | null | undefined): string | null {
  const e = (text ?? "").trim().toLowerCase();
  return e.length <= 254 && /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(e) ? e : null;
}

/**
 * Comment HTML (Disqus messages, WordPress comment_content) as the plain text our bodies hold, in
 * one pass of htmlparser2's tokenizer (linear in the input, whatever it holds): tags are stripped
 * and entities decoded (a no-break space as a plain one); a link is `text (href)`, or `href` when
 * its text is empty or the href itself (one never closed, or closed by the next <a> as browsers
 * do, is its text only); <br> is a newline; </p> a blank line (the whitespace after it dropped); 3+
 * newlines become 2. A tag left unfinished at the very end is dropped, as a browser drops it.
 */
export function htmlToText(html: string): string {
  const parts: string[] = [];
  let link: { href: string; at: number } | null = null;
  let afterParagraph = false;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        afterParagraph = false;
        if (name === "br") parts.push("\n");
        else if (name === "a" && !link && attribs.href !== undefined) link = { href: attribs.href, at: parts.length };
      },
      ontext(text) {
        if (afterParagraph) {
          text = text.replace(/^\s+/, "");
          if (!text) return;
          afterParagraph = false;
        }
        parts.push(text);
      },
      onclosetag(name, isImplied) {
        afterParagraph = false;
        if (name === "p" && !isImplied) {
          parts.push("\n\n");
          afterParagraph = true;
        } else if (name === "a" && link) {
          const { href, at } = link;
          link = null;
          if (isImplied) return;
          const text = parts.splice(at).join("");
          const trimmed = text.trim();
          parts.push(trimmed && trimmed !== href ? `${text} (${href})` : href);
        }
      },
    },
    { decodeEntities: true },
  );
  parser.write(html.replace(/\r\n?/g, "\n"));
  parser.end();
  return parts
    .join("")
    .replaceAll("\u0000", "")
    .replaceAll("\u00a0", " ")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * The dates an import takes: years 1 to 9999, which JavaScript and PostgreSQL both read and write
 * alike (JavaScript's dates reach year 275760, PostgreSQL's timestamps 294276, but neither reads
 * the other's past 9999, and PostgreSQL has no year 0).
 */
export const FIRST_DATE_MS = Date.parse("0001-01-01T00:00:00.000Z");
export const LAST_DATE_MS = Date.parse("9999-12-31T23:59:59.999Z");

/** Whether a date is one an import takes (an invalid Date is not). */
export const inDateRange = (d: Date) => d.getTime() >= FIRST_DATE_MS && d.getTime() <= LAST_DATE_MS;

/**
 * Why a record cannot be imported for its dates: the first of `dates` (named as the source names
 * them) outside years 1 to 9999, shown as `shown` gives it (else as a date), or null. Such a
 * record is a bad record at its position, never a failure of the import.
 */
export function outOfRangeDate(dates: Record<string, Date | null | undefined>, shown: Record<string, unknown> = {}): string | null {
  for (const [field, d] of Object.entries(dates)) {
    if (!d || inDateRange(d)) continue;
    const value = field in shown ? String(shown[field]) : Number.isNaN(d.getTime()) ? "not a date" : d.toISOString();
    return `${field} is ${value}, outside the dates an import takes (years 1 to 9999)`;
  }
  return null;
}

/** `2024-01-02 03:04:05`, `2024-01-02T03:04:05.678`, and Go's `2024-01-02 03:04:05 +0800` (Artalk's): date, time, zone */
const PLAIN_DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)(?: ?([+-])(\d{2}):?(\d{2}))?$/;

/**
 * A date the source wrote (ISO 8601; WordPress's and SQLite's `2024-01-02 03:04:05`; Go's
 * `2024-01-02 03:04:05 +0800`); a date and time without a zone is UTC, whatever the server's own
 * zone. Null when it is not one.
 */
export function parseSourceDate(text: string | null | undefined): Date | null {
  const t = (text ?? "").trim();
  if (!t || t.startsWith("0000-00-00")) return null;
  const plain = PLAIN_DATE_TIME.exec(t);
  const normalized = plain ? `${plain[1]}T${plain[2]!.slice(0, 12)}${plain[3] ? `${plain[3]}${plain[4]}:${plain[5]}` : "Z"}` : t;
  const d = new Date(normalized);
  return Number.isNaN(d.getTime()) ? null : d;
}
