// The instance's streams: one Channel per discussion with local sessions (created with the first,
// dropped with the last, so the bus subscription is held exactly while needed), connection caps,
// catch-up after a bus reconnect, a periodic head check against the log, and graceful shutdown.
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import { BusClosedError, BusTimeoutError, BusUnavailableError, type EventBus } from "../events/bus.js";
import { LiveEvent } from "./live-event.js";
import type { Sql } from "../db/sql.js";
import {
  coalescingReplays,
  createEventLogReader,
  headKey,
  openingRead,
  replayRead,
  type EventLogReader,
  type OpeningRead,
  type ReplayResult,
} from "../events/replay.js";
import { invalidTicket, redeemWith, type RedeemedTicket, type TicketRedemption } from "./ticket-redemption.js";
import { resolveSettings, type Settings } from "../tenancy/settings-model.js";
import { AppError, errors } from "../lib/errors.js";
import { Channel } from "./channel.js";
import { createStreamSlots, type StreamSlots } from "./limits.js";
import { Session, type StreamSink } from "./session.js";
import type { Viewer } from "./event-visibility.js";
import { createControlChannel, type ControlChannel } from "../lib/control-channel.js";
import { readerKey, ReaderSession, type ReaderFeed, type ReaderKey, type ReaderSink } from "./reader-stream.js";
import type { RedisClient, RedisTarget } from "../lib/redis-connection.js";
import { DEFAULT_PRESENCE_OPTIONS, DEFAULT_PRESENCE_PER_ADDRESS, Presence, type PresenceOptions } from "./presence.js";

export interface HubOptions extends PresenceOptions {
  /** how long a gap in bus messages may last before the log is read */
  gapGraceMs: number;
  /** how often the heads of the open channels are compared with the log */
  headCheckMs: number;
  /** SSE writer bound per client (bytes) */
  maxBufferedBytes: number;
  /** how long shutdown waits for the final frames to flush */
  shutdownFlushMs: number;
  /** then a moment for transports that stream through async pipes (GraphQL over SSE) */
  shutdownLingerMs: number;
}

export const DEFAULT_HUB_OPTIONS: HubOptions = {
  gapGraceMs: 50,
  headCheckMs: 5_000,
  maxBufferedBytes: 1024 * 1024,
  shutdownFlushMs: 2_000,
  shutdownLingerMs: 100,
  ...DEFAULT_PRESENCE_OPTIONS,
};

export interface OpenRequest {
  tenantId: string;
  discussionId: string;
  viewer: Viewer;
  /** Last-Event-ID / `after`; null = live only */
  after: number | null;
  settings: Settings;
  /** a stream opened with a ticket: a later connection with the same ticket supersedes this one */
  ticket?: { hash: string; connectionId: string; resumed: boolean } | undefined;
  /** the client's address (the connection's peer): presence counts a reader-less stream by it */
  address?: string | null | undefined;
  /**
   * A ticket that names `tenantId` and is not redeemed yet: the connect's one statement redeems it
   * and reads the log (src/stream-engine/ticket-redemption.ts). `viewer` and `ticket` then come from the redemption.
   */
  redeem?: PendingTicket | undefined;
}

export interface PendingTicket {
  redemption: Omit<TicketRedemption, "now">;
  /** Checks the redeemed ticket (its minter, the origin) and says who the stream is for; throws a problem. */
  accept(ticket: RedeemedTicket, settings: Settings): Viewer;
}

/** Where instances tell each other that a ticket's connection was superseded (`<hash> <connectionId>`). */
export const TICKET_TAKEOVER_CHANNEL = "eng:stream:ticket-takeover";

/** What the hub needs of the app's services. */
export interface StreamHubServices {
  prisma: PrismaClient;
  /** plain SQL for the log reads of a connect (head, replay) */
  sql: Sql;
  config: Pick<Config, "MAX_STREAMS_PER_INSTANCE"> & Partial<Pick<Config, "STREAM_PRESENCE" | "STREAM_PRESENCE_PER_ADDRESS">>;
  clock: Clock;
  log: Logger;
}

export interface TenantSettings {
  /** the settings when the tenant's row is cached on this instance */
  cached(tenantId: string): Settings | undefined;
  /** the settings, read when not cached; null when there is no such tenant */
  read(tenantId: string): Promise<Settings | null>;
}

export interface StreamHubDeps {
  app: StreamHubServices;
  bus: EventBus;
  /** the command connection, for the cross-instance connection count (absent: this instance only) */
  redis?: RedisClient | undefined;
  /** with `redis`: where ticket takeovers reach the other instances */
  redisTarget?: RedisTarget | undefined;
  /**
   * The key presence hashes readers and client addresses with before they reach Redis; every
   * instance must have the same one. Absent: a random one (one instance only).
   */
  presenceSecret?: Buffer;
  /** every event that arrives on the bus with its envelope (the fan-out lag metric) */
  onBusEvent?: (event: LiveEvent) => void;
  /** defaults to the database's event log */
  log?: EventLogReader;
  /** readers' inbox items, for their own streams (absent: openReader refuses with 503) */
  readerFeed?: ReaderFeed;
  /**
   * A tenant's settings: the instance's cached tenant rows (src/auth/auth-cache.ts), which a
   * settings change drops on every instance at once. Absent: read from the database every time.
   */
  tenantSettings?: TenantSettings;
  options?: Partial<HubOptions>;
}

/** A reader's own stream to open (src/stream-engine/reader-stream.ts). */
export interface ReaderOpenRequest extends ReaderKey {
  /** Last-Event-ID: an inbox seq; null = live only */
  after: number | null;
  settings: Settings;
  ticket?: { hash: string; connectionId: string; resumed: boolean } | undefined;
}

/** The sessions of one reader on this instance, and their bus subscription. */
interface ReaderChannel {
  sessions: Set<ReaderSession>;
  ready: Promise<() => Promise<void>>;
}

/** What a ticket's supersession ends. */
interface Ticketed {
  end(reason: "superseded"): void;
  onClose(hook: () => void): void;
}

export interface HubStats {
  sessions: number;
  channels: number;
  /** clients cut off for falling behind their buffer bound */
  overflows: number;
  /** catch-up reads of the event log (missed or envelope-less bus messages, reconnects, head checks) */
  logReads: number;
}

export class StreamHub {
  readonly options: HubOptions;
  private readonly channels = new Map<string, Channel>();
  private readonly sessions = new Map<Session, StreamSink>();
  /** sessions opened with a ticket, by ticket hash, with their connection id */
  private readonly ticketed = new Map<string, Map<Ticketed, string>>();
  private readonly readers = new Map<string, ReaderChannel>();
  private readonly readerSessions = new Set<ReaderSession>();
  private readonly readerSinks = new Map<ReaderSession, ReaderSink>();
  private readonly readerFeed: ReaderFeed | undefined;
  private readonly takeovers: ControlChannel;
  /** the open streams of each discussion, counted across instances (src/stream-engine/presence.ts) */
  readonly presence: Presence;
  private readonly log: EventLogReader;
  private readonly slots: StreamSlots;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly offReconnect: () => void;
  private stopping = false;
  private checking = false;
  private readonly tenantSettings: TenantSettings;
  private overflows = 0;
  private logReads = 0;

  private readonly app: StreamHubServices;
  private readonly bus: EventBus;

  private readonly onBusEvent: ((event: LiveEvent) => void) | undefined;

  constructor(deps: StreamHubDeps) {
    const { app, bus } = deps;
    this.onBusEvent = deps.onBusEvent;
    this.readerFeed = deps.readerFeed;
    this.tenantSettings = deps.tenantSettings ?? {
      cached: () => undefined,
      read: async (tenantId) => {
        const t = await app.prisma.tenant.findUnique({ where: { id: tenantId }, select: { settings: true } });
        return t && resolveSettings(t.settings);
      },
    };
    this.app = app;
    this.bus = bus;
    this.options = { ...DEFAULT_HUB_OPTIONS, ...deps.options };
    this.log = coalescingReplays(deps.log ?? createEventLogReader(app.prisma, app.sql));
    this.slots = createStreamSlots({ maxPerInstance: app.config.MAX_STREAMS_PER_INSTANCE, redis: deps.redis, log: app.log });
    this.offReconnect = bus.onReconnect(() => {
      app.log.info({ channels: this.channels.size }, "event bus reconnected; streams catch up from the log");
      for (const ch of this.channels.values()) ch.catchUp();
      for (const rs of this.readerSessions) rs.refresh();
    });
    this.timers.push(setInterval(() => void this.checkHeads(), this.options.headCheckMs).unref());
    this.presence = new Presence({
      clock: app.clock,
      log: app.log,
      redis: deps.redis,
      redisTarget: deps.redisTarget,
      options: this.options,
      people: {
        secret: deps.presenceSecret ?? randomBytes(32),
        perAddress: app.config.STREAM_PRESENCE_PER_ADDRESS ?? DEFAULT_PRESENCE_PER_ADDRESS,
      },
    });
    this.takeovers = createControlChannel({
      channel: TICKET_TAKEOVER_CHANNEL,
      redis: deps.redisTarget,
      publisher: deps.redis,
      log: app.log,
      onMessage: (msg) => {
        const [hash = "", connectionId] = msg.split(" ");
        for (const [session, conn] of this.ticketed.get(hash) ?? []) if (conn !== connectionId) session.end("superseded");
      },
    });
  }

  private trackTicket(session: Ticketed, ticket: NonNullable<OpenRequest["ticket"]>): void {
    let byConn = this.ticketed.get(ticket.hash);
    if (!byConn) this.ticketed.set(ticket.hash, (byConn = new Map()));
    byConn.set(session, ticket.connectionId);
    session.onClose(() => {
      byConn.delete(session);
      if (byConn.size === 0 && this.ticketed.get(ticket.hash) === byConn) this.ticketed.delete(ticket.hash);
    });
    // a reconnect: whichever instance still holds the ticket's previous connection ends it
    if (ticket.resumed) this.takeovers.publish(`${ticket.hash} ${ticket.connectionId}`);
  }

  /** The tenant's settings (a reconnect storm reads them once); 401 when there is no such tenant. */
  async settingsOf(tenantId: string): Promise<Settings> {
    const settings = this.tenantSettings.cached(tenantId) ?? (await this.tenantSettings.read(tenantId));
    if (!settings) throw errors.unauthenticated();
    return settings;
  }

  /** Whether this instance has the tenant's settings at hand (a ticket naming it is redeemed with the connect's read). */
  knowsTenant(tenantId: string): boolean {
    return this.tenantSettings.cached(tenantId) !== undefined;
  }

  stats(): HubStats {
    return {
      sessions: this.sessions.size + this.readerSessions.size,
      channels: this.channels.size,
      overflows: this.overflows,
      logReads: this.logReads,
    };
  }

  noteOverflow(): void {
    this.overflows++;
  }

  /**
   * Opens a session: 404 for an unknown discussion (401 for a ticket: it is not bound there), 429 past a connection cap, 503 while stopping
   * or when the bus is down. On success the sink has been opened (`connected`, then the replay).
   */
  async open(req: OpenRequest, sink: StreamSink): Promise<Session> {
    if (this.stopping) throw errors.unavailable("This instance is shutting down; reconnect.");
    const { tenantId, discussionId, settings, redeem } = req;
    const key = { tenantId, discussionId };
    // a ticket's connect takes its slot once the ticket is known to be good
    let release = redeem ? undefined : await this.slots.acquire(tenantId, settings.rateLimits.streamConnections);
    const session = new Session(tenantId, discussionId, req.viewer, sink);
    let readerId = req.viewer.readerId;
    // One database round trip per connect. A live channel proves the discussion exists (they are
    // never deleted) and knows its head: only the replay is read, shared by identical reconnects.
    // Without one, the new channel's first read is this session's: existence, head and replay in
    // one statement (null head: 404). A pending ticket is redeemed in that same statement.
    let opening: OpeningRead | undefined;
    let redeemed: { ticket: RedeemedTicket | null; replay: ReplayResult } | undefined;
    const channel = this.channelFor(tenantId, discussionId, async () => {
      const read = openingRead(key, req.after, settings.replay, this.app.clock.now());
      if (redeem) {
        const r = await redeemWith(this.app.sql, { ...redeem.redemption, now: this.app.clock.now() }, read);
        redeemed = { ticket: r.ticket, replay: r.read };
        opening = r.read;
      } else {
        opening = await this.log.opening(key, req.after, settings.replay, this.app.clock.now());
      }
      return opening.head;
    });
    // a member from now on: the session buffers what the channel delivers until it starts
    channel.add(session);
    this.sessions.set(session, sink);
    session.onClose(() => {
      channel.remove(session);
      this.sessions.delete(session);
      release?.();
      this.dropIfIdle(channel);
    });
    try {
      await channel.ready;
    } catch (err) {
      session.close();
      // Credentials before resources: tickets are only minted for discussions that exist, so a
      // ticket on a missing one is used where it is not bound — the same 401 as on another
      // existing discussion, never a 404 that would tell a ticket holder which discussions exist.
      if (redeem && err instanceof AppError && err.status === 404) throw invalidTicket();
      throw unavailableOr(err);
    }
    try {
      // where the replay ends and the buffer begins: the new channel's first head, or its head now
      const head = opening?.head ?? channel.head;
      const after = req.after === null ? null : Math.min(req.after, head);
      let ticket = req.ticket;
      if (redeem) {
        // joined a channel that was there: the redemption goes with the replay read (or alone)
        redeemed ??= await (async () => {
          const now = this.app.clock.now();
          const read = after === null ? { events: [], truncated: false } : replayRead(key, after, head, settings.replay, now);
          const r = await redeemWith(this.app.sql, { ...redeem.redemption, now }, read);
          return { ticket: r.ticket, replay: r.read };
        })();
        const t = redeemed.ticket;
        if (!t) throw invalidTicket();
        if (t.tenantId !== tenantId) {
          // the ticket named another tenant than its own (minted before tickets named theirs): open
          // again on the right channel, redeemed already
          session.close();
          const own = await this.settingsOf(t.tenantId);
          return await this.open({ ...req, ...this.openedWith(t, own, redeem), settings: own }, sink);
        }
        const own = this.openedWith(t, settings, redeem);
        session.bind(own.viewer);
        readerId = own.viewer.readerId;
        ticket = own.ticket;
        release = await this.slots.acquire(tenantId, settings.rateLimits.streamConnections);
        if (session.closed) release();
      }
      if (ticket) this.trackTicket(session, ticket);
      const { events, truncated } =
        after === null || session.closed
          ? { events: [], truncated: false }
          : (redeemed?.replay ?? opening ?? (await this.log.replay(key, after, head, settings.replay, this.app.clock.now())));
      session.start({
        after,
        head,
        replay: events.map((e) => LiveEvent.fromStored(e)),
        truncated,
        heartbeatSeconds: settings.stream.heartbeatSeconds,
        maxConnectionSeconds: settings.stream.maxConnectionSeconds,
      });
      if (this.stopping) session.end("shutdown");
      // closed before it could start while the client is still there (shutdown, or more live
      // events during the replay than a session may buffer): tell it to come back
      if (session.closed && !sink.closed) throw errors.unavailable("The stream could not start; reconnect.");
      // a reader from now until the stream closes: the one it is bound to, or else its address's
      if (!session.closed && this.app.config.STREAM_PRESENCE !== false)
        session.onClose(this.presence.join(tenantId, discussionId, session, { readerId, address: req.address ?? null }));
      return session;
    } catch (err) {
      session.close();
      throw err;
    }
  }

  /**
   * Opens a reader's own stream: 429 past a connection cap (the same slots as discussion streams),
   * 503 while stopping or when the bus is down. The reader's bus subscription is live before the
   * first read, so no item committed after that read goes unannounced.
   */
  async openReader(req: ReaderOpenRequest, sink: ReaderSink): Promise<ReaderSession> {
    if (this.stopping) throw errors.unavailable("This instance is shutting down; reconnect.");
    const feed = this.readerFeed;
    if (!feed) throw errors.unavailable("Reader streams are not served here.");
    const { settings } = req;
    const release = await this.slots.acquire(req.tenantId, settings.rateLimits.streamConnections);
    const key = { tenantId: req.tenantId, readerId: req.readerId };
    const session = new ReaderSession(key, sink, feed, (err) =>
      this.app.log.warn({ err, tenantId: key.tenantId }, "reader stream: reading the inbox failed"),
    );
    const k = readerKey(key);
    let ch = this.readers.get(k);
    if (!ch) {
      const sessions = new Set<ReaderSession>();
      const created: ReaderChannel = {
        sessions,
        ready: this.bus.subscribeReader(key.tenantId, key.readerId, (poke) => {
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
    this.readerSessions.add(session);
    this.readerSinks.set(session, sink);
    session.onClose(() => {
      channel.sessions.delete(session);
      this.readerSessions.delete(session);
      this.readerSinks.delete(session);
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
      if (req.ticket) this.trackTicket(session, req.ticket);
      const days = settings.inbox.retentionDays;
      await session.start({
        after: req.after,
        heartbeatSeconds: settings.stream.heartbeatSeconds,
        maxConnectionSeconds: settings.stream.maxConnectionSeconds,
        keptSince: () => new Date(this.app.clock.now().getTime() - days * 86_400_000),
      });
      if (this.stopping) session.end("shutdown");
      if (session.closed && !sink.closed) throw errors.unavailable("The stream could not start; reconnect.");
      return session;
    } catch (err) {
      session.close();
      throw err;
    }
  }

  /** An open request's part that a redeemed ticket decides. */
  private openedWith(
    t: RedeemedTicket,
    settings: Settings,
    pending: PendingTicket,
  ): Pick<OpenRequest, "tenantId" | "viewer" | "ticket" | "redeem"> {
    return {
      tenantId: t.tenantId,
      viewer: pending.accept(t, settings),
      ticket: { hash: t.hash, connectionId: t.connectionId, resumed: t.resumed },
      redeem: undefined,
    };
  }

  /** Every stream gets `connection-timeout` and is closed; then the bus subscriptions go. */
  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    this.offReconnect();
    const sinks: { flushed(): Promise<void> }[] = [...this.sessions.values()];
    sinks.push(...this.readerSinks.values());
    for (const session of [...this.sessions.keys()]) session.end("shutdown");
    for (const session of [...this.readerSessions]) session.end("shutdown");
    await Promise.race([
      Promise.all(sinks.map((s) => s.flushed())),
      new Promise((resolve) => setTimeout(resolve, this.options.shutdownFlushMs).unref()),
    ]);
    if (sinks.length > 0) await new Promise((resolve) => setTimeout(resolve, this.options.shutdownLingerMs).unref());
    await Promise.all([...this.channels.values()].map((ch) => ch.close()));
    await this.presence.close();
    this.channels.clear();
    await Promise.all([...this.readers.values()].map((ch) => ch.ready.then((off) => off()).catch(() => undefined)));
    this.readers.clear();
    this.takeovers.close();
    await this.slots.close();
  }

  /** The discussion's channel; a new one reads the log first with `readHead`. */
  private channelFor(tenantId: string, discussionId: string, readHead: () => Promise<number | null>): Channel {
    const key = headKey(tenantId, discussionId);
    let ch = this.channels.get(key);
    if (!ch) {
      const created = new Channel(
        tenantId,
        discussionId,
        {
          bus: this.bus,
          log: this.log,
          gapGraceMs: this.options.gapGraceMs,
          onLogRead: () => void this.logReads++,
          onBusEvent: (ev) => this.onBusEvent?.(ev),
          onError: (err, what) => this.app.log.warn({ err, tenantId, discussionId }, `stream channel: ${what} failed`),
        },
        readHead,
      );
      created.ready.catch(() => {
        if (this.channels.get(key) === created) this.channels.delete(key);
      });
      this.channels.set(key, created);
      ch = created;
    }
    return ch;
  }

  /** Readers whose inbox sequence passed what their streams read: they read again. */
  private async checkReaderHeads(): Promise<void> {
    if (this.readerSessions.size === 0 || !this.readerFeed) return;
    const keys = new Map<string, ReaderKey>();
    for (const rs of this.readerSessions) keys.set(readerKey(rs.key), rs.key);
    const heads = await this.readerFeed.heads([...keys.values()]);
    for (const rs of this.readerSessions) {
      const head = heads.get(readerKey(rs.key));
      if (head !== undefined && head > rs.knownHead) rs.pull();
    }
  }

  private dropIfIdle(ch: Channel): void {
    if (!ch.idle) return;
    const key = headKey(ch.tenantId, ch.discussionId);
    if (this.channels.get(key) === ch) this.channels.delete(key);
    void ch.close();
  }

  /** Safety net for a lost publish (or reader poke) with no later one to reveal the gap. */
  private async checkHeads(): Promise<void> {
    if (this.checking || (this.channels.size === 0 && this.readerSessions.size === 0)) return;
    this.checking = true;
    try {
      await this.checkReaderHeads().catch((err: unknown) => this.app.log.warn({ err }, "reader stream head check failed"));
      if (this.channels.size === 0) return;
      const chans = [...this.channels.values()];
      const heads = await this.log.heads(chans.map((c) => ({ tenantId: c.tenantId, discussionId: c.discussionId })));
      for (const c of chans) {
        const seq = heads.get(headKey(c.tenantId, c.discussionId));
        if (seq !== undefined) c.noteHead(seq);
      }
    } catch (err) {
      this.app.log.warn({ err }, "stream head check failed");
    } finally {
      this.checking = false;
    }
  }
}

function unavailableOr(err: unknown): unknown {
  if (err instanceof BusTimeoutError || err instanceof BusClosedError || err instanceof BusUnavailableError) {
    return errors.unavailable("The event bus is unavailable; retry shortly.");
  }
  return err;
}
