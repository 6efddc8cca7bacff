// Presence (contract section 19): the people with a discussion open count as its readers, on every
// instance; the discussion's streams get `event: presence` `{"reading": n}` when the number changes,
// at most once per interval. A stream (an SSE stream or a GraphQL subscription) counts as its
// person: a reader once however many streams they have, an address's reader-less streams one each
// up to a small cap (src/stream-engine/presence-people.ts).
//
// Across instances (Redis): per discussion, the instances' leases, each instance's count of each
// person's streams, and the persons' counted slots, all under the discussion's hash tag (on a Redis
// Cluster everything about one discussion is one slot); src/stream-engine/presence-store.ts. A
// stream's join or leave sets this instance's count of its person and rewrites the person's slots,
// in one script; every `refreshMs` the instance renews its lease on each discussion it has streams
// of (now + ttlMs), so a crashed instance's streams stop counting at most `ttlMs` after its last
// refresh, and the next refresh of a live instance clears its counts away. The count is the slots
// held by live instances. Joins and leaves are coalesced per discussion: those of one turn of the
// event loop go in one write (setImmediate), at most RECORD_CHUNK persons a sync call, one write of a
// discussion at a time; the writes of all discussions changed in a turn go in a few pipelines
// (presence-batch.ts): a burst (19,000 streams dropped, their reconnect storm) is a few round trips.
// A failed write is retried with a backoff (src/stream-engine/presence-writes.ts).
//
// Changes reach the other instances as a notice on the control channel `eng:presence` (the
// discussions' keys, those of one turn in one message: src/stream-engine/presence-notices.ts); an
// instance with streams of that discussion then counts again. Per
// discussion and instance the count is taken and sent at most once per `intervalMs` (the first
// change after a quiet spell goes at once, later ones are coalesced to the end of the interval),
// and a notice is published at most once per interval too. The refresh also compares the count
// with the last one sent, which is how a crashed instance's streams vanish from the others' events.
//
// Without Redis (embedded, one instance) the count is this instance's persons, kept in memory.
// Presence frames carry no `id:` and are not in the event log: they never move Last-Event-ID.
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Clock } from "../lib/clock.js";
import type { RedisClient, RedisTarget } from "../lib/redis-connection.js";
import { localCount, personOf, type PeopleOptions, type Person, type PresenceClient } from "./presence-people.js";
import { PresenceBatch } from "./presence-batch.js";
import { PresenceNotices } from "./presence-notices.js";
import { PresenceStore } from "./presence-store.js";
import { PresenceWrites, type WrittenEntry } from "./presence-writes.js";

export interface PresenceOptions {
  /** an instance's streams count this long after it last renewed its lease (crash bound) */
  presenceTtlMs: number;
  /** how often an instance renews its leases (and clears away dead instances) */
  presenceRefreshMs: number;
  /** at most one presence frame per discussion per this interval */
  presenceIntervalMs: number;
}

export const DEFAULT_PRESENCE_OPTIONS: PresenceOptions = {
  presenceTtlMs: 20_000,
  presenceRefreshMs: 10_000,
  presenceIntervalMs: 5_000,
};

/** A client address's reader-less streams that count, at most, when STREAM_PRESENCE_PER_ADDRESS is not given. */
export const DEFAULT_PRESENCE_PER_ADDRESS = 3;

/**
 * What a new stream assumes before it is told anything: it is the one reader. So a discussion with
 * a single stream sends no presence frame at all, and a stream that joins others is told their count.
 */
const ALONE = 1;

/** How many discussions one slice of a refresh renews before the event loop runs again. */
const REFRESH_SLICE = 500;

/** A stream that is told the count. */
export interface PresenceMember {
  presence(reading: number): void;
}

/** A local stream: the count it was sent last, the person it counts as. */
interface Joined {
  sent: number;
  person: Person;
}

/** A discussion with streams here (what its writes keep: src/stream-engine/presence-writes.ts). */
interface Entry extends WrittenEntry {
  /** local streams */
  members: Map<PresenceMember, Joined>;
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
}

export interface PresenceDeps {
  clock: Clock;
  log: Logger;
  redis?: RedisClient | undefined;
  redisTarget?: RedisTarget | undefined;
  options?: Partial<PresenceOptions>;
  /** who counts as whom: the hashing key and the cap per address (src/stream-engine/presence-people.ts) */
  people: PeopleOptions;
  onPipelines?: (n: number) => void; // told how many pipelines each wave of writes sends (tests count them)
}

/** The key of a discussion's counted slots (the other two are beside it); exported for tests and operators. */
export const presenceKey = (tenantId: string, discussionId: string): string =>
  `eng:pr:{${encodeURIComponent(tenantId)}:${encodeURIComponent(discussionId)}}`;

export class Presence {
  readonly options: PresenceOptions;
  private readonly entries = new Map<string, Entry>();
  /** names this instance's streams that are persons of their own (`STREAM_PRESENCE_PER_ADDRESS=0`) apart from other instances' */
  private readonly prefix = randomBytes(6).toString("hex");
  private next = 0;
  /** presence in Redis; none in embedded mode */
  private readonly store: PresenceStore | undefined;
  private readonly writes: PresenceWrites<Entry> | undefined;
  private readonly notices: PresenceNotices;
  private readonly refreshTimer: NodeJS.Timeout;
  private closed = false;
  /** a refresh under way (slices of it await Redis): the next tick skips rather than overlaps */
  private refreshing = false;

  constructor(private readonly deps: PresenceDeps) {
    this.options = { ...DEFAULT_PRESENCE_OPTIONS, ...deps.options };
    const ttlMs = this.options.presenceTtlMs;
    const o = { ttlMs, perAddress: deps.people.perAddress, now: () => this.now(), onPipelines: deps.onPipelines };
    this.store = deps.redis && new PresenceStore(deps.redis, o);
    this.writes =
      this.store &&
      new PresenceWrites<Entry>({
        batch: new PresenceBatch(this.store),
        log: deps.log,
        ttlMs,
        now: () => this.now(),
        current: (key) => this.entries.get(key),
        retried: (entry, live) => {
          if (live) return void ((entry.changed = true), this.schedule(entry));
          void entry.pending.then(() => this.notices.notify(entry.key));
        },
      });
    this.notices = new PresenceNotices({ redis: deps.redis, redisTarget: deps.redisTarget, log: deps.log }, (key) => {
      const entry = this.entries.get(key);
      if (entry) this.schedule(entry);
    });
    this.refreshTimer = setInterval(() => void this.refresh(), this.options.presenceRefreshMs);
    this.refreshTimer.unref();
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /** A stream of the discussion opened here by `client`; the returned function is its leaving (idempotent). */
  join(tenantId: string, discussionId: string, member: PresenceMember, client: PresenceClient): () => void {
    const key = presenceKey(tenantId, discussionId);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = {
        tenantId,
        discussionId,
        key,
        members: new Map(),
        persons: new Map(),
        leased: false,
        counted: ALONE,
        lastFire: 0,
        timer: undefined,
        dirty: false,
        changed: false,
        pending: Promise.resolve(),
        batch: undefined,
        failed: undefined,
        failing: undefined,
      };
      this.entries.set(key, entry);
    }
    const who = personOf(this.deps.people, key, client, `${this.prefix}.${(this.next++).toString(36)}`);
    let person = entry.persons.get(who.tag);
    if (!person) entry.persons.set(who.tag, (person = { ...who, streams: 0 }));
    person.streams++;
    const joined: Joined = { sent: ALONE, person };
    entry.members.set(member, joined);
    entry.changed = true;
    this.writes?.mark(entry, person);
    this.schedule(entry);
    const joinedTo = entry;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.leave(joinedTo, member, joined);
    };
  }

  private leave(entry: Entry, member: PresenceMember, joined: Joined): void {
    entry.members.delete(member);
    const { person } = joined;
    person.streams--;
    if (person.streams === 0 && entry.persons.get(person.tag) === person) entry.persons.delete(person.tag);
    entry.changed = true;
    const last = entry.members.size === 0;
    if (!this.closed) this.writes?.mark(entry, person);
    if (!last) return this.schedule(entry);
    // the last stream here: nobody to tell here; the other instances count again
    clearTimeout(entry.timer);
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    if (this.store && !this.closed) void entry.pending.then(() => this.notices.notify(entry.key));
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
      if (entry.changed && this.store) this.notices.notify(entry.key);
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
   * instance's persons.
   */
  async count(tenantId: string, discussionIds: readonly string[]): Promise<number[]> {
    const local = discussionIds.map((d) => localCount(this.entries.get(presenceKey(tenantId, d))?.persons.values() ?? []));
    const store = this.store;
    if (!store) return local;
    try {
      return await Promise.all(discussionIds.map((d) => store.count(presenceKey(tenantId, d))));
    } catch (err) {
      this.deps.log.warn({ err }, "presence: count unavailable; counting this instance only");
      return local;
    }
  }

  /**
   * Renews this instance's lease on each discussion it has streams of, clears away dead instances,
   * and counts again where the number moved: one script per discussion, whatever its number of
   * streams, in slices of at most REFRESH_SLICE discussions, each awaited before the next is sent
   * (the event loop runs between them).
   */
  private async refresh(): Promise<void> {
    const store = this.store;
    if (!store || this.closed || this.refreshing || this.entries.size === 0 || !store.ready) return;
    this.refreshing = true;
    const entries = [...this.entries.values()];
    try {
      for (let k = 0; k < entries.length; k += REFRESH_SLICE) {
        // (one whose last stream closed meanwhile has given its lease back)
        const slice = entries.slice(k, k + REFRESH_SLICE).filter((e) => this.entries.get(e.key) === e);
        const answers = await store.refresh(slice.map((e) => e.key));
        slice.forEach((e, i) => {
          const a = answers[i];
          if (!a || a instanceof Error) return void this.deps.log.warn({ err: a }, "presence: refresh failed");
          if (this.entries.get(e.key) !== e) return;
          // cleared away as dead while it lived on (a stall, or Redis lost its keys): its counts again
          if (a.taken && e.leased) {
            e.pending = Promise.all([e.pending, this.writes!.resend(e)]); // (a write of changes not yet answered is still waited for)
            e.changed = true; // and the other instances count again
          }
          if (a.count !== e.counted || e.changed) this.schedule(e);
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

  /** Stops the timers and takes this instance's streams out of the counts. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.refreshTimer);
    for (const e of this.entries.values()) clearTimeout(e.timer);
    this.notices.close();
    // the changes not yet written (a dropped discussion's last leave among them, failed ones once more), before the release
    await this.writes?.close();
    const store = this.store;
    if (store?.ready && this.entries.size > 0) {
      const discussions = [...this.entries.values()].map((e) => ({ slots: e.key, persons: [...e.persons.values()] }));
      await store.release(discussions).catch(() => undefined);
    }
    this.entries.clear();
  }
}
