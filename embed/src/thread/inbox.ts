// The signed-in reader's side of <engagement-thread> (contract section 19): the bell with their unread
// count and inbox (GraphQL myInbox, as GET /me/inbox; opening the list marks the items it shows read, POST
// /me/inbox/read), kept live by their own stream (a `{"scope":"me"}` ticket, then /stream/me:
// `inbox_item` adds an item, `inbox_read` — a read in another tab — sets the count; `connected` sets it
// too, read where the stream begins, so an item written between the list's read and the stream's start
// is counted, and the items it replays after a drop are not counted again), and the Follow
// toggle of the discussion (PUT /discussions/{id}/subscription, `all` ↔ `replies`). Nothing of it
// exists while the reader is signed out. The list is read with GraphQL `myInbox`, whose items carry their
// discussion's address (`discussionUrl`), so an item of another discussion links to its comment there. Drawn by embed/src/thread/bell.ts.
import { ServiceError, type InboxItem, type ThreadApi } from "./api.js";

export type FollowMode = "all" | "replies" | "off";

/** What the inbox needs from the element. */
export interface InboxHost {
  identity(): Promise<string | null>;
  describe(e: unknown): string;
  /** something to say in the live region (a follow toggled, a failure) */
  announce(text: string): void;
  /** what to say once the Follow toggle changed */
  followed(mode: FollowMode): string;
  requestUpdate(): void;
}

/** how many items the bell's list shows */
const LIST_SIZE = 10;

export class ReaderInbox {
  /** whether the reader is signed in (the bell and Follow are drawn) */
  active = false;
  unreadCount = 0;
  items: InboxItem[] = [];
  /** the list is open */
  open = false;
  /** the reader's mode for this discussion; null until known */
  follow: FollowMode | null = null;
  private api: ThreadApi | null = null;
  private discussionId: string | null = null;
  private identity: string | null = null;
  private source: EventSource | null = null;
  private lastEventId: string | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private retryDelay = 1000;
  /** items the stream's `connected` said it replays next: its unreadCount already holds them */
  private replaying = 0;
  /** bumped by each start/stop, so the answers of an older one are dropped */
  private generation = 0;

  constructor(private readonly host: InboxHost) {}

  /** (Re)reads the reader's inbox and follow mode and opens their stream; signed out: nothing. */
  async start(api: ThreadApi | null, discussionId: string | null): Promise<void> {
    this.stop();
    const generation = this.generation;
    const identity = api ? await this.host.identity() : null;
    if (generation !== this.generation) return;
    this.api = api;
    this.discussionId = discussionId;
    this.identity = identity;
    if (!api || !identity) return this.host.requestUpdate();
    try {
      const [page, follow] = await Promise.all([this.readList(), discussionId ? this.readFollow(discussionId) : Promise.resolve(null)]);
      if (generation !== this.generation) return;
      this.items = page.items;
      this.unreadCount = page.unreadCount;
      this.follow = follow;
      this.active = true;
    } catch {
      // an identity the service refuses, or no service: the thread says so itself; no bell
      return;
    } finally {
      this.host.requestUpdate();
    }
    void this.openStream(generation);
  }

  stop(): void {
    this.generation++;
    clearTimeout(this.retryTimer);
    this.source?.close();
    this.source = null;
    this.lastEventId = null;
    this.active = false;
    this.open = false;
    this.items = [];
    this.unreadCount = 0;
    this.follow = null;
  }

  /** Opens or closes the list; opening it reads it afresh and marks what it shows read. */
  async toggleList(): Promise<void> {
    this.open = !this.open;
    this.host.requestUpdate();
    if (!this.open) return;
    try {
      const page = await this.readList();
      this.items = page.items;
      this.unreadCount = page.unreadCount;
      this.host.requestUpdate();
      const unread = page.items.filter((i) => i.readAt === null).map((i) => i.id);
      if (unread.length) await this.markRead({ ids: unread });
    } catch (e) {
      this.host.announce(this.host.describe(e));
    }
  }

  /** Marks every item read. */
  markAllRead(): Promise<void> {
    return this.markRead({ all: true }).catch((e: unknown) => this.host.announce(this.host.describe(e)));
  }

  /** Follows the discussion (`all`) or goes back to replies only. */
  async toggleFollow(): Promise<void> {
    const { api, discussionId, identity } = this;
    if (!api || !discussionId || !identity) return;
    const mode: FollowMode = this.follow === "all" ? "replies" : "all";
    try {
      const answer = await api.rest<{ mode: FollowMode }>(
        "PUT",
        `/discussions/${encodeURIComponent(discussionId)}/subscription`,
        { mode },
        identity,
      );
      this.follow = answer.mode;
      this.host.announce(this.host.followed(answer.mode));
    } catch (e) {
      this.host.announce(this.host.describe(e));
    }
    this.host.requestUpdate();
  }

  private async markRead(body: { ids: string[] } | { all: true }): Promise<void> {
    const { api, identity } = this;
    if (!api || !identity) return;
    const answer = await api.rest<{ unreadCount: number }>("POST", "/me/inbox/read", body, identity);
    const now = new Date().toISOString();
    const ids = "ids" in body ? new Set(body.ids) : null;
    this.items = this.items.map((i) => (i.readAt === null && (!ids || ids.has(i.id)) ? { ...i, readAt: now } : i));
    this.unreadCount = answer.unreadCount;
    this.host.requestUpdate();
  }

  private readList(): Promise<{ items: InboxItem[]; unreadCount: number }> {
    return this.api!.inbox(LIST_SIZE, this.identity!);
  }

  /** The reader's follow mode; null while the discussion does not exist (its first comment creates it). */
  private async readFollow(discussionId: string): Promise<FollowMode | null> {
    try {
      const answer = await this.api!.rest<{ mode: FollowMode }>(
        "GET",
        `/discussions/${encodeURIComponent(discussionId)}/subscription`,
        undefined,
        this.identity,
      );
      return answer.mode;
    } catch (e) {
      if (e instanceof ServiceError && e.code === "not_found") return null;
      throw e;
    }
  }

  /** The reader's own stream; after a refusal (an expired ticket) a new ticket resumes from the last item seen. */
  private async openStream(generation: number): Promise<void> {
    const { api, identity } = this;
    if (!api || !identity || generation !== this.generation) return;
    let ticket: string;
    try {
      ticket = await api.meTicket(identity);
    } catch {
      return this.reopenLater(generation);
    }
    if (generation !== this.generation) return;
    const source = new EventSource(api.streamUrl(null, ticket, this.lastEventId));
    this.source = source;
    source.addEventListener("connected", (e) => this.onConnected(e as MessageEvent<string>));
    source.addEventListener("inbox_item", (e) => this.onItem(e as MessageEvent<string>));
    source.addEventListener("inbox_read", (e) => this.onRead(e as MessageEvent<string>));
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) return;
      source.close();
      if (this.source === source) this.source = null;
      this.reopenLater(generation);
    };
  }

  private reopenLater(generation: number): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.openStream(generation), this.retryDelay);
    this.retryDelay = Math.min(this.retryDelay * 2, 30_000);
  }

  /** The stream began (or resumed): the unread count where it begins, and how many replayed items follow. */
  private onConnected(e: MessageEvent<string>): void {
    this.retryDelay = 1000;
    const connected = parse<{ unreadCount?: unknown; replayed?: unknown }>(e.data);
    if (typeof connected?.unreadCount !== "number") return;
    this.unreadCount = connected.unreadCount;
    this.replaying = typeof connected.replayed === "number" ? connected.replayed : 0;
    this.host.requestUpdate();
  }

  private onItem(e: MessageEvent<string>): void {
    if (e.lastEventId) this.lastEventId = e.lastEventId;
    // a replayed item is in the count `connected` gave
    const replayed = this.replaying > 0;
    if (replayed) this.replaying--;
    const item = parse<InboxItem>(e.data);
    if (!item?.id || this.items.some((i) => i.id === item.id)) return;
    this.items = [item, ...this.items].slice(0, LIST_SIZE);
    if (item.readAt === null && !replayed) this.unreadCount++;
    this.host.requestUpdate();
  }

  private onRead(e: MessageEvent<string>): void {
    const read = parse<{ unreadCount: number }>(e.data);
    if (typeof read?.unreadCount !== "number") return;
    this.unreadCount = read.unreadCount;
    // read elsewhere: which items is not said; none left unread marks them all
    if (read.unreadCount === 0) this.items = this.items.map((i) => (i.readAt === null ? { ...i, readAt: new Date().toISOString() } : i));
    this.host.requestUpdate();
  }
}

function parse<T>(data: string): T | null {
  try {
    return JSON.parse(data) as T;
  } catch {
    return null;
  }
}
