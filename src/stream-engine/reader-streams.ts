// Readers' own streams on this instance (GET /api/v1/stream/me, the myInbox subscription): one bus
// subscription per reader with local sessions (taken with the first, dropped with the last), the
// same connection slots as discussions' streams, and the head check that makes a lost poke good.
import type { EventBus } from "../events/bus.js";
import { errors } from "../lib/errors.js";
import type { StreamSlots } from "./limits.js";
import { readerKey, ReaderSession, type ReaderFeed, type ReaderKey, type ReaderSink } from "./reader-stream.js";
import type { ReaderOpenRequest, StreamHubServices, Ticketed } from "./hub-types.js";
import { unavailableOr } from "./bus-unavailable.js";

/** The sessions of one reader on this instance, and their bus subscription. */
interface ReaderChannel {
  sessions: Set<ReaderSession>;
  ready: Promise<() => Promise<void>>;
}

export interface ReaderStreamsDeps {
  app: StreamHubServices;
  bus: EventBus;
  /** readers' inbox items (absent: a reader's stream is refused with 503) */
  feed: ReaderFeed | undefined;
  slots: StreamSlots;
  /** the open sessions, which the hub counts and ends */
  sessions: Set<ReaderSession>;
  /** a stream opened with a ticket: a later connection with the same ticket supersedes it */
  trackTicket(session: Ticketed, ticket: NonNullable<ReaderOpenRequest["ticket"]>): void;
}

export class ReaderStreams {
  private readonly readers = new Map<string, ReaderChannel>();
  readonly sessions: Set<ReaderSession>;
  readonly sinks = new Map<ReaderSession, ReaderSink>();

  constructor(private readonly deps: ReaderStreamsDeps) {
    this.sessions = deps.sessions;
  }

  /**
   * Opens a reader's own stream: 429 past a connection cap (the same slots as discussion streams),
   * 503 while stopping or when the bus is down. The reader's bus subscription is live before the
   * first read, so no item committed after that read goes unannounced.
   */
  async open(req: ReaderOpenRequest, sink: ReaderSink, stopping: () => boolean): Promise<ReaderSession> {
    const feed = this.deps.feed;
    if (!feed) throw errors.unavailable("Reader streams are not served here.");
    const { settings } = req;
    const release = await this.deps.slots.acquire(req.tenantId, settings.rateLimits.streamConnections);
    const key = { tenantId: req.tenantId, readerId: req.readerId };
    const session = new ReaderSession(key, sink, feed, (err) =>
      this.deps.app.log.warn({ err, tenantId: key.tenantId }, "reader stream: reading the inbox failed"),
    );
    const k = readerKey(key);
    let ch = this.readers.get(k);
    if (!ch) {
      const sessions = new Set<ReaderSession>();
      const created: ReaderChannel = {
        sessions,
        ready: this.deps.bus.subscribeReader(key.tenantId, key.readerId, (poke) => {
          for (const rs of sessions) rs.poked(poke.unreadCount);
        }),
      };
      created.ready.catch(() => {
        if (this.readers.get(k) === created) this.readers.delete(k);
      });
      this.readers.set(k, created);
      ch = created;
    }
    const channel = ch;
    channel.sessions.add(session);
    this.sessions.add(session);
    this.sinks.set(session, sink);
    session.onClose(() => {
      channel.sessions.delete(session);
      this.sessions.delete(session);
      this.sinks.delete(session);
      release();
      if (channel.sessions.size === 0 && this.readers.get(k) === channel) {
        this.readers.delete(k);
        void channel.ready.then((off) => off()).catch(() => undefined);
      }
    });
    try {
      try {
        await channel.ready;
      } catch (err) {
        throw unavailableOr(err);
      }
      if (req.ticket) this.deps.trackTicket(session, req.ticket);
      const days = settings.inbox.retentionDays;
      await session.start({
        after: req.after,
        heartbeatSeconds: settings.stream.heartbeatSeconds,
        maxConnectionSeconds: settings.stream.maxConnectionSeconds,
        keptSince: () => new Date(this.deps.app.clock.now().getTime() - days * 86_400_000),
      });
      if (stopping()) session.end("shutdown");
      if (session.closed && !sink.closed) throw errors.unavailable("The stream could not start; reconnect.");
      return session;
    } catch (err) {
      session.close();
      throw err;
    }
  }

  /** After a bus reconnect: every session reads what it may have missed. */
  refresh(): void {
    for (const rs of this.sessions) rs.refresh();
  }

  /** Readers whose inbox sequence passed what their streams read: they read again. */
  async checkHeads(): Promise<void> {
    if (this.sessions.size === 0 || !this.deps.feed) return;
    const keys = new Map<string, ReaderKey>();
    for (const rs of this.sessions) keys.set(readerKey(rs.key), rs.key);
    const heads = await this.deps.feed.heads([...keys.values()]);
    for (const rs of this.sessions) {
      const head = heads.get(readerKey(rs.key));
      if (head !== undefined && head > rs.knownHead) rs.pull();
    }
  }

  /** Drops every reader's bus subscription (the sessions are ended by the hub first). */
  async close(): Promise<void> {
    await Promise.all([...this.readers.values()].map((ch) => ch.ready.then((off) => off()).catch(() => undefined)));
    this.readers.clear();
  }
}
