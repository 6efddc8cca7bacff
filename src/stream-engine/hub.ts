// The instance's streams: one Channel per discussion with local sessions (created with the first,
// dropped with the last, so the bus subscription is held exactly while needed), connection caps,
// catch-up after a bus reconnect, a periodic head check against the log, and graceful shutdown.
// Readers' own streams are reader-streams.ts; what the hub is made with and asked for, hub-types.ts.
import { randomBytes } from "node:crypto";
import type { EventBus } from "../events/bus.js";
import { unavailableOr } from "./bus-unavailable.js";
import { LiveEvent } from "./live-event.js";
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
import { replicaFirstReplays } from "../events/replica-replay.js";
import { invalidTicket, redeemWith, type RedeemedTicket } from "./ticket-redemption.js";
import { resolveSettings } from "../tenancy/settings/resolve.js";
import { type Settings } from "../tenancy/settings/tree.js";
import { AppError, errors } from "../lib/errors.js";
import { Channel } from "./channel.js";
import { createStreamSlots, type StreamSlots } from "./limits.js";
import { Session, type StreamSink } from "./session.js";
import { createControlChannel, type ControlChannel } from "../lib/control-channel.js";
import type { ReaderSession, ReaderSink } from "./reader-stream.js";
import { DEFAULT_PRESENCE_PER_ADDRESS, Presence } from "./presence.js";
import { ReaderStreams } from "./reader-streams.js";
import {
  DEFAULT_HUB_OPTIONS,
  TICKET_TAKEOVER_CHANNEL,
  type HubOptions,
  type HubStats,
  type OpenRequest,
  type PendingTicket,
  type ReaderOpenRequest,
  type StreamHubDeps,
  type StreamHubServices,
  type TenantSettings,
  type Ticketed,
} from "./hub-types.js";

/** the hub's options, as its builders and tests name them */
export type { HubOptions } from "./hub-types.js";

export class StreamHub {
  readonly options: HubOptions;
  private readonly channels = new Map<string, Channel>();
  private readonly sessions = new Map<Session, StreamSink>();
  /** sessions opened with a ticket, by ticket hash, with their connection id */
  private readonly ticketed = new Map<string, Map<Ticketed, string>>();
  /** the readers' own streams on this instance: their sessions, and the bus subscriptions behind them */
  private readonly readerSessions = new Set<ReaderSession>();
  private readonly readerStreams: ReaderStreams;
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
  private readonly onFanout: ((seconds: number) => void) | undefined;

  constructor(deps: StreamHubDeps) {
    const { app, bus } = deps;
    this.onBusEvent = deps.onBusEvent;
    this.onFanout = deps.onFanout;
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
    const log = deps.log ?? createEventLogReader(app.prisma, app.sql);
    this.log = coalescingReplays(deps.replicas ? replicaFirstReplays(log, deps.replicas, deps.onReplayRead) : log);
    this.slots = createStreamSlots({ maxPerInstance: app.config.MAX_STREAMS_PER_INSTANCE, redis: deps.redis, log: app.log });
    this.offReconnect = bus.onReconnect(() => {
      app.log.info({ channels: this.channels.size }, "event bus reconnected; streams catch up from the log");
      for (const ch of this.channels.values()) ch.catchUp();
      this.readerStreams.refresh();
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
    this.readerStreams = new ReaderStreams({
      app,
      bus,
      feed: deps.readerFeed,
      slots: this.slots,
      sessions: this.readerSessions,
      trackTicket: (session, ticket) => this.trackTicket(session, ticket),
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

  /** Opens a reader's own stream (reader-streams.ts); 503 while stopping. */
  async openReader(req: ReaderOpenRequest, sink: ReaderSink): Promise<ReaderSession> {
    if (this.stopping) throw errors.unavailable("This instance is shutting down; reconnect.");
    return this.readerStreams.open(req, sink, () => this.stopping);
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
    sinks.push(...this.readerStreams.sinks.values());
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
    await this.readerStreams.close();
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
          onFanout: this.onFanout,
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
      await this.readerStreams.checkHeads().catch((err: unknown) => this.app.log.warn({ err }, "reader stream head check failed"));
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
