// A comment body rendered to the HTML a page may show (contract section 18): markdown-it parses it
// as CommonMark with GitHub's strikethrough and autolinks (raw HTML is shown as text), then
// xss (js-xss) keeps only the allow-list below, whatever the parser produced. The two are separate
// on purpose: the parser's own link check (`validateLink`, http/https/mailto only) decides what
// becomes a link, and the sanitizer would still drop any tag, attribute or URL scheme outside the
// list if a parser bug let one through. With `formatting.markdown: false` the body is plain text:
// escaped by markdown-it's own escaper, its line breaks kept as <br />. Rendering is linear in the
// body (the body is at most maxBodyLength characters; markdown-it nests at most MAX_NESTING levels).
import markdownIt, { type MarkdownIt } from "markdown-it";
import xss from "xss";
import type * as Xss from "xss";
import { decodeHTML, decodeHTMLAttribute, escapeAttribute } from "entities";
import type { Settings } from "../tenancy/settings/tree.js";

// xss is CommonJS, and Node's ESM loader names only some of its exports: the rest are read off the module
const { FilterXSS, escapeHtml: escapeTextXss, parseAttr } = xss as unknown as typeof Xss;
type FilterXSS = InstanceType<typeof FilterXSS>;

/** The tenant's `formatting` settings: Markdown or plain text, images or not. */
export type FormattingOptions = Settings["formatting"];

/** A rendered body: its HTML, how many links it shows, its text, and where its links go. */
export interface RenderedBody {
  html: string;
  links: number;
  /** what a reader reads: the text of the HTML, entities decoded, a line break between blocks */
  text: string;
  /** each link's href, in order (word rules read them beside the text: a link's target is not hidden from them) */
  hrefs: string[];
}

/** Block quotes and lists inside each other deeper than this are shown as text. */
export const MAX_NESTING = 20;

/** The longest www. autolink looked for (a longer one ends there). */
const MAX_LINK = 2_048;

/** The URL schemes a link may have; an image's source must be https. */
export const LINK_SCHEMES = ["http", "https", "mailto"] as const;
export const IMAGE_SCHEMES = ["https"] as const;

/** What every link gets: no referrer, no ranking credit, no window.opener for the page it opens. */
export const LINK_REL = "nofollow ugc noopener noreferrer";

/** The elements a rendered body may hold (img only with `formatting.images`). */
export const ALLOWED_TAGS = ["p", "br", "em", "strong", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li", "a"] as const;

function schemeAllowed(url: string, schemes: readonly string[]): boolean {
  let protocol: string;
  try {
    protocol = new URL(url).protocol; // parsed once: a relative URL has no base here, so it throws (not a link)
  } catch {
    return false;
  }
  return schemes.includes(protocol.slice(0, -1));
}

function parser(images: boolean): MarkdownIt {
  const md = markdownIt("commonmark", { html: false, linkify: true, breaks: false, typographer: false, maxNesting: MAX_NESTING });
  md.enable(["strikethrough", "linkify"]);
  // headings and rules are not in the contract's list: their source is shown as a paragraph's text
  md.disable(["heading", "lheading", "hr"]);
  // GitHub's autolinks: http(s)://… and emails (linkify-it's own), and www.… (judged as http://www.… is)
  md.linkify.add("www.", {
    validate: (text, pos, self) => Math.max(0, self.testSchemaAt(`//www.${text.slice(pos, pos + MAX_LINK)}`, "http:", 0) - 6),
    normalize: (match) => {
      match.url = `http://${match.url}`;
    },
  });
  // markdown-it hands every link, autolink and image source here, percent-encoded; what fails stays source text
  md.validateLink = (url) => schemeAllowed(url, LINK_SCHEMES);
  if (images) {
    // an image whose source is not https is shown as its alt text
    const image = md.renderer.rules.image!;
    md.renderer.rules.image = (tokens, idx, options, env, self) =>
      schemeAllowed(String(tokens[idx]!.attrGet("src") ?? ""), IMAGE_SCHEMES)
        ? image(tokens, idx, options, env, self)
        : md.utils.escapeHtml(self.renderInlineAsText(tokens[idx]!.children ?? [], options, env));
  } else md.disable("image"); // ![alt](url) is then "!" and a link
  return md;
}

/** Elements dropped with everything inside them (their content is code or a form's, never text to show). */
const DROPPED_WITH_CONTENT = [
  "script",
  "style",
  "textarea",
  "option",
  "noscript",
  "template",
  "iframe",
  "noembed",
  "noframes",
  "xmp",
  "title",
];

/**
 * The attributes of a start tag as the sanitizer's own tokenizer reads them (xss's parseAttr), each
 * value decoded as a browser decodes an attribute (entities); the first of each name, as a browser keeps.
 */
function attributesOf(tagHtml: string): Map<string, string> {
  const found = new Map<string, string>();
  const space = tagHtml.search(/\s/);
  if (space === -1) return found;
  const text = tagHtml.slice(space + 1, -1).trim();
  parseAttr(text.endsWith("/") ? text.slice(0, -1) : text, (name, value) => {
    if (!found.has(name)) found.set(name, decodeHTMLAttribute(value));
    return "";
  });
  return found;
}

/** One attribute written back: the value the checks read, escaped for a double-quoted attribute (entities' escapeAttribute). */
const attribute = (name: string, value: string | undefined): string => (value === undefined ? "" : ` ${name}="${escapeAttribute(value)}"`);

/**
 * A kept element's start tag with only its allowed attributes — `a`: href, title, rel; `img`: src,
 * alt, title, loading, referrerpolicy; `ol`: start; no other element has any, and no class, style or
 * event handler is ever written. A link's href only with an allowed scheme (read as a browser
 * resolves it: WHATWG URL parsing drops the tabs, newlines and padding that hide a scheme), always
 * with its rel; an image only with an https source (else nothing), lazily and without a referrer; a
 * list's start only as a number. Undefined for the elements with no attributes at all: xss writes
 * those itself, attributes dropped.
 */
function startTag(tag: string, tagHtml: string, images: boolean, into: Reading | undefined): string | undefined {
  if (tag === "a") {
    const a = attributesOf(tagHtml);
    const href = a.get("href");
    const link = href !== undefined && schemeAllowed(href, LINK_SCHEMES) ? href : undefined;
    if (link !== undefined) into?.onLink(link);
    return `<a${attribute("href", link)}${attribute("title", a.get("title"))} rel="${LINK_REL}">`;
  }
  if (tag === "img") {
    if (!images) return "";
    const a = attributesOf(tagHtml);
    const src = a.get("src");
    if (src === undefined || !schemeAllowed(src, IMAGE_SCHEMES)) return "";
    into?.onAlt(a.get("alt") ?? "");
    return `<img${attribute("src", src)}${attribute("alt", a.get("alt"))}${attribute("title", a.get("title"))} loading="lazy" referrerpolicy="no-referrer" />`;
  }
  if (tag === "ol") {
    const start = Number(attributesOf(tagHtml).get("start"));
    return `<ol${Number.isSafeInteger(start) && start >= 0 ? attribute("start", String(start)) : ""}>`;
  }
  if (tag === "br") into?.onBreak();
  return undefined;
}

/** The elements a rendered body may hold, each with no attribute of its own (a, img and ol are written by startTag). */
function allowList(images: boolean): Record<string, string[]> {
  return Object.fromEntries((images ? [...ALLOWED_TAGS, "img"] : [...ALLOWED_TAGS]).map((tag) => [tag, []]));
}

let reading: Reading | undefined;

/** The sanitizer of one image setting: xss (js-xss) with the allow-list, made once. */
function sanitizer(images: boolean): FilterXSS {
  return new FilterXSS({
    whiteList: allowList(images),
    stripIgnoreTag: true, // an element outside the list goes, its text stays
    stripIgnoreTagBody: DROPPED_WITH_CONTENT,
    allowCommentTag: false,
    css: false,
    onTag: (tag, html, { isClosing, isWhite }) => {
      if (!isWhite) return undefined;
      if (isClosing) {
        reading?.onClose(tag);
        return undefined;
      }
      return startTag(tag, html, images, reading);
    },
    escapeHtml: (text) => {
      reading?.onText(text);
      return escapeTextXss(text);
    },
  });
}

interface Renderer {
  md: MarkdownIt;
  sanitizer: FilterXSS;
}

/** The two renderers (images on and off), each made once when first used. */
const renderers = new Map<boolean, Renderer>();

function rendererFor(images: boolean): Renderer {
  let r = renderers.get(images);
  if (!r) renderers.set(images, (r = { md: parser(images), sanitizer: sanitizer(images) }));
  return r;
}

/** The elements after which the text goes on on a new line, so words of two blocks never join. */
const BLOCKS = new Set(["p", "pre", "blockquote", "ul", "ol", "li"]);

/**
 * What one sanitizer pass reads of its own output, through its hooks: the text between tags as it
 * is written (escaped), each kept link's href and each kept image's alt as their elements are
 * written, and the end of each block. So the text and links are those of the sanitized HTML, read
 * without parsing it a second time. xss runs synchronously: one reading is in progress at a time,
 * and `sanitizeAndRead` leaves none behind.
 */
class Reading {
  text = "";
  links = 0;
  hrefs: string[] = [];
  onText(escaped: string): void {
    const t = escaped.includes("&") ? decodeHTML(escaped) : escaped;
    // the line break the HTML has after a block or a <br> is the one already counted
    this.text += this.text.endsWith("\n") ? t.replace(/^\n+/, "") : t;
  }
  onLink(href: string): void {
    this.links++;
    this.hrefs.push(href);
  }
  onAlt(alt: string): void {
    this.text += alt;
  }
  onBreak(): void {
    this.text += "\n";
  }
  onClose(tag: string): void {
    if (BLOCKS.has(tag) && !this.text.endsWith("\n")) this.text += "\n";
  }
}

function sanitizeAndRead(html: string, images: boolean, into?: Reading): string {
  reading = into;
  try {
    return rendererFor(images).sanitizer.process(html).trim();
  } finally {
    reading = undefined;
  }
}

/** Sanitized HTML: only the allow-list's elements, attributes and URL schemes (the renderer's last step). */
export function sanitizeBodyHtml(html: string, images: boolean): string {
  return sanitizeAndRead(html, images);
}

/**
 * A body of one line of words and the punctuation no rule of either renderer reads: letters and
 * digits (a letter first, so never a list's number), spaces between them (none at either end),
 * `, ; ? ! ' "` and `( )`, and `.` or `:` only before a space or at the end (so never a link, an
 * address, a scheme or an entity). Both renderers make it one paragraph of the same text, `"`
 * escaped, no link: what `renderBody` answers without running them. Most comments are this.
 */
const PLAIN_LINE = /^\p{L}(?:[\p{L}\p{M}\p{N},;?!'"()]| (?=[^ ])|[.:](?= [^ ]|$))*$/u;

/** Renders a body as the tenant's formatting settings say: sanitized HTML, its link count and its text. */
export function renderBody(body: string, formatting: FormattingOptions): RenderedBody {
  if (PLAIN_LINE.test(body)) return { html: `<p>${body.replaceAll('"', "&quot;")}</p>`, text: body, links: 0, hrefs: [] };
  return renderThroughParser(body, formatting);
}

/** `renderBody` without the plain line's shortcut: the parser (or the plain-text escaper) and the sanitizer, always. */
export function renderThroughParser(body: string, formatting: FormattingOptions): RenderedBody {
  const r = rendererFor(formatting.markdown && formatting.images);
  const raw = formatting.markdown
    ? r.md.render(body)
    : `<p>${body
        .split(/\r\n|\r|\n/)
        .map((line) => r.md.utils.escapeHtml(line))
        .join("<br />\n")}</p>`;
  const read = new Reading();
  const html = sanitizeAndRead(raw, formatting.markdown && formatting.images, read);
  return { html, text: read.text.trim(), links: read.links, hrefs: read.hrefs };
}
