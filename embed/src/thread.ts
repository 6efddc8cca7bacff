// <engagement-thread [discussion-id] publishable-key [api-base] [sort] [lang] [loading] [theme] [comment-id]
// [discussion-url]> (contract sections 14, 18 and 27; without discussion-id, the page's own: thread/page-discussion.ts):
// a discussion's comments on any page. Reads and streams with the publishable key; a reader writes once
// the host page hands over an identity (`element.identity = token`, or `element.getIdentity = async () =>
// token`), and without one the element fires `engagement:sign-in-required` when the reader tries to; with
// the service's hosted sign-in on, it also offers "Sign in" and keeps the session (thread/session.ts).
// A server-rendered thread (contract section 23: the fragment, its first page an island in the light DOM,
// thread/island.ts) is shown as it is until the element has drawn the same page from the island, without asking
// for it, in the page's font (thread/in-page.ts); its stream resumes after the island's seq. Else the first
// snapshot is read once the stream (thread/live.ts) is live; events that arrive while it loads are applied after
// it, so nothing written while the page connects is missed. Whenever the count of the comments it shows changes,
// it fires `engagement:count` ({ discussionId, count, apiBase }; it bubbles to the document), which
// <engagement-count> elements for the same discussion follow (embed/src/count.ts). This file is the element: its
// attributes, lifecycle, identity and events, wiring the rest (in embed/src/thread/): what it reads (loader.ts)
// into what it knows (store.ts), the stream (live.ts), how it looks (view.ts, forms.ts, compose.ts, styles.ts,
// rich-styles.ts), the reader's bell and Follow (inbox.ts, bell.ts), what the reader writes (writes.ts) and
// previews (preview.ts), the comment a permalink opens it at and each comment's Link action (permalink.ts).
// Built by esbuild (lit bundled in) into dist/embed/v1/thread.js (`npm run build:embed`), served at
// /embed/v1/thread.js (src/http/embed-static.ts). Shadow root styled by constructable stylesheets: strict CSPs work.
import { html, LitElement, nothing, type PropertyValues, type TemplateResult } from "lit";
import { loadedFrom } from "./loaded-from.js";
import { ThreadApi } from "./thread/api.js";
import { bellStyles, renderInboxList, renderReaderBar } from "./thread/bell.js";
import { describeFailure } from "./thread/describe.js";
import { EN, fill, languageOf, loadStrings, stringsFor, type Strings } from "./thread/i18n.js";
import { ReaderInbox } from "./thread/inbox.js";
import { InPage } from "./thread/in-page.js";
import { ISLAND_SELECTOR, readIsland } from "./thread/island.js";
import { LiveStream } from "./thread/live.js";
import { ThreadLoader } from "./thread/loader.js";
import { PageDiscussion } from "./thread/page-discussion.js";
import { Permalinks } from "./thread/permalink.js";
import { Previews } from "./thread/preview.js";
import { richStyles } from "./thread/rich-styles.js";
import { HostedSession, hostIdentity, renderSession, sessionStyles } from "./thread/session.js";
import { tallyStyles } from "./thread/tally-styles.js";
import type { Sort } from "./thread/store.js";
import { threadStyles } from "./thread/styles.js";
import { renderThread, SORTS, type ThreadView } from "./thread/view.js";
import { ThreadWrites } from "./thread/writes.js";

const script = loadedFrom("thread.js");

type Identity = string | null | undefined;

export class EngagementThread extends LitElement {
  static override styles = [threadStyles, tallyStyles, richStyles, bellStyles, sessionStyles];
  static override properties = {
    discussionId: { attribute: "discussion-id" },
    commentId: { attribute: "comment-id" },
    discussionUrl: { attribute: "discussion-url" },
    publishableKey: { attribute: "publishable-key" },
    apiBase: { attribute: "api-base" },
    sort: {},
    language: { attribute: "lang" },
    loading: {},
    // null and unset both mean signed out: a page setting null on a signed-out element changes nothing (no reload)
    identity: { attribute: false, hasChanged: (now: unknown, before: unknown) => (now ?? null) !== (before ?? null) },
    getIdentity: { attribute: false },
    strings: { attribute: false },
  };

  declare discussionId: string | null;
  /** the comment to open at when the page's URL has no `#comment-<id>` */
  declare commentId: string | null;
  /** the discussion's address for the Link action (default: the page's URL without its hash) */
  declare discussionUrl: string | null;
  declare publishableKey: string | null;
  declare apiBase: string | null;
  declare sort: string | null;
  /** the `lang` attribute (watched, so a page may switch languages); else the page's, else the browser's */
  declare language: string | null;
  /** "lazy": no request (words, comments, stream) until the element is within 200 px of the viewport */
  declare loading: string | null;
  /** the reader's identity assertion or identity-provider token; null or unset: signed out */
  declare identity: Identity;
  /** asked for the reader's token whenever one is needed (after `identity`) */
  declare getIdentity: (() => Identity | Promise<Identity>) | undefined;
  /** overrides of the built-in strings, e.g. `{ post: "Send" }` */
  declare strings: Partial<Strings> | undefined;

  private api: ThreadApi | null = null;
  private clockTimer: ReturnType<typeof setInterval> | undefined;
  /** the count last told to the page (`engagement:count`), and for which discussion */
  private toldCount: { discussionId: string; count: number } | null = null;
  private announcement = "";
  /** whether it has begun reading its discussion (a lazy element: once near the viewport) */
  private started = false;
  private near = false;
  private nearby: IntersectionObserver | undefined;
  /** whether the host page gave the identity of the latest request (then hosted sign-in stays hidden) */
  private hostGave = false;
  private readonly inPage = new InPage(this, () => this.requestUpdate());

  private readonly session: HostedSession = new HostedSession({
    language: () => languageOf(this.locale),
    changed: () => void this.refresh(),
    requestUpdate: () => this.requestUpdate(),
  });

  private readonly loader: ThreadLoader = new ThreadLoader({
    target: () => ({ api: this.api, discussionId: this.discussionId }),
    sort: () => this.currentSort(),
    identity: () => this.readIdentity(),
    afterStreamOpens: () => this.stream.afterOpens(),
    signedIn: () => this.writes.forgetSignIn(),
    learned: (settings) => {
      const usable = !!this.api && this.session.configure(this.api.base, settings.signInUrl, settings.signInMethods) && !this.hostGave;
      if (usable) void this.inbox.start(this.api, this.discussionId);
      return usable;
    },
    describe: (e) => this.describe(e),
    incoming: (n) => this.announce(fill(this.t[n === 1 ? "new_comments_one" : "new_comments_other"], { n })),
    openAt: () => this.permalinks.openAt(),
    opened: (id, shown) => {
      if (this.permalinks.arrived(id, shown)) this.loader.notice = this.t.permalink_missing;
    },
    requestUpdate: () => this.requestUpdate(),
  });

  private readonly page = new PageDiscussion((id) => (this.discussionId ||= id));
  private readonly permalinks: Permalinks = new Permalinks({
    commentId: () => this.commentId,
    discussionUrl: () => this.discussionUrl,
    root: () => this.renderRoot,
    updated: () => this.updateComplete,
    load: () => this.loader.load(),
    shows: (id) => this.loader.status === "ready" && !!this.renderRoot.querySelector(`[data-comment-id="${CSS.escape(id)}"]`),
    requestUpdate: () => this.requestUpdate(),
  });

  private readonly previews = new Previews({
    now: () => ({ api: this.api, maxBodyLength: this.loader.settings.maxBodyLength, t: this.t }),
    identity: () => this.readIdentity(),
    describe: (e) => this.describe(e),
    requestUpdate: () => this.requestUpdate(),
  });

  private readonly stream = new LiveStream({
    identity: () => this.readIdentity(),
    event: (event) => this.loader.apply(event),
    liveChanged: () => this.requestUpdate(),
    reload: () => void this.loader.load(),
    presence: () => this.requestUpdate(),
  });

  private readonly inbox = new ReaderInbox({
    identity: () => this.readIdentity(),
    describe: (e) => this.describe(e),
    announce: (text) => this.announce(text),
    followed: (mode) => (mode === "all" ? this.t.follow_on : this.t.follow_off),
    requestUpdate: () => this.requestUpdate(),
  });

  private readonly writes = new ThreadWrites({
    now: () => {
      const { store, viewer, settings } = this.loader;
      return { api: this.api, discussionId: this.discussionId, store, viewer, settings, t: this.t };
    },
    identityForWrite: () => this.identityForWrite(),
    describe: (e) => this.describe(e),
    notify: (text) => (this.loader.notice = text),
    announce: (text) => this.announce(text),
    focusLater: (selector) => this.focusLater(selector),
    requestUpdate: () => this.requestUpdate(),
    posted: () => {
      // the first comment may have created the discussion: its stream and Follow are there now
      this.stream.resume();
      if (this.inbox.active && this.inbox.follow === null) void this.inbox.start(this.api, this.discussionId);
    },
  });

  /** what the thread is drawn with, besides the element's state (see render) */
  private readonly on: ThreadView["on"] = {
    changeSort: (value) => (this.sort = value),
    retry: () => void this.loader.load(),
    loadMore: () => void this.loader.loadMore(),
    loadReplies: (parentId) => void this.loader.loadReplies(parentId),
    showIncoming: () => this.showIncoming(),
    copyLink: (id) => void this.copyLink(id),
    fromStart: () => void this.permalinks.readFromStart().then(() => this.focusLater("ol[part=comments] article")),
    unfoldComposer: () => this.inPage.unfold(),
  };

  constructor() {
    super();
    this.discussionId = null;
    this.commentId = null;
    this.discussionUrl = null;
    this.publishableKey = null;
    this.apiBase = null;
    this.sort = null;
    this.language = null;
    this.loading = null;
    this.identity = undefined;
    this.getIdentity = undefined;
    this.strings = undefined;
  }

  private get t(): Strings {
    return { ...(stringsFor(languageOf(this.locale)) ?? EN), ...(this.strings ?? {}) };
  }

  /** false while a lazy element is still far from the viewport: it makes no request yet */
  private get awake(): boolean {
    return this.loading !== "lazy" || this.near;
  }

  /** A lazy element wakes once it comes within 200 px of the viewport. */
  private watchViewport(): void {
    if (this.awake || this.nearby || !this.isConnected) return;
    this.nearby = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        this.nearby?.disconnect();
        this.nearby = undefined;
        this.near = true;
        this.requestUpdate();
      },
      { rootMargin: "200px" },
    );
    this.nearby.observe(this);
  }

  private get locale(): string {
    return this.language || document.documentElement.lang || navigator.language || "en";
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.clockTimer = setInterval(() => this.requestUpdate(), 60_000);
    this.session.connect();
    this.permalinks.connect();
    this.watchViewport();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.clockTimer);
    this.permalinks.disconnect();
    this.session.disconnect();
    this.nearby?.disconnect();
    this.nearby = undefined;
    this.stream.close();
    this.inbox.stop();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    this.inPage.mark();
    if (!this.awake) return this.watchViewport();
    // defined before the parser reached its children: a server-rendered thread's island may follow
    if (!this.started && document.readyState === "loading" && !this.firstElementChild) {
      document.addEventListener("DOMContentLoaded", () => this.requestUpdate(), { once: true });
      return;
    }
    const target = !this.started || changed.has("discussionId") || changed.has("publishableKey") || changed.has("apiBase");
    if (target) {
      this.started = true;
      const key = this.publishableKey ?? script.publishableKey;
      const base = (this.apiBase ?? script.origin).replace(/\/+$/, "");
      if (!this.discussionId && key) void this.page.find(base, key);
      this.api = this.discussionId && key ? new ThreadApi(base, key) : null;
      if (this.api) this.api.refused = (identity) => this.session.refused(identity);
      // a server-rendered first page (contract section 23) is shown as it is, not asked for again
      const island = this.api ? readIsland(this, this.discussionId) : null;
      const seeded = island?.sort === this.currentSort() ? island : null;
      this.stream.follow(this.api, this.discussionId, seeded?.seq ?? null);
      if (this.api) void (seeded ? this.loader.seed(seeded) : this.loader.load());
      void this.inbox.start(this.api, this.discussionId);
      return;
    }
    if (changed.has("commentId") && changed.get("commentId") !== undefined) this.permalinks.retarget();
    if (changed.has("sort") || changed.has("identity") || changed.has("getIdentity")) void this.loader.load();
    if (changed.has("identity") || changed.has("getIdentity")) void this.inbox.start(this.api, this.discussionId);
  }

  /** Public: loads the discussion again (e.g. after the host page's reader signed in or out). */
  refresh(): Promise<void> {
    void this.inbox.start(this.api, this.discussionId);
    return this.loader.load();
  }

  private currentSort(): Sort {
    return SORTS.includes(this.sort as Sort) ? (this.sort as Sort) : "newest";
  }

  private showIncoming(): void {
    const shown = this.loader.store.revealIncoming();
    this.requestUpdate();
    const first = shown[0];
    if (first) void this.focusLater(`article[data-comment-id="${first}"]`);
  }

  // ---------------------------------------------------------------- identity and events

  /** The host page's identity when it gives one, else the hosted sign-in's kept session. */
  private async readIdentity(): Promise<string | null> {
    const own = await hostIdentity(this.identity, this.getIdentity);
    this.hostGave = own !== null;
    return own ?? this.session.token;
  }

  /** The reader's token for a write; without one, asks the host page to sign the reader in. */
  private async identityForWrite(): Promise<string | null> {
    const token = await this.readIdentity();
    if (!token) this.requestSignIn();
    return token;
  }

  private requestSignIn(): void {
    this.dispatchEvent(
      new CustomEvent("engagement:sign-in-required", { bubbles: true, composed: true, detail: { discussionId: this.discussionId } }),
    );
  }

  protected override updated(): void {
    const discussionId = this.discussionId;
    if (this.loader.status !== "ready" || !discussionId || !this.api) return;
    const count = this.loader.store.total;
    if (this.toldCount?.discussionId === discussionId && this.toldCount.count === count) return;
    this.toldCount = { discussionId, count };
    this.dispatchEvent(
      new CustomEvent("engagement:count", { bubbles: true, composed: true, detail: { discussionId, count, apiBase: this.api.base } }),
    );
  }

  /** A refusal as a reader reads it (an identity the service refuses also asks the page to sign in). */
  private describe(e: unknown): string {
    return describeFailure(e, this.t, this.locale, () => this.requestSignIn());
  }

  private announce(text: string): void {
    // the same words twice in a row are still read out: clear first
    this.announcement = "";
    this.requestUpdate();
    void this.updateComplete.then(() => {
      this.announcement = text;
      this.requestUpdate();
    });
  }

  /** The Link action: the comment's address to the clipboard, and "Link copied" in the live region. */
  private async copyLink(id: string): Promise<void> {
    const { address, copied } = await this.permalinks.copy(id);
    this.announce(copied ? this.t.link_copied : fill(this.t.link_not_copied, { url: address }));
  }

  private async focusLater(selector: string): Promise<void> {
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLElement>(selector)?.focus();
  }

  // ---------------------------------------------------------------- rendering

  protected override render(): TemplateResult | typeof nothing {
    // the words of a language not yet here are fetched (a lazy element's once it is near the
    // viewport); until then nothing is shown, rather than English for a moment. A lazy element far
    // from the viewport shows its shell: "Loading comments…".
    const language = languageOf(this.locale);
    const words = stringsFor(language);
    if (!words && this.awake) void loadStrings(language, script.origin).then(() => this.requestUpdate());
    // a server-rendered thread shows as the server rendered it (its light DOM) until its own first page is ready
    if ((!words || this.loader.status !== "ready") && this.querySelector(`:scope > ${ISLAND_SELECTOR}`)) return html`<slot></slot>`;
    if (!words) return nothing;
    const { store, viewer, settings, status, notice, loadingMore, loadingReplies, openedAtThread } = this.loader;
    return renderThread({
      t: this.t,
      locale: this.locale,
      store,
      settings,
      maxBodyLength: settings.maxBodyLength,
      signedIn: !!viewer,
      forms: this.writes,
      previews: this.previews,
      highlighted: this.permalinks.highlighted,
      openedAtThread,
      composerFolded: this.inPage.composerFolded,
      status,
      live: this.stream.live,
      reading: this.stream.reading,
      notice,
      announcement: this.announcement,
      loadingMore,
      loadingReplies,
      readerBar: html`${renderSession(this.t, this.session, viewer, this.hostGave, this.api)}
      ${renderReaderBar({ t: this.t, inbox: this.inbox, discussionId: this.discussionId })}`,
      inboxList: renderInboxList({ t: this.t, inbox: this.inbox, discussionId: this.discussionId }),
      on: this.on,
    });
  }
}

export { EN as ENGLISH_STRINGS };

if (!customElements.get("engagement-thread")) customElements.define("engagement-thread", EngagementThread);
