// <engagement-thread discussion-id publishable-key [api-base] [sort] [lang] [theme]> (contract
// section 14): a discussion's comments on any page. Reads and streams with the publishable key; a
// reader writes once the host page hands over an identity (`element.identity = token`, or
// `element.getIdentity = async () => token`), and without one the element fires
// `engagement:sign-in-required` when the reader tries to. Live updates arrive over the stream with a
// ticket; the browser's EventSource resumes with Last-Event-ID after a drop or a restart, and when
// the ticket's resume lifetime has passed the element asks for a new ticket and resumes from the last
// id it saw (`?lastEventId=`), so nothing is missed either way. The first snapshot is read once the
// stream is live, so nothing written while the page connects is missed either (afterStreamOpens).
// Whenever the count of the comments it shows changes, it fires `engagement:count` ({ discussionId,
// count, apiBase }; it bubbles to the document), which <engagement-count> elements for the same
// discussion on the page follow (embed/src/count.ts).
// Built by esbuild (lit bundled in) into dist/embed/v1/thread.js (`npm run build:embed`) and served
// at /embed/v1/thread.js (src/http/embed-static.ts). Renders into an open shadow root styled by a
// constructable stylesheet: pages with a strict CSP work.
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from "lit";
import { repeat } from "lit/directives/repeat.js";
import { loadedFrom } from "./loaded-from.js";
import { ServiceError, ThreadApi, type ReaderSettings, type Viewer } from "./thread/api.js";
import { EN, fill, stringsFor, type StringKey, type Strings } from "./thread/i18n.js";
import { ThreadStore, type Comment, type LiveEvent, type Sort } from "./thread/store.js";
import { threadStyles } from "./thread/styles.js";
// the service's own list of event names (a constant module, bundled in)
import { STREAM_EVENT_TYPES } from "../../src/events/types.js";

const script = loadedFrom("thread.js");

const SORTS: Sort[] = ["newest", "oldest", "top"];
const REPORT_REASONS = ["spam", "abuse", "off_topic", "other"] as const;
const EMOJI: Record<string, string> = { like: "👍", love: "❤️", laugh: "😄", wow: "😮", sad: "😢", angry: "😠" };
const DEFAULT_SETTINGS: ReaderSettings = { reactionKinds: ["like"], editWindowSeconds: 900, maxBodyLength: 10_000 };
/** how long the first snapshot waits for the stream to connect before it loads anyway (and again later) */
const STREAM_WAIT_MS = 3000;

type Identity = string | null | undefined;

function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

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

  private store = new ThreadStore("newest");
  private api: ThreadApi | null = null;
  private viewer: Viewer | null = null;
  private settings: ReaderSettings = DEFAULT_SETTINGS;
  private status: "loading" | "ready" | "failed" = "loading";
  private loadGeneration = 0;
  private buffered: LiveEvent[] | null = [];
  private source: EventSource | null = null;
  private lastEventId: string | null = null;
  /** true once the stream has said `connected`; false when it could not open (see afterStreamOpens) */
  private streamReady: Promise<boolean> = Promise.resolve(false);
  private markStreamReady: (connected: boolean) => void = () => undefined;
  /** the snapshot was read before the stream was live: read it again when it is */
  private reloadWhenLive = false;
  private live = true;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private retryDelay = 1000;
  private clockTimer: ReturnType<typeof setInterval> | undefined;
  private readonly drafts = new Map<string, string>();
  private readonly formErrors = new Map<string, string>();
  private readonly busy = new Set<string>();
  private readonly idempotencyKeys = new Map<string, string>();
  private replyTo: string | null = null;
  private editing: string | null = null;
  private confirmingDelete: string | null = null;
  private reporting: string | null = null;
  private reportReason: string = "spam";
  private readonly reported = new Set<string>();
  private readonly moreKinds = new Set<string>();
  private notice: string | null = null;
  /** the count last told to the page (`engagement:count`), and for which discussion */
  private toldCount: { discussionId: string; count: number } | null = null;
  private announcement = "";
  private loadingMore = false;

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
    this.closeStream();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    const target = changed.has("discussionId") || changed.has("publishableKey") || changed.has("apiBase");
    if (target) {
      this.closeStream();
      const key = this.publishableKey ?? script.publishableKey;
      const base = (this.apiBase ?? script.origin).replace(/\/+$/, "");
      this.api = this.discussionId && key ? new ThreadApi(base, key) : null;
      this.lastEventId = null;
      this.reloadWhenLive = false;
      this.streamReady = new Promise((resolve) => (this.markStreamReady = resolve));
      if (this.api) {
        void this.openStream();
        void this.load();
      }
      return;
    }
    if (changed.has("sort") || changed.has("identity") || changed.has("getIdentity")) void this.load();
  }

  /** Public: loads the discussion again (e.g. after the host page's reader signed in or out). */
  refresh(): Promise<void> {
    return this.load();
  }

  // ---------------------------------------------------------------- loading

  private currentSort(): Sort {
    return SORTS.includes(this.sort as Sort) ? (this.sort as Sort) : "newest";
  }

  private async load(): Promise<void> {
    const api = this.api;
    const discussionId = this.discussionId;
    if (!api || !discussionId) return;
    const generation = ++this.loadGeneration;
    this.status = this.store.top.length ? this.status : "loading";
    this.buffered ??= [];
    this.requestUpdate();
    try {
      const identity = await this.readIdentity();
      const sort = this.currentSort();
      const [page, basics] = await Promise.all([
        this.afterStreamOpens().then(() => api.thread(discussionId, sort, identity)),
        api.basics(identity),
      ]);
      if (generation !== this.loadGeneration) return;
      this.viewer = basics.viewer;
      this.settings = basics.readerSettings;
      if (basics.viewer) for (const [form, error] of this.formErrors) if (error === this.t.sign_in) this.formErrors.delete(form);
      const store = new ThreadStore(sort, basics.viewer?.id ?? null);
      store.reset(page.comments);
      store.state = page.discussion?.state ?? "open";
      store.total = page.discussion?.commentCount ?? 0;
      for (const event of this.buffered ?? []) store.apply(event);
      this.buffered = null;
      this.store = store;
      this.status = "ready";
    } catch (e) {
      if (generation !== this.loadGeneration) return;
      this.status = "failed";
      this.notice = this.describe(e);
    }
    this.requestUpdate();
  }

  /**
   * A snapshot read before the stream is live could miss a comment written in between (the stream
   * starts at the discussion's latest event when it connects). So the first snapshot is read once
   * the stream has said `connected`: everything after that arrives on the stream, buffered while the
   * snapshot loads and applied after it (applying an event the snapshot already shows changes
   * nothing). A stream that cannot open soon does not hold the thread back: it loads now and again
   * once the stream is live.
   */
  private async afterStreamOpens(): Promise<void> {
    const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), STREAM_WAIT_MS));
    if (!(await Promise.race([this.streamReady, timeout]))) this.reloadWhenLive = true;
  }

  private async loadMore(): Promise<void> {
    const api = this.api;
    const after = this.store.topAfter;
    if (!api || !this.discussionId || !after || this.loadingMore) return;
    this.loadingMore = true;
    this.requestUpdate();
    try {
      this.store.addTopPage(await api.more(this.discussionId, this.store.sort, after, await this.readIdentity()));
    } catch (e) {
      this.notice = this.describe(e);
    } finally {
      this.loadingMore = false;
      this.requestUpdate();
    }
  }

  private async loadReplies(parentId: string): Promise<void> {
    const api = this.api;
    if (!api || !this.discussionId || this.busy.has(`replies:${parentId}`)) return;
    this.busy.add(`replies:${parentId}`);
    this.requestUpdate();
    try {
      const after = this.store.repliesAfter.get(parentId) ?? null;
      this.store.addReplies(parentId, await api.replies(this.discussionId, parentId, after, await this.readIdentity()));
    } catch (e) {
      this.notice = this.describe(e);
    } finally {
      this.busy.delete(`replies:${parentId}`);
      this.requestUpdate();
    }
  }

  // ---------------------------------------------------------------- live

  private async openStream(): Promise<void> {
    const api = this.api;
    const discussionId = this.discussionId;
    if (!api || !discussionId || this.source) return;
    let ticket: string;
    try {
      ticket = await api.ticket(discussionId, await this.readIdentity());
    } catch {
      this.markStreamReady(false);
      this.scheduleReopen();
      return;
    }
    if (api !== this.api || this.source) return;
    const source = new EventSource(api.streamUrl(discussionId, ticket, this.lastEventId));
    this.source = source;
    source.addEventListener("connected", (e) => {
      this.lastEventId = (e as MessageEvent).lastEventId || this.lastEventId;
      this.retryDelay = 1000;
      this.setLive(true);
      this.markStreamReady(true);
      if (this.reloadWhenLive) {
        this.reloadWhenLive = false;
        void this.load();
      }
    });
    for (const name of STREAM_EVENT_TYPES) source.addEventListener(name, (e) => this.onStreamEvent(name, e as MessageEvent<string>));
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        // refused (e.g. the ticket's resume lifetime is over): a new ticket, resuming from the last id
        this.markStreamReady(false);
        this.closeStream();
        this.scheduleReopen();
      }
      this.setLive(false);
    };
  }

  private onStreamEvent(type: string, e: MessageEvent<string>): void {
    if (e.lastEventId) this.lastEventId = e.lastEventId;
    this.setLive(true);
    let event: LiveEvent;
    try {
      const envelope = JSON.parse(e.data) as { data?: LiveEvent["data"] };
      event = { type, data: envelope.data ?? {} };
    } catch {
      return;
    }
    if (this.buffered) {
      this.buffered.push(event);
      return;
    }
    const before = this.store.incoming.length;
    if (this.store.apply(event)) {
      const waiting = this.store.incoming.length;
      if (waiting > before) this.announce(fill(this.t[waiting === 1 ? "new_comments_one" : "new_comments_other"], { n: waiting }));
      this.requestUpdate();
    }
  }

  private setLive(live: boolean): void {
    if (this.live === live) return;
    this.live = live;
    this.requestUpdate();
  }

  private scheduleReopen(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.openStream(), this.retryDelay);
    this.retryDelay = Math.min(this.retryDelay * 2, 30_000);
  }

  private closeStream(): void {
    clearTimeout(this.retryTimer);
    this.source?.close();
    this.source = null;
  }

  // ---------------------------------------------------------------- identity

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

  protected override updated(): void {
    const discussionId = this.discussionId;
    if (this.status !== "ready" || !discussionId || !this.api) return;
    const count = this.store.total;
    if (this.toldCount?.discussionId === discussionId && this.toldCount.count === count) return;
    this.toldCount = { discussionId, count };
    this.dispatchEvent(
      new CustomEvent("engagement:count", { bubbles: true, composed: true, detail: { discussionId, count, apiBase: this.api.base } }),
    );
  }

  /** Asks the host page to sign the reader in; the form says so once (its hint becomes the alert). */
  private signInFirst(formKey: string): void {
    if (this.formErrors.get(formKey) === this.t.sign_in) return;
    this.formErrors.set(formKey, this.t.sign_in);
    this.requestUpdate();
  }

  private requestSignIn(): void {
    this.dispatchEvent(
      new CustomEvent("engagement:sign-in-required", { bubbles: true, composed: true, detail: { discussionId: this.discussionId } }),
    );
  }

  // ---------------------------------------------------------------- writing

  private async submit(formKey: string, parentId: string | null): Promise<void> {
    const api = this.api;
    if (!api || !this.discussionId || this.busy.has(formKey)) return;
    const body = (this.drafts.get(formKey) ?? "").trim();
    if (!this.checkBody(formKey, body)) return;
    const identity = await this.identityForWrite();
    if (!identity) return this.signInFirst(formKey);
    const idempotencyKey = this.idempotencyKeys.get(formKey) ?? randomKey();
    this.idempotencyKeys.set(formKey, idempotencyKey);
    await this.busyWith(formKey, async () => {
      const comment = await api.post(this.discussionId ?? "", body, parentId, identity, idempotencyKey);
      this.drafts.delete(formKey);
      this.idempotencyKeys.delete(formKey);
      this.store.addOwn(comment);
      if (comment.status === "pending") this.notice = this.t.pending_notice;
      if (parentId) {
        this.replyTo = null;
        await this.focusLater(`[data-action="reply"][data-for="${parentId}"]`);
      }
    });
  }

  private async saveEdit(id: string): Promise<void> {
    const api = this.api;
    const formKey = `edit:${id}`;
    if (!api) return;
    const body = (this.drafts.get(formKey) ?? "").trim();
    if (!this.checkBody(formKey, body)) return;
    const identity = await this.identityForWrite();
    if (!identity) return this.signInFirst(formKey);
    await this.busyWith(formKey, async () => {
      const comment = await api.edit(id, body, identity);
      this.store.addOwn(comment);
      this.drafts.delete(formKey);
      this.editing = null;
      if (comment.status === "pending") this.notice = this.t.pending_notice;
      await this.focusLater(`[data-action="edit"][data-for="${id}"]`);
    });
  }

  private async deleteOwn(id: string): Promise<void> {
    const api = this.api;
    if (!api) return;
    const identity = await this.identityForWrite();
    if (!identity) return;
    await this.busyWith(`delete:${id}`, async () => {
      this.store.apply({ type: "comment_deleted", data: { comment: await api.remove(id, identity) } });
      this.confirmingDelete = null;
    });
  }

  private async react(comment: Comment, kind: string): Promise<void> {
    const api = this.api;
    if (!api) return;
    const identity = await this.identityForWrite();
    if (!identity) return;
    await this.busyWith(`react:${comment.id}`, async () => {
      const result = await api.react(comment.id, kind, identity);
      this.store.apply({
        type: "reaction_toggled",
        data: {
          reaction: { commentId: comment.id, readerId: this.viewer?.id ?? "", kind, active: result.active, counts: result.countMap },
        },
      });
    });
  }

  private async sendReport(id: string): Promise<void> {
    const api = this.api;
    const formKey = `report:${id}`;
    if (!api) return;
    const identity = await this.identityForWrite();
    if (!identity) return this.signInFirst(formKey);
    await this.busyWith(formKey, async () => {
      await api.report(id, this.reportReason, (this.drafts.get(formKey) ?? "").trim(), identity);
      this.reported.add(id);
      this.reporting = null;
      this.drafts.delete(formKey);
      this.announce(this.t.reported);
      await this.focusLater(`[data-action="report"][data-for="${id}"]`);
    });
  }

  private checkBody(formKey: string, body: string): boolean {
    if (!body) return (this.fail(formKey, this.t.err_empty), false);
    if (body.length > this.settings.maxBodyLength)
      return (this.fail(formKey, fill(this.t.err_too_long, { n: this.settings.maxBodyLength })), false);
    return true;
  }

  private fail(formKey: string, message: string): void {
    this.formErrors.set(formKey, message);
    this.announce(message);
    this.requestUpdate();
  }

  /** Runs a write with its form marked busy; a refusal becomes the form's readable message. */
  private async busyWith(formKey: string, work: () => Promise<void>): Promise<void> {
    this.busy.add(formKey);
    this.formErrors.delete(formKey);
    this.requestUpdate();
    try {
      await work();
    } catch (e) {
      this.fail(formKey, this.describe(e));
    } finally {
      this.busy.delete(formKey);
      this.requestUpdate();
    }
  }

  /** A refusal as a reader reads it (the service's own words when we have none of ours). */
  private describe(e: unknown): string {
    const t = this.t;
    if (!(e instanceof ServiceError)) return t.err_network;
    const own: Partial<Record<string, StringKey>> = {
      discussion_locked: "err_discussion_locked",
      discussion_archived: "err_discussion_archived",
      rate_limited: "err_rate_limited",
      edit_window_closed: "err_edit_window_closed",
      not_author: "err_not_author",
      not_found: "err_not_found",
      network: "err_network",
    };
    if (e.code === "reader_banned") {
      const until = typeof e.extensions.until === "string" ? new Date(e.extensions.until) : null;
      return until
        ? fill(t.err_reader_suspended, { until: until.toLocaleString(this.locale, { dateStyle: "medium", timeStyle: "short" }) })
        : t.err_reader_banned;
    }
    if (e.code === "origin_not_allowed") {
      const origin = typeof e.extensions.origin === "string" ? e.extensions.origin : location.origin;
      return fill(t.err_origin_not_allowed, { origin });
    }
    if (e.code === "invalid_identity") {
      this.requestSignIn();
      return t.err_invalid_identity;
    }
    if (e.code === "validation_failed") {
      const first = (e.extensions.errors as { message?: string }[] | undefined)?.[0]?.message;
      return fill(t.err_generic, { detail: first ?? e.message });
    }
    const key = own[e.code];
    return key ? t[key] : fill(t.err_generic, { detail: e.message });
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

  private showIncoming(): void {
    const shown = this.store.revealIncoming();
    this.requestUpdate();
    const first = shown[0];
    if (first) void this.focusLater(`article[data-comment-id="${first}"]`);
  }

  // ---------------------------------------------------------------- rendering

  protected override render(): TemplateResult {
    const t = this.t;
    const store = this.store;
    const open = store.state === "open";
    const total = store.total;
    return html`<section part="thread" aria-labelledby="heading">
      <header>
        <h2 id="heading">
          ${t.title}
          <span class="muted"
            >${this.status === "ready" ? `(${fill(t[total === 1 ? "count_one" : "count_other"], { n: total })})` : ""}</span
          >
        </h2>
        <label class="sort"
          >${t.sort_label}
          <select part="sort" @change=${(e: Event) => this.changeSort((e.target as HTMLSelectElement).value)}>
            ${SORTS.map((s) => html`<option value=${s} ?selected=${s === store.sort}>${t[`sort_${s}`]}</option>`)}
          </select></label
        >
      </header>
      ${store.state === "locked" ? html`<p class="notice" part="notice">${t.locked}</p>` : nothing}
      ${store.state === "archived" ? html`<p class="notice" part="notice">${t.archived}</p>` : nothing}
      ${open ? this.renderComposer("new", null, t.composer_label, t.post) : nothing}
      ${this.notice ? html`<p class="notice" part="notice" role="status">${this.notice}</p>` : nothing}
      ${this.live || this.status === "failed" ? nothing : html`<p class="muted" part="status">${t.reconnecting}</p>`}
      ${
        store.incoming.length
          ? html`<button class="new-comments" part="new-comments button" @click=${() => this.showIncoming()}>
              ${fill(t[store.incoming.length === 1 ? "new_comments_one" : "new_comments_other"], { n: store.incoming.length })}
            </button>`
          : nothing
      }
      ${this.renderBody()}
      <div class="sr-only" role="status" aria-live="polite">${this.announcement}</div>
    </section>`;
  }

  private renderBody(): TemplateResult {
    const t = this.t;
    const store = this.store;
    if (this.status === "loading") return html`<p class="muted" role="status">${t.loading}</p>`;
    if (this.status === "failed")
      return html`<p class="error" role="alert">${t.load_failed}</p>
        <button class="secondary" part="button" @click=${() => void this.load()}>${t.retry}</button>`;
    const shown = store.top.filter((id) => store.isShown(id));
    return html`${shown.length === 0 ? html`<p class="muted" part="empty">${t.empty}</p>` : nothing}
      <ol part="comments">
        ${repeat(
          shown,
          (id) => id,
          (id) => this.renderComment(id),
        )}
      </ol>
      ${
        store.topAfter
          ? html`<button class="wide" part="load-more button" ?disabled=${this.loadingMore} @click=${() => void this.loadMore()}>
              ${t.load_more}
            </button>`
          : nothing
      }`;
  }

  private renderComposer(formKey: string, parentId: string | null, label: string, submitLabel: string): TemplateResult {
    const t = this.t;
    const busy = this.busy.has(formKey);
    const error = this.formErrors.get(formKey);
    const draft = this.drafts.get(formKey) ?? "";
    const left = this.settings.maxBodyLength - draft.length;
    return html`<form
      part="composer"
      @submit=${(e: Event) => {
        e.preventDefault();
        void this.submit(formKey, parentId);
      }}
    >
      <label class="sr-only" for=${`field-${formKey}`}>${label}</label>
      <textarea
        id=${`field-${formKey}`}
        part="textarea"
        placeholder=${parentId ? label : t.composer_placeholder}
        .value=${draft}
        aria-invalid=${error ? "true" : "false"}
        aria-describedby=${`hint-${formKey}`}
        @input=${(e: Event) => this.setDraft(formKey, (e.target as HTMLTextAreaElement).value)}
      ></textarea>
      <div class="form-row">
        <span class="hint" id=${`hint-${formKey}`}
          >${left < 200 ? fill(t.characters_left, { n: left }) : this.viewer || error === t.sign_in ? "" : t.sign_in}</span
        >
        ${
          parentId
            ? html`<button type="button" class="secondary" part="button" @click=${() => this.closeReply(parentId)}>${t.cancel}</button>`
            : nothing
        }
        <button type="submit" class="primary" part="button submit" ?disabled=${busy}>${busy ? t.posting : submitLabel}</button>
      </div>
      ${error ? html`<p class="error" part="error" role="alert">${error}</p>` : nothing}
    </form>`;
  }

  private renderComment(id: string): TemplateResult | typeof nothing {
    const store = this.store;
    const c = store.comments.get(id);
    if (!c || !store.isShown(id)) return nothing;
    const t = this.t;
    const own = store.isOwn(id);
    const deleted = c.status === "deleted";
    const children = (store.children.get(id) ?? []).filter((child) => store.isShown(child));
    const missing = store.missingReplies(id);
    const created = new Date(c.createdAt);
    return html`<li>
      <article part="comment" data-comment-id=${id} tabindex="-1" aria-labelledby=${`author-${id}`}>
        <div class="avatar" aria-hidden="true">
          ${c.author.avatarUrl && !deleted ? html`<img src=${c.author.avatarUrl} alt="" loading="lazy" />` : (c.author.name[0] ?? "?").toUpperCase()}
        </div>
        <div>
          <div class="meta">
            <span class="author" part="author" id=${`author-${id}`}>${deleted ? "—" : c.author.name}</span>
            ${own && !deleted ? html`<span class="muted">(${t.you})</span>` : nothing}
            <time class="muted" datetime=${c.createdAt} title=${created.toLocaleString(this.locale)}>${this.relative(created)}</time>
            ${c.editedAt && !deleted ? html`<span class="muted">· ${t.edited}</span>` : nothing}
            ${c.pinned ? html`<span class="badge" part="badge">${t.pinned}</span>` : nothing}
            ${c.status === "pending" ? html`<span class="badge pending" part="badge pending">${t.pending}</span>` : nothing}
          </div>
          ${
            deleted
              ? html`<p class="body tombstone" part="body">${t.deleted}</p>`
              : this.editing === id
                ? this.renderEdit(c)
                : html`<p class="body" part="body">${c.body}</p>`
          }
          ${deleted ? nothing : this.renderActions(c, own)} ${this.confirmingDelete === id ? this.renderDeleteConfirm(id) : nothing}
          ${this.reporting === id ? this.renderReport(id) : nothing}
          ${this.replyTo === id ? this.renderComposer(`reply:${id}`, id, fill(t.reply_label, { name: c.author.name }), t.post_reply) : nothing}
        </div>
      </article>
      ${
        children.length
          ? html`<ol>
              ${repeat(
                children,
                (child) => child,
                (child) => this.renderComment(child),
              )}
            </ol>`
          : nothing
      }
      ${
        missing > 0
          ? html`<button
              class="link"
              part="more-replies button"
              ?disabled=${this.busy.has(`replies:${id}`)}
              @click=${() => void this.loadReplies(id)}
            >
              ${fill(t[missing === 1 ? "more_replies_one" : "more_replies_other"], { n: missing })}
            </button>`
          : nothing
      }
    </li>`;
  }

  private renderActions(c: Comment, own: boolean): TemplateResult {
    const t = this.t;
    const open = this.store.state === "open";
    const kinds = this.settings.reactionKinds;
    const expanded = this.moreKinds.has(c.id);
    const shownKinds = kinds.filter((k, i) => i === 0 || expanded || (c.reactions[k] ?? 0) > 0);
    const mine = new Set(c.viewerReactions ?? []);
    const editable =
      own &&
      open &&
      c.status !== "deleted" &&
      (this.settings.editWindowSeconds === 0 || Date.now() - new Date(c.createdAt).getTime() < this.settings.editWindowSeconds * 1000);
    const error = [`react:${c.id}`, `delete:${c.id}`, `report:${c.id}`].map((k) => this.formErrors.get(k)).find(Boolean);
    const reactionName = (k: string) => (t[`reaction_${k}` as StringKey] as string | undefined) ?? k;
    return html`<div class="actions" part="actions">
        <span class="reactions" part="reactions" role="group" aria-label=${t.reactions_label}>
          ${shownKinds.map((k) => {
            const n = c.reactions[k] ?? 0;
            return html`<button
              class="reaction"
              part="reaction button"
              data-kind=${k}
              aria-pressed=${mine.has(k) ? "true" : "false"}
              aria-label=${fill(t.reaction_count, { name: reactionName(k), n })}
              title=${reactionName(k)}
              ?disabled=${!open || this.busy.has(`react:${c.id}`)}
              @click=${() => void this.react(c, k)}
            >
              <span aria-hidden="true">${EMOJI[k] ?? k}${n ? ` ${n}` : ""}</span>
            </button>`;
          })}
          ${
            shownKinds.length < kinds.length
              ? html`<button
                  class="reaction"
                  part="reaction button"
                  aria-label=${t.reactions_label}
                  aria-expanded="false"
                  @click=${() => this.expandKinds(c.id)}
                >
                  <span aria-hidden="true">+</span>
                </button>`
              : nothing
          }
        </span>
        ${
          open && c.status === "approved"
            ? html`<button class="link" part="action button" data-action="reply" data-for=${c.id} @click=${() => this.openReply(c.id)}>
                ${t.reply}
              </button>`
            : nothing
        }
        ${
          editable
            ? html`<button class="link" part="action button" data-action="edit" data-for=${c.id} @click=${() => this.openEdit(c)}>
                ${t.edit}
              </button>`
            : nothing
        }
        ${
          own
            ? html`<button class="link" part="action button" data-action="delete" data-for=${c.id} @click=${() => this.openDelete(c.id)}>
                ${t.delete}
              </button>`
            : html`<button
                class="link"
                part="action button"
                data-action="report"
                data-for=${c.id}
                ?disabled=${this.reported.has(c.id)}
                @click=${() => this.openReport(c.id)}
              >
                ${this.reported.has(c.id) ? t.reported : t.report}
              </button>`
        }
      </div>
      ${error ? html`<p class="error" part="error" role="alert">${error}</p>` : nothing}`;
  }

  private renderEdit(c: Comment): TemplateResult {
    const t = this.t;
    const formKey = `edit:${c.id}`;
    const busy = this.busy.has(formKey);
    const error = this.formErrors.get(formKey);
    return html`<form
      part="composer"
      @submit=${(e: Event) => {
        e.preventDefault();
        void this.saveEdit(c.id);
      }}
    >
      <label class="sr-only" for=${`field-${formKey}`}>${t.edit_label}</label>
      <textarea
        id=${`field-${formKey}`}
        part="textarea"
        .value=${this.drafts.get(formKey) ?? c.body}
        @input=${(e: Event) => this.setDraft(formKey, (e.target as HTMLTextAreaElement).value)}
      ></textarea>
      <div class="form-row">
        <button type="button" class="secondary" part="button" @click=${() => this.closeEdit(c.id)}>${t.cancel}</button>
        <button type="submit" class="primary" part="button submit" ?disabled=${busy}>${t.save}</button>
      </div>
      ${error ? html`<p class="error" part="error" role="alert">${error}</p>` : nothing}
    </form>`;
  }

  private renderDeleteConfirm(id: string): TemplateResult {
    const t = this.t;
    return html`<div class="form-row" role="group" aria-label=${t.delete_confirm}>
      <span class="hint">${t.delete_confirm}</span>
      <button class="secondary" part="button" data-action="keep" @click=${() => this.closeDelete(id)}>${t.delete_no}</button>
      <button
        class="primary"
        part="button"
        data-action="confirm-delete"
        ?disabled=${this.busy.has(`delete:${id}`)}
        @click=${() => void this.deleteOwn(id)}
      >
        ${t.delete_yes}
      </button>
    </div>`;
  }

  private renderReport(id: string): TemplateResult {
    const t = this.t;
    const formKey = `report:${id}`;
    return html`<form
      part="report"
      @submit=${(e: Event) => {
        e.preventDefault();
        void this.sendReport(id);
      }}
    >
      <fieldset>
        <legend>${t.report_title}</legend>
        ${REPORT_REASONS.map(
          (r) =>
            html`<label
              ><input
                type="radio"
                name=${`reason-${id}`}
                value=${r}
                .checked=${this.reportReason === r}
                @change=${() => {
                  this.reportReason = r;
                }}
              />
              ${t[`reason_${r}`]}</label
            >`,
        )}
        <label class="sr-only" for=${`field-${formKey}`}>${t.report_note}</label>
        <textarea
          id=${`field-${formKey}`}
          placeholder=${t.report_note}
          .value=${this.drafts.get(formKey) ?? ""}
          @input=${(e: Event) => this.setDraft(formKey, (e.target as HTMLTextAreaElement).value)}
        ></textarea>
        <div class="form-row">
          <button type="button" class="secondary" part="button" @click=${() => this.closeReport(id)}>${t.cancel}</button>
          <button type="submit" class="primary" part="button submit" ?disabled=${this.busy.has(formKey)}>${t.report_send}</button>
        </div>
      </fieldset>
    </form>`;
  }

  private relative(when: Date): string {
    const seconds = (when.getTime() - Date.now()) / 1000;
    const units: [Intl.RelativeTimeFormatUnit, number][] = [
      ["year", 31_536_000],
      ["month", 2_592_000],
      ["day", 86_400],
      ["hour", 3_600],
      ["minute", 60],
    ];
    const format = new Intl.RelativeTimeFormat(this.locale, { numeric: "auto" });
    for (const [unit, size] of units) if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
    return format.format(0, "minute");
  }

  // ---------------------------------------------------------------- small state changes

  private changeSort(value: string): void {
    this.sort = value;
  }

  private setDraft(formKey: string, value: string): void {
    this.drafts.set(formKey, value);
    // a changed text is a new comment: a retry of the old one would be refused as a different request
    this.idempotencyKeys.delete(formKey);
    if (this.formErrors.delete(formKey)) this.requestUpdate();
    else if (this.settings.maxBodyLength - value.length < 200) this.requestUpdate();
  }

  private openReply(id: string): void {
    this.replyTo = id;
    this.requestUpdate();
    void this.focusLater(`#field-reply\\:${CSS.escape(id)}`);
  }

  private closeReply(id: string): void {
    this.replyTo = null;
    this.requestUpdate();
    void this.focusLater(`[data-action="reply"][data-for="${id}"]`);
  }

  private openEdit(c: Comment): void {
    this.editing = c.id;
    this.drafts.set(`edit:${c.id}`, c.body);
    this.requestUpdate();
    void this.focusLater(`#field-edit\\:${CSS.escape(c.id)}`);
  }

  private closeEdit(id: string): void {
    this.editing = null;
    this.drafts.delete(`edit:${id}`);
    this.requestUpdate();
    void this.focusLater(`[data-action="edit"][data-for="${id}"]`);
  }

  private openDelete(id: string): void {
    this.confirmingDelete = id;
    this.requestUpdate();
    void this.focusLater(`[data-action="keep"]`);
  }

  private closeDelete(id: string): void {
    this.confirmingDelete = null;
    this.requestUpdate();
    void this.focusLater(`[data-action="delete"][data-for="${id}"]`);
  }

  private openReport(id: string): void {
    this.reporting = id;
    this.reportReason = "spam";
    this.requestUpdate();
    void this.focusLater(`input[name="reason-${CSS.escape(id)}"]`);
  }

  private closeReport(id: string): void {
    this.reporting = null;
    this.requestUpdate();
    void this.focusLater(`[data-action="report"][data-for="${id}"]`);
  }

  private expandKinds(id: string): void {
    this.moreKinds.add(id);
    this.requestUpdate();
  }
}

export { EN as ENGLISH_STRINGS };

if (!customElements.get("engagement-thread")) customElements.define("engagement-thread", EngagementThread);
