// What <engagement-thread> reads: the first page with the reader and their settings, further pages
// (Load more) and replies, into the store (embed/src/thread/store.ts), and the stream's events
// applied to it. Events that arrive while a first page loads are held and applied after it (applying
// one the page already shows changes nothing); a load that a newer one overtook is dropped. A load
// that opens at a comment (a permalink) reads its context first and shows the page of top-level
// comments that begins with its thread, the replies down to it placed under their parents. A first
// load that learns of a session kept from the hosted sign-in (embed/src/thread/session.ts) loads again with it.
import type { ReaderSettings, ThreadApi, Viewer } from "./api.js";
import type { ThreadIsland } from "./island.js";
import { ThreadStore, type LiveEvent, type Sort } from "./store.js";

const DEFAULT_SETTINGS: ReaderSettings = {
  reactionKinds: ["like"],
  pageReactionKinds: [],
  editWindowSeconds: 900,
  maxBodyLength: 10_000,
  votes: "off",
  signInUrl: null,
  signInMethods: [],
};

/** What the loads need from the element. */
export interface LoaderHost {
  /** the element's client (null: it shows no discussion) and discussion now */
  target(): { api: ThreadApi | null; discussionId: string | null };
  sort(): Sort;
  identity(): Promise<string | null>;
  /** resolves when the first page may be read (the stream is live, or could not be soon) */
  afterStreamOpens(): Promise<void>;
  /** a load found the reader signed in */
  signedIn(): void;
  /** the tenant's settings arrived; true: load again (they made a stored hosted sign-in session usable) */
  learned(settings: ReaderSettings): boolean;
  describe(e: unknown): string;
  /** new top-level comments by others wait behind the button: `waiting` of them now */
  incoming(waiting: number): void;
  /** the comment a load opens at (a permalink), or null for the first page */
  openAt(): string | null;
  /** a load that opened at `id` is in the store: whether the thread shows that comment */
  opened(id: string, shown: boolean): void;
  requestUpdate(): void;
}

export class ThreadLoader {
  store = new ThreadStore("newest");
  viewer: Viewer | null = null;
  settings: ReaderSettings = DEFAULT_SETTINGS;
  status: "loading" | "ready" | "failed" = "loading";
  notice: string | null = null;
  loadingMore = false;
  /** the page shown begins at a permalink's thread, not at the list's start */
  openedAtThread = false;
  /** comments whose next replies are being loaded */
  readonly loadingReplies = new Set<string>();
  private generation = 0;
  /** events that arrived while the first page loads, applied after it */
  private buffered: LiveEvent[] | null = [];

  constructor(private readonly host: LoaderHost) {}

  /** Reads the first page again (and the reader, and their settings), keeping what is shown until it is there. */
  async load(): Promise<void> {
    const host = this.host;
    const { api, discussionId } = host.target();
    if (!api || !discussionId) return;
    const generation = ++this.generation;
    this.status = this.store.top.length ? this.status : "loading";
    this.buffered ??= [];
    host.requestUpdate();
    try {
      const identity = await host.identity();
      const sort = host.sort();
      const target = host.openAt();
      const context = target ? api.context(target, sort, identity) : Promise.resolve(null);
      const [page, basics, found] = await Promise.all([
        host.afterStreamOpens().then(async () => api.thread(discussionId, sort, identity, (await context)?.rootCursor ?? null)),
        api.basics(identity),
        context,
      ]);
      if (generation !== this.generation) return;
      if (host.learned(basics.readerSettings)) return await this.load();
      this.viewer = basics.viewer;
      this.settings = basics.readerSettings;
      if (basics.viewer) host.signedIn();
      const store = new ThreadStore(sort, basics.viewer?.id ?? null);
      store.reset(page.comments);
      if (found) store.placeChain([...found.ancestors, found.comment]);
      store.state = page.discussion?.state ?? "open";
      store.total = page.discussion?.commentCount ?? 0;
      // no discussion yet: its every event is newer than this (empty) page
      store.seq = page.discussion?.seq ?? 0;
      store.pageReactions = page.discussion?.reactions ?? {};
      store.myPageReactions = page.discussion?.myReactions ?? [];
      store.blueskyUrl = page.discussion?.bluesky?.url ?? null;
      for (const event of this.buffered ?? []) store.apply(event);
      this.buffered = null;
      this.store = store;
      this.openedAtThread = !!found;
      this.status = "ready";
      if (target) host.opened(target, store.isShown(target) && isPlaced(store, target));
    } catch (e) {
      if (generation !== this.generation) return;
      this.status = "failed";
      this.notice = host.describe(e);
    }
    host.requestUpdate();
  }

  /**
   * Shows a server-rendered first page (its island, embed/src/thread/island.ts) at once, as a first
   * load would have it for a reader with no identity: no request for it. The stream, resumed after
   * the island's seq, brings what changed since. A reader the page (or a kept hosted sign-in) names
   * is then loaded as usual, the island shown meanwhile.
   */
  async seed(island: ThreadIsland): Promise<void> {
    const host = this.host;
    const store = new ThreadStore(island.sort, null);
    store.reset(island.thread.comments);
    store.state = island.thread.discussion?.state ?? "open";
    store.total = island.thread.discussion?.commentCount ?? 0;
    store.seq = island.seq;
    store.pageReactions = island.thread.discussion?.reactions ?? {};
    store.blueskyUrl = island.thread.discussion?.bluesky?.url ?? null;
    this.store = store;
    this.settings = island.readerSettings;
    this.viewer = null;
    this.buffered = null;
    this.status = "ready";
    host.requestUpdate();
    const usable = host.learned(island.readerSettings);
    if (usable || host.openAt() || (await host.identity())) await this.load();
  }

  async loadMore(): Promise<void> {
    const host = this.host;
    const { api, discussionId } = host.target();
    const after = this.store.topAfter;
    if (!api || !discussionId || !after || this.loadingMore) return;
    this.loadingMore = true;
    host.requestUpdate();
    try {
      this.store.addTopPage(await api.more(discussionId, this.store.sort, after, await host.identity()));
    } catch (e) {
      this.notice = host.describe(e);
    } finally {
      this.loadingMore = false;
      host.requestUpdate();
    }
  }

  async loadReplies(parentId: string): Promise<void> {
    const host = this.host;
    const { api, discussionId } = host.target();
    if (!api || !discussionId || this.loadingReplies.has(parentId)) return;
    this.loadingReplies.add(parentId);
    host.requestUpdate();
    try {
      const after = this.store.repliesAfter.get(parentId) ?? null;
      this.store.addReplies(parentId, await api.replies(discussionId, parentId, after, await host.identity()));
    } catch (e) {
      this.notice = host.describe(e);
    } finally {
      this.loadingReplies.delete(parentId);
      host.requestUpdate();
    }
  }

  /** A stream event: held while a first page loads, else applied to what is shown. */
  apply(event: LiveEvent): void {
    if (this.buffered) {
      this.buffered.push(event);
      return;
    }
    const before = this.store.incoming.length;
    if (this.store.apply(event)) {
      const waiting = this.store.incoming.length;
      if (waiting > before) this.host.incoming(waiting);
      this.host.requestUpdate();
    }
  }
}

/** Whether a comment hangs from a top-level comment of the page, every comment between shown. */
function isPlaced(store: ThreadStore, id: string): boolean {
  const parent = store.comments.get(id)?.parentId;
  if (!parent) return store.top.includes(id);
  return store.isShown(parent) && (store.children.get(parent) ?? []).includes(id) && isPlaced(store, parent);
}
