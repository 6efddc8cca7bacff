// What the stream hub (hub.ts) is made with and asked for: its options, its services and
// dependencies, a discussion's and a reader's stream to open, and its counters.
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import type { EventBus } from "../events/bus.js";
import type { LiveEvent } from "./live-event.js";
import type { Sql } from "../db/sql.js";
import type { EventLogReader } from "../events/replay.js";
import type { ReplicaSet } from "../db/replicas/replica-set.js";
import type { RedeemedTicket, TicketRedemption } from "./ticket-redemption.js";
import type { Settings } from "../tenancy/settings/tree.js";
import type { Viewer } from "./event-visibility.js";
import type { ReaderFeed, ReaderKey } from "./reader-stream.js";
import type { RedisClient, RedisTarget } from "../lib/redis-connection.js";
import { DEFAULT_PRESENCE_OPTIONS, type PresenceOptions } from "./presence.js";

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
  /** the client's address (src/http/client-address.ts): presence counts a reader-less stream by it */
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
  /** an event written to every stream of its discussion on this instance, in `seconds` (the fan-out metric) */
  onFanout?: (seconds: number) => void;
  /** defaults to the database's event log */
  log?: EventLogReader;
  /** the read replicas: replays are read from one that has the requested events (src/events/replica-replay.ts) */
  replicas?: Pick<ReplicaSet, "size" | "pick">;
  /** told where each replay read with `replicas` was served (the metrics) */
  onReplayRead?: (by: "replica" | "primary") => void;
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

/** What a ticket's supersession ends. */
export interface Ticketed {
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
