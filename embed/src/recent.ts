// <engagement-recent [limit] [discussion-ids] [publishable-key] [api-base]> (contract section 19): the
// tenant's latest comments, for a sidebar or a home page. One `GET /api/v1/comments/recent` per
// element, a list of "Ann on <the discussion's title>", a short excerpt of each comment's text and
// how long ago, each linking to the comment's permalink (its discussion's page plus `#comment-<id>`,
// where the thread element opens at it). Built by esbuild into dist/embed/v1/recent.js, served at
// /embed/v1/recent.js; as count.js: an open shadow root styled by a constructable stylesheet (a host
// page's `style-src 'self'` is enough), the key once on the script tag (`data-publishable-key`) or on
// the element, `api-base` defaulting to where the script came from. Text only reaches the page as
// text nodes: the excerpt is the text of the comment's sanitized bodyHtml, read by an inert parser.

import { loadedFrom } from "./loaded-from.js";

const { origin: scriptOrigin, publishableKey: scriptKey } = loadedFrom("recent.js");

const sheet = new CSSStyleSheet();
sheet.replaceSync(
  ":host{display:block;font:inherit;color:inherit}:host([hidden]){display:none}" +
    "ol{list-style:none;margin:0;padding:0}li{margin:0 0 .75em}a{color:inherit}" +
    "[part=excerpt]{margin:.15em 0 0;opacity:.85;overflow-wrap:anywhere}[part=when]{opacity:.7;font-size:.9em}",
);

/** what the element's answer holds of each comment */
interface RecentItem {
  id: string;
  bodyHtml: string;
  createdAt: string;
  author: { name: string };
  discussionId: string;
  discussionTitle: string | null;
  discussionUrl: string | null;
}

const EXCERPT = 140;
const parser = new DOMParser();

/** The text of sanitized HTML, on one line, at most EXCERPT characters. */
function excerptOf(html: string): string {
  const text = (parser.parseFromString(html, "text/html").body.textContent ?? "").replace(/\s+/g, " ").trim();
  return text.length <= EXCERPT ? text : `${text.slice(0, EXCERPT - 1).trimEnd()}…`;
}

/** The comment's permalink, when its discussion has an http(s) page. */
function permalinkOf(item: RecentItem): string | null {
  if (!item.discussionUrl || !/^https?:\/\//i.test(item.discussionUrl)) return null;
  return `${item.discussionUrl.split("#")[0]}#comment-${encodeURIComponent(item.id)}`;
}

function ago(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  const rtf = new Intl.RelativeTimeFormat(document.documentElement.lang || undefined, { numeric: "auto" });
  if (s < 60) return rtf.format(0, "minute");
  if (s < 3600) return rtf.format(-Math.floor(s / 60), "minute");
  if (s < 86_400) return rtf.format(-Math.floor(s / 3600), "hour");
  return rtf.format(-Math.floor(s / 86_400), "day");
}

export class EngagementRecent extends HTMLElement {
  static observedAttributes = ["limit", "discussion-ids", "publishable-key", "api-base"];
  private readonly list: HTMLOListElement;
  private requested = 0;

  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    root.adoptedStyleSheets = [sheet];
    this.list = document.createElement("ol");
    this.list.setAttribute("part", "list");
    this.list.setAttribute("aria-label", this.getAttribute("label") ?? "Recent comments");
    root.append(this.list);
  }

  connectedCallback(): void {
    void this.load();
  }

  attributeChangedCallback(_name: string, old: string | null, value: string | null): void {
    if (old !== value && this.isConnected) void this.load();
  }

  private async load(): Promise<void> {
    const key = this.getAttribute("publishable-key") ?? scriptKey;
    if (!key) return;
    const base = (this.getAttribute("api-base") ?? scriptOrigin).replace(/\/+$/, "");
    const limit = Math.min(100, Math.max(1, Number(this.getAttribute("limit")) || 5));
    const ids = this.getAttribute("discussion-ids");
    const url = `${base}/api/v1/comments/recent?limit=${limit}${ids ? `&discussionIds=${encodeURIComponent(ids)}` : ""}`;
    const n = ++this.requested;
    try {
      const res = await fetch(url, { headers: { "X-API-Key": key }, credentials: "omit" });
      if (!res.ok) throw new Error(`recent: HTTP ${res.status}`);
      const { items } = (await res.json()) as { items: RecentItem[] };
      if (n === this.requested) this.render(items);
    } catch {
      if (n === this.requested) this.setAttribute("unavailable", "");
    }
  }

  private render(items: RecentItem[]): void {
    const now = Date.now();
    this.removeAttribute("unavailable");
    this.list.replaceChildren(
      ...items.map((item) => {
        const li = document.createElement("li");
        li.setAttribute("part", "item");
        const head = document.createElement("div");
        const who = document.createElement("strong");
        who.setAttribute("part", "author");
        who.textContent = item.author.name;
        const where = item.discussionTitle ?? item.discussionId;
        const href = permalinkOf(item);
        const target = document.createElement(href ? "a" : "span");
        target.setAttribute("part", "discussion");
        target.textContent = where;
        if (href) (target as HTMLAnchorElement).href = href;
        const when = document.createElement("span");
        when.setAttribute("part", "when");
        when.textContent = ` · ${ago(item.createdAt, now)}`;
        head.append(who, " on ", target, when);
        const excerpt = document.createElement("p");
        excerpt.setAttribute("part", "excerpt");
        excerpt.textContent = excerptOf(item.bodyHtml);
        li.append(head, excerpt);
        return li;
      }),
    );
    this.setAttribute("count", String(items.length));
  }
}

if (!customElements.get("engagement-recent")) customElements.define("engagement-recent", EngagementRecent);
