// A comment body rendered to the HTML a page may show (contract section 18): markdown-it parses it
// as CommonMark with GitHub's strikethrough and autolinks (raw HTML is shown as text), then
// sanitize-html keeps only the allow-list below, whatever the parser produced. The two are separate
// on purpose: the parser's own link check (`validateLink`, http/https/mailto only) decides what
// becomes a link, and the sanitizer would still drop any tag, attribute or URL scheme outside the
// list if a parser bug let one through. With `formatting.markdown: false` the body is plain text:
// escaped by markdown-it's own escaper, its line breaks kept as <br>. Rendering is linear in the
// body (the body is at most maxBodyLength characters; markdown-it nests at most MAX_NESTING levels).
import markdownIt, { type MarkdownIt } from "markdown-it";
import sanitizeHtml from "sanitize-html";
import { decodeHTML } from "entities";
import type { Settings } from "../tenancy/settings-model.js";

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

/** Each element's attributes: nothing else, no class, style or event handler anywhere. */
export const ALLOWED_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ["href", "title", "rel"],
  ol: ["start"],
  img: ["src", "alt", "title", "loading", "referrerpolicy"],
};

function schemeAllowed(url: string, schemes: readonly string[]): boolean {
  if (!URL.canParse(url)) return false; // a relative URL has no base here: not a link
  return schemes.includes(new URL(url).protocol.slice(0, -1));
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

function sanitizerOptions(images: boolean): sanitizeHtml.IOptions {
  return {
    allowedTags: images ? [...ALLOWED_TAGS, "img"] : [...ALLOWED_TAGS],
    allowedAttributes: Object.fromEntries(Object.entries(ALLOWED_ATTRIBUTES).map(([tag, names]) => [tag, [...names]])),
    allowedSchemes: [...LINK_SCHEMES],
    allowedSchemesByTag: { img: [...IMAGE_SCHEMES] },
    allowedSchemesAppliedToAttributes: ["href", "src"],
    allowProtocolRelative: false,
    allowedStyles: {},
    disallowedTagsMode: "discard",
    transformTags: {
      a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: LINK_REL } }),
      img: (tagName, attribs) => ({ tagName, attribs: { ...attribs, loading: "lazy", referrerpolicy: "no-referrer" } }),
      ol: (tagName, attribs) => {
        const start = Number(attribs.start);
        const kept: sanitizeHtml.Attributes = {};
        if (Number.isSafeInteger(start) && start >= 0) kept.start = String(start);
        return { tagName, attribs: kept };
      },
    },
    textFilter: (escaped) => {
      reading?.onText(escaped);
      return escaped;
    },
    exclusiveFilter: (frame) => {
      // an image whose source was refused (not https) is nothing to show
      if (frame.tag === "img" && !frame.attribs.src) return true;
      reading?.onClose(frame.tag, frame.attribs);
      return false;
    },
  };
}

interface Renderer {
  md: MarkdownIt;
  options: sanitizeHtml.IOptions;
}

/** The two renderers (images on and off), each made once when first used. */
const renderers = new Map<boolean, Renderer>();

function rendererFor(images: boolean): Renderer {
  let r = renderers.get(images);
  if (!r) renderers.set(images, (r = { md: parser(images), options: sanitizerOptions(images) }));
  return r;
}

/** The elements after which the text goes on on a new line, so words of two blocks never join. */
const BLOCKS = new Set(["p", "br", "pre", "blockquote", "ul", "ol", "li"]);

/**
 * What one sanitize-html pass reads of its own output, through its hooks: `textFilter` sees each
 * text node it writes (escaped, as written), `exclusiveFilter` each element it keeps as the element
 * closes, with the attributes it kept. So the text and links are those of the sanitized HTML, read
 * without parsing it a second time. sanitize-html runs synchronously: one reading is in progress at
 * a time, and `sanitizeBodyHtml` leaves none behind.
 */
class Reading {
  text = "";
  links = 0;
  hrefs: string[] = [];
  onText(escaped: string): void {
    const t = decodeHTML(escaped);
    // the line break the HTML has after a block or a <br> is the one already counted
    this.text += this.text.endsWith("\n") ? t.replace(/^\n+/, "") : t;
  }
  onClose(tag: string, attribs: Readonly<Record<string, string>>): void {
    if (tag === "a" && attribs.href) {
      this.links++;
      this.hrefs.push(attribs.href);
    }
    if (tag === "img" && attribs.alt) this.text += attribs.alt;
    if (tag === "br" || (BLOCKS.has(tag) && !this.text.endsWith("\n"))) this.text += "\n";
  }
}

let reading: Reading | undefined;

function sanitizeAndRead(html: string, images: boolean, into?: Reading): string {
  reading = into;
  try {
    return sanitizeHtml(html, rendererFor(images).options).trim();
  } finally {
    reading = undefined;
  }
}

/** Sanitized HTML: only the allow-list's elements, attributes and URL schemes (the renderer's last step). */
export function sanitizeBodyHtml(html: string, images: boolean): string {
  return sanitizeAndRead(html, images);
}

/** Renders a body as the tenant's formatting settings say: sanitized HTML, its link count and its text. */
export function renderBody(body: string, formatting: FormattingOptions): RenderedBody {
  const r = rendererFor(formatting.markdown && formatting.images);
  const raw = formatting.markdown
    ? r.md.render(body)
    : `<p>${body
        .split(/\r\n|\r|\n/)
        .map((line) => r.md.utils.escapeHtml(line))
        .join("<br>\n")}</p>`;
  const read = new Reading();
  const html = sanitizeAndRead(raw, formatting.markdown && formatting.images, read);
  return { html, text: read.text.trim(), links: read.links, hrefs: read.hrefs };
}
