// A reader's own stream (GET /api/v1/stream/me, the `myInbox` subscription; contract section 19):
// `connected`, then `inbox_item` frames (id: the reader's inbox sequence, inbox_items.seq) and
// `inbox_read` frames (`{"unreadCount"}`, no id).
//
// The database is the source of truth and the bus only pokes: a reader's channel (EventBus
// subscribeReader) says "new items" or "read, unreadCount n". On a poke each session reads the
// listed items with seq > the last it sent (ReaderFeed, the inbox module's query), so the replay
// after Last-Event-ID and live delivery are one query and exact: nothing is skipped or sent twice
// whatever pokes are lost, repeated or crossed. Lost pokes are caught by a bus reconnect (every
// session reads again) and by the hub's periodic check of the readers' inbox sequences.
import { formatEvent } from "./sse-writer.js";
import { CloseSignal } from "./close-signal.js";
import type { EndReason } from "./session.js";

export interface ReaderKey {
  tenantId: string;
  readerId: string;
}

export const readerKey = (k: ReaderKey) => JSON.stringify([k.tenantId, k.readerId]);

/** One frame of a reader's stream; the SSE bytes are built once. */
export class ReaderFrame {
  private bytes: Buffer | undefined;

  constructor(
    readonly event: "inbox_item" | "inbox_read",
    /** the item's inbox sequence (the SSE id); null for inbox_read */
    readonly seq: number | null,
    /** the data as JSON text */
    readonly json: string,
    /** the data as the GraphQL subscription resolves it */
    readonly value: unknown,
  ) {}

  get sseBytes(): Buffer {
    this.bytes ??= Buffer.from(formatEvent({ ...(this.seq === null ? {} : { id: this.seq }), event: this.event, data: this.json }), "utf8");
    return this.bytes;
  }

  static read(unreadCount: number): ReaderFrame {
    return new ReaderFrame("inbox_read", null, JSON.stringify({ unreadCount }), { unreadCount });
  }
}

export interface FeedRead {
  /** listed items with seq > after, ascending */
  items: ReaderFrame[];
  /** whether more items follow the last one (read again after it) */
  more: boolean;
  /** the reader's inbox sequence now (the last seq given to them; 0 for none) */
  head: number;
  unreadCount: number;
}

/** Where a reader's items come from (src/modules/inbox/engine/feed.ts). */
export interface ReaderFeed {
  /**
   * The reader's listed items (visible, within retention) with seq > `after` (none when null), at
   * most `limit`, with the reader's inbox head and unread count, in one statement.
   */
  read(key: ReaderKey, after: number | null, limit: number, keptSince: Date): Promise<FeedRead>;
  /** The inbox heads of these readers (absent: none given yet). */
  heads(keys: readonly ReaderKey[]): Promise<Map<string, number>>;
}

export interface ReaderConnectedInfo {
  scope: "me";
  readerId: string;
  replayed: number;
  unreadCount: number;
  heartbeatSeconds: number;
}

/** The transports of a reader's stream: SseSink and QueueSink take these besides discussion frames. */
export interface ReaderSink {
  /** `connected`, its id the inbox sequence the stream continues after. */
  openReader(info: ReaderConnectedInfo, position: number): void;
  /** False when the sink could not take it (closed, over its bound). */
  frame(f: ReaderFrame): boolean;
  heartbeat?(): void;
  beginLive?(): void;
  end(reason: EndReason): void;
  onClose(cb: () => void): void;
  readonly closed: boolean;
  flushed(): Promise<void>;
}

/** Items read per statement; a longer replay takes several, sent in order. */
export const FEED_BATCH = 500;

export interface ReaderStartOptions {
  /** Last-Event-ID; null = live only */
  after: number | null;
  heartbeatSeconds: number;
  maxConnectionSeconds: number;
  /** the oldest creation time an item may have to be listed (inbox.retentionDays) */
  keptSince: () => Date;
}

export class ReaderSession {
  /** the last seq sent (or the position the stream continues after) */
  lastSeq = 0;
  /** the highest inbox head a read saw: the periodic check reads again when the head passed it */
  knownHead = 0;
  private started = false;
  private pulling = false;
  private again = false;
  /** pokes that came before the start: read once started */
  private pokedEarly = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private maxTimer: NodeJS.Timeout | undefined;
  private readonly closing = new CloseSignal();
  private keptSince: () => Date = () => new Date(0);

  constructor(
    readonly key: ReaderKey,
    private readonly sink: ReaderSink,
    private readonly feed: ReaderFeed,
    private readonly onError: (err: unknown) => void,
  ) {
    sink.onClose(() => this.close());
  }

  get closed(): boolean {
    return this.closing.closed;
  }

  onClose(hook: () => void): void {
    this.closing.onClose(hook);
  }

  /** Reads the replay (seq after `after`), then sends `connected`, the replay, and goes live. */
  async start(o: ReaderStartOptions): Promise<void> {
    this.keptSince = o.keptSince;
    const items: ReaderFrame[] = [];
    let read = await this.feed.read(this.key, o.after, FEED_BATCH, this.keptSince());
    const head = read.head;
    let unreadCount = read.unreadCount;
    items.push(...read.items);
    while (read.more && !this.closing.closed) {
      read = await this.feed.read(this.key, items.at(-1)?.seq ?? head, FEED_BATCH, this.keptSince());
      items.push(...read.items);
      unreadCount = read.unreadCount;
    }
    if (this.closing.closed) return;
    // with no Last-Event-ID the head; with one, the id given (the head when it is past it)
    const position = o.after === null ? head : Math.min(o.after, head);
    const replay = items.filter((f) => (f.seq ?? 0) > position);
    this.lastSeq = position;
    this.knownHead = head;
    this.sink.openReader(
      { scope: "me", readerId: this.key.readerId, replayed: replay.length, unreadCount, heartbeatSeconds: o.heartbeatSeconds },
      position,
    );
    for (const f of replay) this.send(f);
    this.lastSeq = Math.max(this.lastSeq, head);
    this.sink.beginLive?.();
    this.started = true;
    if (this.closing.closed || this.sink.closed) return this.close();
    if (this.sink.heartbeat) {
      const hb = () => this.sink.heartbeat?.();
      this.heartbeatTimer = setInterval(hb, o.heartbeatSeconds * 1000);
    }
    this.maxTimer = setTimeout(() => this.end("max-connection-time"), o.maxConnectionSeconds * 1000);
    if (this.pokedEarly) this.pull();
  }

  /** From the reader's channel: new items (read them), or a mark-read with the unread count after it. */
  poked(unreadCount?: number): void {
    if (this.closing.closed) return;
    if (unreadCount !== undefined) {
      // before the start: `connected` carries a count read after this one
      if (this.started && !this.sink.frame(ReaderFrame.read(unreadCount))) this.close();
      return;
    }
    if (!this.started) {
      this.pokedEarly = true;
      return;
    }
    this.pull();
  }

  /** After a bus reconnect (pokes may have been lost): the items missed, and the unread count now. */
  refresh(): void {
    if (!this.started) return void (this.pokedEarly = true);
    this.pull(true);
  }

  /** Reads the items after the last one sent; one read at a time, again when poked meanwhile. */
  pull(withCount = false): void {
    if (this.closing.closed || !this.started) return;
    if (this.pulling) {
      this.again = true;
      return;
    }
    this.pulling = true;
    void (async () => {
      try {
        let sendCount = withCount;
        for (;;) {
          this.again = false;
          const read = await this.feed.read(this.key, this.lastSeq, FEED_BATCH, this.keptSince());
          if (this.closing.closed) return;
          this.knownHead = Math.max(this.knownHead, read.head);
          for (const f of read.items) this.send(f);
          if (sendCount) {
            sendCount = false;
            if (!this.sink.frame(ReaderFrame.read(read.unreadCount))) return this.close();
          }
          if (!read.more && !this.again) return;
        }
      } catch (err) {
        this.onError(err);
      } finally {
        this.pulling = false;
      }
    })();
  }

  end(reason: EndReason): void {
    if (this.closing.closed) return;
    if (!this.started) return this.close();
    this.sink.end(reason);
    this.close();
  }

  close(): void {
    if (this.closing.closed) return;
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.maxTimer);
    this.closing.fire();
  }

  private send(f: ReaderFrame): void {
    if (this.closing.closed || f.seq === null || f.seq <= this.lastSeq) return;
    this.lastSeq = f.seq;
    if (!this.sink.frame(f)) this.close();
  }
}
