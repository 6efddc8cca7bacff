// What a webmention's source page says (contract section 24), read from its HTML: whether it links to
// the target (an `href` or `src` that resolves, against the page's address, to the target's URL), and
// its microformats2 `h-entry` — author name and photo, content, published — parsed by
// microformats-parser (the microformats2 parsing specification; parse5 underneath). The page is at
// most the verifier's byte bound (verify.ts); both readers are linear in it. Its elements may nest
// at most MAX_SOURCE_DEPTH deep (microformats-parser walks the tree recursively: a page nested some
// thousands deep overflows the stack), counted by the link scan before the h-entry is read; a page
// deeper than that, or an h-entry published outside the years 1–9999, is `UnreadableSource`: a
// permanent refusal, never retried.
import { Parser } from "htmlparser2";
import { mf2 } from "microformats-parser";
import { isHttpUrl } from "../../../lib/http-url.js";

/** How deep a source page's elements may nest (real pages nest some tens deep). */
export const MAX_SOURCE_DEPTH = 256;
/** The range of an h-entry's `published` kept (the database's timestamps go back to 4713 BC only). */
const EARLIEST_PUBLISHED = Date.parse("0001-01-01T00:00:00.000Z");
const LATEST_PUBLISHED = Date.parse("9999-12-31T23:59:59.999Z");

/** A source page this service will not read (nested too deep, a date out of range): refused for good. */
export class UnreadableSource extends Error {}

/** The attributes whose URL counts as a link to the target (the Webmention spec: a link, an embed). */
const LINK_ATTRIBUTES: Record<string, string> = {
  a: "href",
  area: "href",
  link: "href",
  img: "src",
  video: "src",
  audio: "src",
  source: "src",
};

/** A URL as the URL standard prints it, without its fragment; null when it does not parse. */
export function comparableUrl(raw: string, base?: string): string | null {
  try {
    const u = new URL(raw.trim(), base);
    u.hash = "";
    return u.href;
  } catch {
    return null;
  }
}

/**
 * Whether the page links to `target` (its fragment ignored). Reads the whole page, counting how deep
 * its elements nest: deeper than MAX_SOURCE_DEPTH is UnreadableSource.
 */
export function linksTo(html: string, pageUrl: string, target: string): boolean {
  const wanted = comparableUrl(target);
  let base = pageUrl;
  let found = false;
  let depth = 0;
  let deepest = 0;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        deepest = Math.max(deepest, ++depth);
        if (found || wanted === null) return;
        if (name === "base" && attrs.href) base = comparableUrl(attrs.href, pageUrl) ?? base;
        const attr = LINK_ATTRIBUTES[name];
        const value = attr ? attrs[attr] : undefined;
        if (value !== undefined && comparableUrl(value, base) === wanted) found = true;
      },
      onclosetag() {
        depth--;
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  if (deepest > MAX_SOURCE_DEPTH) throw new UnreadableSource(`the source's elements nest deeper than ${MAX_SOURCE_DEPTH}`);
  return found;
}

/** The mention a source's h-entry makes. */
export interface Mention {
  authorName: string | null;
  authorPhoto: string | null;
  /** the content's text (its `value`) */
  text: string | null;
  /** the content's HTML, as the source has it (sanitized by the caller) */
  html: string | null;
  published: Date | null;
}

type Item = { type?: string[]; properties?: Record<string, unknown[]>; children?: Item[]; value?: unknown; html?: unknown };

const isItem = (v: unknown): v is Item => typeof v === "object" && v !== null && Array.isArray((v as Item).type);

/** The h-entries of the page, outer first (inside an h-feed too), at most `limit`. */
function entries(items: readonly unknown[], out: Item[] = [], depth = 0): Item[] {
  for (const item of items) {
    if (!isItem(item) || out.length >= 50 || depth > 8) continue;
    if (item.type?.includes("h-entry")) out.push(item);
    if (Array.isArray(item.children)) entries(item.children, out, depth + 1);
  }
  return out;
}

const first = (item: Item | undefined, name: string): unknown => item?.properties?.[name]?.[0];

const text = (v: unknown): string | null => {
  if (typeof v === "string") return v.trim() || null;
  if (isItem(v) && typeof v.value === "string") return v.value.trim() || null;
  if (typeof v === "object" && v !== null && typeof (v as { value?: unknown }).value === "string") {
    return ((v as { value: string }).value.trim() || null) as string | null;
  }
  return null;
};

const url = (v: unknown): string | null => {
  const u = typeof v === "string" ? v : typeof v === "object" && v !== null ? (v as { value?: unknown }).value : null;
  return typeof u === "string" && u.length <= 2048 && isHttpUrl(u) ? u : null;
};

/** Whether an entry names the target in one of its properties (in-reply-to, like-of, a link in its content…). */
function mentionsTarget(entry: Item, target: string): boolean {
  const wanted = comparableUrl(target);
  const values = Object.values(entry.properties ?? {}).flat();
  return values.some((v) => {
    const u =
      typeof v === "string" ? v : isItem(v) ? (first(v, "url") ?? v.value) : (v as { value?: unknown; html?: unknown } | null)?.html;
    if (typeof u !== "string") return false;
    return comparableUrl(u) === wanted || (wanted !== null && u.includes(wanted));
  });
}

/** A parse of a page linksTo has read (its depth bounded); a stack overflow all the same is UnreadableSource. */
function parse(html: string, pageUrl: string): ReturnType<typeof mf2> {
  try {
    return mf2(html, { baseUrl: pageUrl });
  } catch (err) {
    if (err instanceof RangeError) throw new UnreadableSource(`the source's microformats could not be read (${err.message})`);
    throw err;
  }
}

/**
 * The page's h-entry that mentions `target` (else its first one) as a mention; null when it has none.
 * A `published` that does not parse is none; one outside the years 1–9999 is UnreadableSource.
 */
export function readMention(html: string, pageUrl: string, target: string): Mention | null {
  const parsed = parse(html, pageUrl);
  const all = entries(parsed.items);
  const entry = all.find((e) => mentionsTarget(e, target)) ?? all[0];
  if (!entry) return null;
  const author = first(entry, "author");
  // an author given as a URL or a name alone; else the page's own h-card
  const card = isItem(author) ? author : (parsed.items.find((i) => isItem(i) && i.type?.includes("h-card")) as Item | undefined);
  const authorName = (isItem(author) ? text(first(author, "name")) : text(author)) ?? text(first(card, "name"));
  const authorPhoto = url(first(isItem(author) ? author : card, "photo"));
  const content = first(entry, "content");
  const html_ =
    typeof content === "object" && content !== null && typeof (content as { html?: unknown }).html === "string"
      ? (content as { html: string }).html
      : null;
  const published = text(first(entry, "published"));
  const when = published ? new Date(published) : null;
  if (when && (when.getTime() < EARLIEST_PUBLISHED || when.getTime() > LATEST_PUBLISHED)) {
    throw new UnreadableSource(`the source's h-entry was published out of range (${String(published).slice(0, 40)})`);
  }
  return {
    authorName,
    authorPhoto,
    text: text(content) ?? text(first(entry, "summary")) ?? text(first(entry, "name")),
    html: html_,
    published: when && !Number.isNaN(when.getTime()) ? when : null,
  };
}
