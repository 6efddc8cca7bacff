// <engagement-thread discussion-id publishable-key [api-base] [sort] [lang] [theme]> (contract
// section 14): a discussion's comments on any page. Reads and streams with the publishable key; a
// reader writes once the host page hands over an identity (`element.identity = token`, or
// `element.getIdentity = async () => token`), and without one the element fires
// `engagement:sign-in-required` when the reader tries to. The first snapshot is read once the stream
// (embed/src/thread/live.ts) is live; events that arrive while it loads are applied after it, so
// nothing written while the page connects is missed. Whenever the count of the comments it shows
// changes, it fires `engagement:count` ({ discussionId, count, apiBase }; it bubbles to the
// document), which <engagement-count> elements for the same discussion follow (embed/src/count.ts).
// This file is the element: its attributes, lifecycle, identity and events, wiring the rest (in
// embed/src/thread/): what it reads (loader.ts) into what it knows (store.ts), the stream (live.ts),
// how it looks (view.ts, forms.ts, styles.ts), what the reader writes (writes.ts).
// Built by esbuild (lit bundled in) into dist/embed/v1/thread.js (`npm run build:embed`) and served
// at /embed/v1/thread.js (src/http/embed-static.ts). Renders into an open shadow root styled by a
// constructable stylesheet: pages with a strict CSP work.
import { LitElement, type PropertyValues, type TemplateResult } from "lit";
import { loadedFrom } from "./loaded-from.js";
import { ThreadApi } from "./thread/api.js";
import { describeFailure } from "./thread/describe.js";
import { EN, fill, stringsFor, type Strings } from "./thread/i18n.js";
import { LiveStream } from "./thread/live.js";
import { ThreadLoader } from "./thread/loader.js";
import type { Sort } from "./thread/store.js";
import { threadStyles } from "./thread/styles.js";
import { renderThread, SORTS, type ThreadView } from "./thread/view.js";
import { ThreadWrites } from "./thread/writes.js";

const script = loadedFrom("thread.js");

type Identity = string | null | undefined;

export class EngagementThread extends LitElement {
  static override styles = threadStyles;
  static override properties = {
    discussionId: { attribute: "discussion-id" },
    publishableKey: { attribute: "publishable-key" },
    apiBase: { attribute: "api-base" },
    sort: {},
    language: { attribute: "lang" },
    identity: { attribute: false },
    getIdentity: { attribute: false },
    strings: { attribute: false },
  };

  declare discussionId: string | null;
  declare publishableKey: string | null;
  declare apiBase: string | null;
  declare sort: string | null;
  /** the `lang` attribute (watched, so a page may switch languages); else the page's, else the browser's */
  declare language: string | null;
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

  private readonly loader = new ThreadLoader({
    target: () => ({ api: this.api, discussionId: this.discussionId }),
    sort: () => this.currentSort(),
    identity: () => this.readIdentity(),
    afterStreamOpens: () => this.stream.afterOpens(),
    signedIn: () => this.writes.forgetSignIn(),
    describe: (e) => this.describe(e),
    incoming: (n) => this.announce(fill(this.t[n === 1 ? "new_comments_one" : "new_comments_other"], { n })),
    requestUpdate: () => this.requestUpdate(),
  });

  private readonly stream = new LiveStream({
    identity: () => this.readIdentity(),
    event: (event) => this.loader.apply(event),
    liveChanged: () => this.requestUpdate(),
    reload: () => void this.loader.load(),
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
  });

  /** what the thread is drawn with, besides the element's state (see render) */
  private readonly on: ThreadView["on"] = {
    changeSort: (value) => (this.sort = value),
    retry: () => void this.loader.load(),
    loadMore: () => void this.loader.loadMore(),
    loadReplies: (parentId) => void this.loader.loadReplies(parentId),
    showIncoming: () => this.showIncoming(),
  };

  constructor() {
    super();
    this.discussionId = null;
    this.publishableKey = null;
    this.apiBase = null;
    this.sort = null;
    this.language = null;
    this.identity = undefined;
    this.getIdentity = undefined;
    this.strings = undefined;
  }

  private get t(): Strings {
    return { ...stringsFor(this.locale), ...(this.strings ?? {}) };
  }

  private get locale(): string {
    return this.language || document.documentElement.lang || navigator.language || "en";
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.clockTimer = setInterval(() => this.requestUpdate(), 60_000);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.clockTimer);
    this.stream.close();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    const target = changed.has("discussionId") || changed.has("publishableKey") || changed.has("apiBase");
    if (target) {
      const key = this.publishableKey ?? script.publishableKey;
      const base = (this.apiBase ?? script.origin).replace(/\/+$/, "");
      this.api = this.discussionId && key ? new ThreadApi(base, key) : null;
      this.stream.follow(this.api, this.discussionId);
      if (this.api) void this.loader.load();
      return;
    }
    if (changed.has("sort") || changed.has("identity") || changed.has("getIdentity")) void this.loader.load();
  }

  /** Public: loads the discussion again (e.g. after the host page's reader signed in or out). */
  refresh(): Promise<void> {
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

  private async readIdentity(): Promise<string | null> {
    if (this.identity) return this.identity;
    if (!this.getIdentity) return null;
    try {
      return (await this.getIdentity()) || null;
    } catch {
      return null;
    }
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

  private async focusLater(selector: string): Promise<void> {
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLElement>(selector)?.focus();
  }

  // ---------------------------------------------------------------- rendering

  protected override render(): TemplateResult {
    const { store, viewer, settings, status, notice, loadingMore, loadingReplies } = this.loader;
    return renderThread({
      t: this.t,
      locale: this.locale,
      store,
      settings,
      maxBodyLength: settings.maxBodyLength,
      signedIn: !!viewer,
      forms: this.writes,
      status,
      live: this.stream.live,
      notice,
      announcement: this.announcement,
      loadingMore,
      loadingReplies,
      on: this.on,
    });
  }
}

export { EN as ENGLISH_STRINGS };

if (!customElements.get("engagement-thread")) customElements.define("engagement-thread", EngagementThread);
