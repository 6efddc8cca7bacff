// Presence (contract section 19): the open streams of a discussion count as its readers, one per
// connection (an SSE stream or a GraphQL subscription), on every instance; the discussion's streams
// get `event: presence` `{"reading": n}` when the number changes, at most once per interval.
//
// Across instances (Redis): one sorted set per discussion, `eng:pr:{<tenant>:<discussion>}` (the
// discussion is the key's hash tag: on a Redis Cluster everything about one discussion is one slot),
// one member per open stream (`<instance>:<n>`) scored by the time it expires. A stream joins with
// ZADD and leaves with ZREM; every `refreshMs` the instance re-scores its own live members (now +
// ttlMs) and prunes the expired ones, so a crashed instance's streams stop counting at most `ttlMs`
// after its last refresh. The count is ZCOUNT of the members not expired.
//
// Changes reach the other instances as a notice on the control channel `eng:presence` (the
// discussion's key); an instance with streams of that discussion then counts again. Per
// discussion and instance the count is taken and sent at most once per `intervalMs` (the first
// change after a quiet spell goes at once, later ones are coalesced to the end of the interval),
// and a notice is published at most once per interval too. The refresh also compares the count
// with the last one sent, which is how a crashed instance's streams vanish from the others' events.
//
// Without Redis (embedded, one instance) the count is this instance's streams, kept in memory.
// Presence frames carry no `id:` and are not in the event log: they never move Last-Event-ID.
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Clock } from "../lib/clock.js";
import { createControlChannel, type ControlChannel } from "../lib/control-channel.js";
import type { RedisClient, RedisTarget } from "../lib/redis-connection.js";
import { pipelinesByTag } from "../lib/redis-connection.js";

export interface PresenceOptions {
  /** a member counts this long after its instance last refreshed it (crash bound) */
  presenceTtlMs: number;
  /** how often an instance re-scores its live members and prunes expired ones */
  presenceRefreshMs: number;
  /** at most one presence frame per discussion per this interval */
  presenceIntervalMs: number;
}

export const DEFAULT_PRESENCE_OPTIONS: PresenceOptions = {
  presenceTtlMs: 20_000,
  presenceRefreshMs: 10_000,
  presenceIntervalMs: 5_000,
};

/** Where instances tell each other that a discussion's presence changed. */
export const PRESENCE_CHANNEL = "eng:presence";

/**
 * What a new stream assumes before it is told anything: it is the one reader. So a discussion with
 * a single stream sends no presence frame at all, and a stream that joins others is told their count.
 */
const ALONE = 1;

/** How many members one slice of a refresh re-scores (or discussions it counts) before the event loop runs again. */
const REFRESH_SLICE = 500;

/** A stream that is told the count. */
export interface PresenceMember {
  presence(reading: number): void;
}

interface Entry {
  tenantId: string;
  discussionId: string;
  key: string;
  /** local streams: their member names in the sorted set, the count each was sent last */
  members: Map<PresenceMember, { name: string; sent: number }>;
  /** the count last taken */
  counted: number;
  /** when the count was last taken (Date.now) */
  lastFire: number;
  /** a count is due (or being taken) */
  timer: NodeJS.Timeout | undefined;
  /** asked to count again while one was due or under way */
  dirty: boolean;
  /** this instance's membership changed since the last notice */
  changed: boolean;
  /** a write (ZADD/ZREM) not yet answered: the count waits for it */
  pending: Promise<unknown>;
}

export interface PresenceDeps {
  clock: Clock;
  log: Logger;
  redis?: RedisClient | undefined;
  redisTarget?: RedisTarget | undefined;
  options?: Partial<PresenceOptions>;
}

/** The sorted set of a discussion's streams; exported for tests and operators. */
export const presenceKey = (tenantId: string, discussionId: string): string =>
  `eng:pr:{${encodeURIComponent(tenantId)}:${encodeURIComponent(discussionId)}}`;

export class Presence {
  readonly options: PresenceOptions;
  private readonly entries = new Map<string, Entry>();
  private readonly instance = randomBytes(6).toString("hex");
  private next = 0;
  private readonly redis: RedisClient | undefined;
  private readonly notices: ControlChannel;
  private readonly refreshTimer: NodeJS.Timeout;
  private closed = false;
  /** a refresh under way (slices of it await Redis): the next tick skips rather than overlaps */
  private refreshing = false;

  constructor(private readonly deps: PresenceDeps) {
    this.options = { ...DEFAULT_PRESENCE_OPTIONS, ...deps.options };
    this.redis = deps.redis;
    this.notices = createControlChannel({
      channel: PRESENCE_CHANNEL,
      redis: deps.redis ? deps.redisTarget : undefined,
      publisher: deps.redis,
      log: deps.log,
      onMessage: (key) => {
        const entry = this.entries.get(key);
        if (entry) this.schedule(entry);
      },
    });
    this.refreshTimer = setInterval(() => void this.refresh(), this.options.presenceRefreshMs);
    this.refreshTimer.unref();
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /** A stream of the discussion opened here; the returned function is its leaving (idempotent). */
  join(tenantId: string, discussionId: string, member: PresenceMember): () => void {
    const key = presenceKey(tenantId, discussionId);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = {
        tenantId,
        discussionId,
        key,
        members: new Map(),
        counted: ALONE,
        lastFire: 0,
        timer: undefined,
        dirty: false,
        changed: false,
        pending: Promise.resolve(),
      };
      this.entries.set(key, entry);
    }
    const name = `${this.instance}:${(this.next++).toString(36)}`;
    entry.members.set(member, { name, sent: ALONE });
    entry.changed = true;
    if (this.redis) {
      const expiry = this.now() + this.options.presenceTtlMs;
      entry.pending = this.redis
        .multi()
        .zadd(key, expiry, name)
        .pexpire(key, this.options.presenceTtlMs * 2)
        .exec()
        .catch((err: unknown) => this.deps.log.warn({ err }, "presence: join not recorded"));
    }
    this.schedule(entry);
    const joined = entry;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.leave(joined, member, name);
    };
  }

  private leave(entry: Entry, member: PresenceMember, name: string): void {
    entry.members.delete(member);
    entry.changed = true;
    if (this.redis && !this.closed) {
      entry.pending = this.redis.zrem(entry.key, name).catch((err: unknown) => this.deps.log.warn({ err }, "presence: leave not recorded"));
    }
    if (entry.members.size > 0) return this.schedule(entry);
    // the last stream here: nobody to tell here; the other instances count again
    clearTimeout(entry.timer);
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    if (this.redis && !this.closed) void entry.pending.then(() => this.notices.publish(entry.key));
  }

  /** Counts again now, or at the end of the current interval (coalesced). */
  private schedule(entry: Entry): void {
    entry.dirty = true;
    if (entry.timer || this.closed) return;
    const wait = Math.max(0, entry.lastFire + this.options.presenceIntervalMs - Date.now());
    entry.timer = setTimeout(() => void this.fire(entry), wait);
    entry.timer.unref();
  }

  private async fire(entry: Entry): Promise<void> {
    entry.lastFire = Date.now();
    entry.dirty = false;
    try {
      await entry.pending;
      if (entry.changed && this.redis) this.notices.publish(entry.key);
      entry.changed = false;
      const [n] = await this.count(entry.tenantId, [entry.discussionId]);
      this.send(entry, n ?? 0);
    } catch (err) {
      this.deps.log.warn({ err }, "presence: count failed");
    } finally {
      entry.timer = undefined;
      // a change during the count: counted again at the end of this interval
      if (entry.dirty && this.entries.get(entry.key) === entry) this.schedule(entry);
    }
  }

  /** The count to each stream that has not been told it (a stream that joined since, or all when it moved). */
  private send(entry: Entry, reading: number): void {
    entry.counted = reading;
    if (this.entries.get(entry.key) !== entry) return;
    for (const [member, m] of [...entry.members]) {
      if (m.sent === reading) continue;
      m.sent = reading;
      member.presence(reading);
    }
  }

  /**
   * Readers of each discussion, in the order asked. Without Redis (or when it fails) this
   * instance's streams.
   */
  async count(tenantId: string, discussionIds: readonly string[]): Promise<number[]> {
    const local = discussionIds.map((d) => this.entries.get(presenceKey(tenantId, d))?.members.size ?? 0);
    const redis = this.redis;
    if (!redis) return local;
    const now = this.now();
    try {
      return await Promise.all(discussionIds.map((d) => redis.zcount(presenceKey(tenantId, d), `(${now}`, "+inf")));
    } catch (err) {
      this.deps.log.warn({ err }, "presence: count unavailable; counting this instance only");
      return local;
    }
  }

  /**
   * Re-scores this instance's members, prunes expired ones, and counts again where the number moved.
   * In slices of at most REFRESH_SLICE members (a discussion's thousands of members in several
   * ZADDs), each slice's pipeline awaited before the next is built: the event loop runs between them,
   * so a write's fan-out never waits for one pipeline of every member of the instance to be encoded.
   */
  private async refresh(): Promise<void> {
    const redis = this.redis;
    if (!redis || this.closed || this.refreshing || this.entries.size === 0 || redis.status !== "ready") return;
    this.refreshing = true;
    const now = this.now();
    const expiry = now + this.options.presenceTtlMs;
    const entries = [...this.entries.values()];
    try {
      let pipes = pipelinesByTag(redis);
      let queued = 0;
      for (const e of entries) {
        const names = [...e.members.values()].map((m) => m.name);
        if (names.length === 0) continue;
        for (let k = 0; k < names.length; k += REFRESH_SLICE) {
          pipes.for(e.key).zadd(e.key, ...names.slice(k, k + REFRESH_SLICE).flatMap((name) => [expiry, name]));
          queued += Math.min(REFRESH_SLICE, names.length - k);
          if (queued >= REFRESH_SLICE) {
            await pipes.exec();
            [pipes, queued] = [pipelinesByTag(redis), 0];
          }
        }
        // after every ZADD of this discussion (a pipeline runs in order; slices one after another)
        pipes
          .for(e.key)
          .pexpire(e.key, this.options.presenceTtlMs * 2)
          .zremrangebyscore(e.key, "-inf", now);
        queued++;
      }
      await pipes.exec();
      for (let k = 0; k < entries.length; k += REFRESH_SLICE) {
        // one pipeline per discussion on a cluster, in the order of the slice
        const slice = entries.slice(k, k + REFRESH_SLICE);
        const counting = pipelinesByTag(redis);
        for (const e of slice) counting.for(e.key).zcount(e.key, `(${now}`, "+inf");
        const results = (await counting.exec()) as ([Error | null, unknown][] | null)[];
        const counts = results.flatMap((r) => r ?? []).map(([err, v]) => (err ? -1 : Number(v)));
        slice.forEach((e, i) => {
          const n = counts[i];
          if (n !== undefined && n >= 0 && n !== e.counted) this.schedule(e);
        });
      }
    } catch (err) {
      this.deps.log.warn({ err }, "presence: refresh failed");
    } finally {
      this.refreshing = false;
    }
  }

  /** Streams counted here (all discussions). */
  get local(): number {
    let n = 0;
    for (const e of this.entries.values()) n += e.members.size;
    return n;
  }

  /** Stops the timers and takes this instance's members out of the counts. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.refreshTimer);
    for (const e of this.entries.values()) clearTimeout(e.timer);
    this.notices.close();
    const redis = this.redis;
    if (redis && redis.status === "ready" && this.entries.size > 0) {
      const pipes = pipelinesByTag(redis);
      for (const e of this.entries.values())
        if (e.members.size > 0) pipes.for(e.key).zrem(e.key, ...[...e.members.values()].map((m) => m.name));
      await pipes.exec().catch(() => undefined);
    }
    this.entries.clear();
  }
}
