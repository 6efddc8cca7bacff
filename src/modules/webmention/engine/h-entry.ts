// What a webmention's source page says (contract section 24), read from its HTML: whether it links to
// the target (an `href` or `src` that resolves, against the page's address, to the target's URL), and
// its microformats2 `h-entry` — author name and photo, content, published — parsed by
// microformats-parser (the microformats2 parsing specification; parse5 underneath). The page is at
// most the verifier's byte bound (verify.ts); both readers are linear in it.
import { Parser } from "htmlparser2";
import { mf2 } from "microformats-parser";
import { isHttpUrl } from "../../../lib/http-url.js";

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

/** Whether the page links to `target` (its fragment ignored). */
export function linksTo(html: string, pageUrl: string, target: string): boolean {
  const wanted = comparableUrl(target);
  if (wanted === null) return false;
  let base = pageUrl;
  let found = false;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (found) return;
        if (name === "base" && attrs.href) base = comparableUrl(attrs.href, pageUrl) ?? base;
        const attr = LINK_ATTRIBUTES[name];
        const value = attr ? attrs[attr] : undefined;
        if (value !== undefined && comparableUrl(value, base) === wanted) found = true;
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
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

/** The page's h-entry that mentions `target` (else its first one) as a mention; null when it has none. */
export function readMention(html: string, pageUrl: string, target: string): Mention | null {
  const parsed = mf2(html, { baseUrl: pageUrl });
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
  return {
    authorName,
    authorPhoto,
    text: text(content) ?? text(first(entry, "summary")) ?? text(first(entry, "name")),
    html: html_,
    published: when && !Number.isNaN(when.getTime()) ? when : null,
  };
}
