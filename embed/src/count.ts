// <engagement-count discussion-id [publishable-key] [api-base]> (contract section 14): "12 comments"
// for any discussion on any page. Every count element on the page is answered by one
// `GET /api/v1/discussions/counts?ids=…` per 100 ids (per service and key), made once the elements
// that connected in the same task are known; elements added later are batched the same way.
// Built by esbuild into dist/embed/v1/count.js (`npm run build:embed`), served by the service at
// /embed/v1/count.js (src/http/embed-static.ts). It renders into an open shadow root styled by a
// constructable stylesheet, so a host page with `style-src 'self'` and no 'unsafe-inline' works.
// The key may sit once on the script tag (`data-publishable-key`); `api-base` defaults to the origin
// the script was loaded from. On a page with an <engagement-thread>, the counts of its discussion
// follow the thread's (its `engagement:count` event, embed/src/thread.ts) without asking again.

import { loadedFrom } from "./loaded-from.js";

const { origin: scriptOrigin, publishableKey: scriptKey } = loadedFrom("count.js");

/** at most this many ids per request (the route's limit) */
const MAX_IDS = 100;

const sheet = new CSSStyleSheet();
sheet.replaceSync(":host{display:inline}:host([hidden]){display:none}");

const EN = { one: "{n} comment", other: "{n} comments", unavailable: "comments" };

interface Pending {
  base: string;
  key: string;
  elements: Set<EngagementCount>;
}

let queue = new Map<string, Pending>();
let scheduled = false;

function enqueue(el: EngagementCount, base: string, key: string): void {
  const group = `${base}\n${key}`;
  let pending = queue.get(group);
  if (!pending) queue.set(group, (pending = { base, key, elements: new Set() }));
  pending.elements.add(el);
  if (!scheduled) {
    scheduled = true;
    // the elements of one parse or one render connect in one task: ask once they all have
    setTimeout(flush, 0);
  }
}

function flush(): void {
  const groups = [...queue.values()];
  queue = new Map();
  scheduled = false;
  for (const { base, key, elements } of groups) {
    const byId = new Map<string, EngagementCount[]>();
    for (const el of elements) {
      const id = el.discussionId;
      if (!id) continue;
      const list = byId.get(id);
      if (list) list.push(el);
      else byId.set(id, [el]);
    }
    const ids = [...byId.keys()];
    for (let i = 0; i < ids.length; i += MAX_IDS) {
      const chunk = ids.slice(i, i + MAX_IDS);
      void fetchCounts(base, key, chunk).then(
        (counts) => {
          for (const id of chunk) for (const el of byId.get(id) ?? []) el.show(counts[id] ?? 0);
        },
        () => {
          for (const id of chunk) for (const el of byId.get(id) ?? []) el.show(null);
        },
      );
    }
  }
}

async function fetchCounts(base: string, key: string, ids: string[]): Promise<Record<string, number>> {
  const url = `${base}/api/v1/discussions/counts?ids=${ids.map(encodeURIComponent).join(",")}`;
  const res = await fetch(url, { headers: { "X-API-Key": key }, credentials: "omit" });
  if (!res.ok) throw new Error(`counts: HTTP ${res.status}`);
  return ((await res.json()) as { counts: Record<string, number> }).counts;
}

/** What <engagement-thread> tells the page when the count of the comments it shows changes. */
interface CountChange {
  discussionId: string;
  count: number;
  apiBase: string;
}

function followThreads(): void {
  document.addEventListener("engagement:count", (e) => {
    const { discussionId, count, apiBase } = (e as CustomEvent<CountChange>).detail ?? {};
    if (typeof discussionId !== "string" || typeof count !== "number") return;
    for (const el of document.querySelectorAll("engagement-count")) {
      if (el instanceof EngagementCount && el.discussionId === discussionId && el.base === apiBase) el.follow(count);
    }
  });
}

export class EngagementCount extends HTMLElement {
  static observedAttributes = ["discussion-id", "publishable-key", "api-base"];
  private readonly out: HTMLSpanElement;
  /** a thread on the page tells this discussion's count: a later answer of the counts route is older */
  private following = false;

  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    root.adoptedStyleSheets = [sheet];
    this.out = document.createElement("span");
    this.out.setAttribute("part", "count");
    root.append(this.out);
  }

  get discussionId(): string | null {
    return this.getAttribute("discussion-id");
  }

  connectedCallback(): void {
    this.request();
  }

  attributeChangedCallback(_name: string, old: string | null, value: string | null): void {
    if (old !== value && this.isConnected) this.request();
  }

  /** the service it asks: `api-base`, else where count.js came from */
  get base(): string {
    return (this.getAttribute("api-base") ?? scriptOrigin).replace(/\/+$/, "");
  }

  private request(): void {
    this.following = false;
    const key = this.getAttribute("publishable-key") ?? scriptKey;
    if (!this.discussionId || !key) return;
    enqueue(this, this.base, key);
  }

  /** the count a thread on the page shows for this discussion */
  follow(n: number): void {
    this.following = true;
    this.render(n);
  }

  /** the count, or null when it could not be read (the element then says just "comments") */
  show(n: number | null): void {
    if (!this.following) this.render(n);
  }

  private render(n: number | null): void {
    const label = (name: "one" | "other") => this.getAttribute(`label-${name}`) ?? EN[name];
    const text =
      n === null ? (this.getAttribute("label-unavailable") ?? EN.unavailable) : label(n === 1 ? "one" : "other").replace("{n}", String(n));
    this.out.textContent = text;
    if (n !== null) this.setAttribute("count", String(n));
  }
}

if (!customElements.get("engagement-count")) {
  customElements.define("engagement-count", EngagementCount);
  followThreads();
}
