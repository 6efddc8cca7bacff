// Presence writes of one instance (src/stream-engine/presence.ts): the joins and leaves of a
// discussion's streams to Redis, coalesced, in order, and retried when they fail.
//
// A stream's join or leave marks its person; the persons marked in one turn of the event loop go in
// one write of the discussion (at most RECORD_CHUNK persons a sync call), one write of a discussion
// at a time, the writes of all discussions of that turn together (presence-batch.ts). A write
// carries each person's state (this instance's streams of it), not a change: sending it again is
// harmless, and a later write of the same person supersedes an earlier one.
//
// A write that fails (Redis unreachable, a timeout) is retried: its persons are kept on the
// discussion (`failed`, one per person: the bound is the persons this instance has or has just
// had there, never a queue of writes) and marked again after a backoff (RETRY_FIRST_MS doubling up
// to RETRY_MAX_MS), so they go in the same batching as any change. A person that a newer write
// carries meanwhile (still to be sent, or answered) is not sent again for the failure. A discussion
// with streams here is retried until its write is answered; one whose last stream here left (its
// write drops the lease) only until `ttlMs` after it first failed: by then its lease has ended and
// its counts no longer count anywhere. After a retry is written the discussion is counted and
// announced again (`retried`).
import type { Logger } from "pino";
import type { Person } from "./presence-people.js";
import { RECORD_CHUNK, type PresenceBatch } from "./presence-batch.js";

/** The first wait before a failed write is sent again; each failure in a row doubles it. */
export const RETRY_FIRST_MS = 250;
/** The longest wait between two tries of a failed write. */
export const RETRY_MAX_MS = 5_000;

/** The changed persons (by tag) flush takes for a write, and settling `pending` for them. */
type Batch = { persons: Map<string, Person>; done(): void; fail(err: unknown): void };

/** What the writes keep on a discussion's entry (src/stream-engine/presence.ts). */
export interface WrittenEntry {
  tenantId: string;
  discussionId: string;
  key: string;
  /** local streams */
  members: { readonly size: number };
  /** the persons of the local streams, by tag */
  persons: Map<string, Person>;
  /** this instance has sent a sync of the discussion since it last had none: it holds a lease as far as it knows */
  leased: boolean;
  /** a write not yet answered: the count waits for it */
  pending: Promise<unknown>;
  /** the persons (by tag) whose streams here changed since flush last took a write */
  batch: Batch | undefined;
  /** persons whose last write failed and no write since carried: marked again when the retry is due */
  failed: Map<string, Person> | undefined;
  /** failed writes in a row, and when the first of them failed (`now()`, ms) */
  failing: { attempts: number; since: number } | undefined;
}

export interface PresenceWritesDeps<E extends WrittenEntry> {
  batch: PresenceBatch;
  log: Logger;
  ttlMs: number;
  /** the time now, ms (Presence's injectable clock): when a dropped discussion's retries end */
  now(): number;
  /** the discussion's entry now (one that joined after the last stream left is a new one), if any */
  current(key: string): E | undefined;
  /** a retry of the discussion was marked on `entry` (`live`: the current entry): count and announce it once written */
  retried(entry: E, live: boolean): void;
}

export class PresenceWrites<E extends WrittenEntry> {
  /** entries with changes to write, in the order they changed; written at `flushing` */
  private readonly queued = new Set<E>();
  private flushing: NodeJS.Immediate | undefined;
  /** per discussion key, the last write taken: the next one waits for it (Redis sees them in order) */
  private readonly writes = new Map<string, Promise<void>>();
  /** entries with failed persons, and the timer of their next try */
  private readonly retrying = new Map<E, NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly deps: PresenceWritesDeps<E>) {}

  /**
   * The person's streams here changed: written with the discussion's other changes of this turn
   * (its current count then); `entry.pending` settles when they are.
   */
  mark(entry: E, person: Person): void {
    if (!entry.batch) {
      let done!: () => void, fail!: (err: unknown) => void;
      const written = new Promise<void>((resolve, reject) => ((done = resolve), (fail = reject)));
      entry.batch = { persons: new Map(), done, fail };
      // (a failure is logged and retried by `write`)
      entry.pending = Promise.all([entry.pending, written.catch(() => undefined)]);
      this.queued.add(entry);
      this.flushing ??= setImmediate(() => void this.flush());
    }
    entry.batch.persons.set(person.tag, person);
  }

  /** Each queued entry's changes, one write per discussion, after the discussion's write before (if still under way). */
  private flush(): Promise<void> {
    this.flushing = undefined;
    const entries = [...this.queued];
    this.queued.clear();
    const writes = entries.map((entry) => {
      const batch = entry.batch!;
      entry.batch = undefined;
      const write = (this.writes.get(entry.key) ?? Promise.resolve()).then(() => this.write(entry, batch));
      this.writes.set(entry.key, write);
      return write.then(() => void (this.writes.get(entry.key) === write && this.writes.delete(entry.key)));
    });
    return Promise.all(writes).then(() => undefined);
  }

  /** A batch to Redis, RECORD_CHUNK persons a call; the last call drops the lease when no stream is left here. Never rejects. */
  private async write(entry: E, batch: Batch): Promise<void> {
    const persons = [...batch.persons.values()];
    // (a dropped entry gets no stream again: a later join makes a new one)
    const drop = entry.members.size === 0;
    try {
      for (let k = 0; k < persons.length; k += RECORD_CHUNK)
        await this.record(entry, persons.slice(k, k + RECORD_CHUNK), drop && k + RECORD_CHUNK >= persons.length);
      this.written(entry, persons);
      batch.done();
    } catch (err) {
      this.failed(entry, persons, err);
      batch.fail(err);
    }
  }

  /**
   * This instance's count of each person (its streams now) to Redis (with this turn's other writes),
   * the persons' slots rewritten; `drop`: its last stream of the discussion closed, its lease goes too.
   * When the lease this instance thought it held was gone (cleared away as dead), all are sent again.
   */
  private async record(entry: E, persons: readonly Person[], drop = false): Promise<void> {
    const leased = entry.leased;
    entry.leased = !drop;
    const lost = await this.deps.batch.sync(entry.key, persons, leased, drop);
    if (lost && !drop && !this.closed && this.deps.current(entry.key) === entry) await this.resync(entry);
  }

  /** Every person of the discussion sent again (its lease was lost: its counts may have been cleared away). */
  private resync(entry: E): Promise<void> {
    this.deps.log.info({ tenantId: entry.tenantId, discussionId: entry.discussionId }, "presence: lease lost; counts sent again");
    entry.leased = false;
    const all = [...entry.persons.values()];
    return this.record(entry, all).then(
      () => this.written(entry, all),
      (err: unknown) => {
        this.failed(entry, all, err);
        throw err;
      },
    );
  }

  /** The refresh found the lease taken anew: every person sent again (retried like any write). Never rejects. */
  resend(entry: E): Promise<void> {
    return this.resync(entry).catch(() => undefined);
  }

  /** A write of these persons was answered: a failure of theirs before it is superseded. */
  private written(entry: E, persons: readonly Person[]): void {
    if (!entry.failed) return;
    for (const p of persons) entry.failed.delete(p.tag);
    if (entry.failed.size > 0) return;
    entry.failed = undefined;
    entry.failing = undefined;
    clearTimeout(this.retrying.get(entry));
    this.retrying.delete(entry);
  }

  /** A write of these persons failed: kept to be marked again after the backoff (unless a newer change of theirs is still to go). */
  private failed(entry: E, persons: readonly Person[], err: unknown): void {
    if (this.closed) return void this.deps.log.warn({ err, discussionId: entry.discussionId }, "presence: changes not recorded");
    entry.failed ??= new Map();
    for (const p of persons) if (!entry.batch?.persons.has(p.tag)) entry.failed.set(p.tag, p);
    if (entry.failed.size === 0) return void (entry.failed = undefined);
    if (this.retrying.has(entry)) return;
    const failing = (entry.failing ??= { attempts: 0, since: this.deps.now() });
    if (failing.attempts === 0) this.deps.log.warn({ err, discussionId: entry.discussionId }, "presence: changes not recorded; retrying");
    const wait = Math.min(RETRY_FIRST_MS * 2 ** failing.attempts++, RETRY_MAX_MS);
    const timer = setTimeout(() => this.retry(entry), wait);
    timer.unref();
    this.retrying.set(entry, timer);
  }

  /** The failed persons marked again, on the discussion's current entry (or this one, when it has none). */
  private retry(entry: E): void {
    this.retrying.delete(entry);
    const failed = entry.failed;
    entry.failed = undefined;
    if (!failed) return;
    const current = this.deps.current(entry.key);
    if (!current && !this.closed && this.deps.now() - (entry.failing?.since ?? 0) > this.deps.ttlMs) {
      this.deps.log.warn({ discussionId: entry.discussionId }, "presence: a dropped discussion's changes given up (its lease has ended)");
      return;
    }
    const target = current ?? entry;
    if (target !== entry) target.failing ??= entry.failing;
    // a person that left since counts none here (its entry's Person is then a past one)
    for (const p of failed.values()) this.mark(target, target.persons.get(p.tag) ?? p);
    if (!this.closed) this.deps.retried(target, target === current);
  }

  /** Every change still to write (the failed ones tried once more) written: the instance stops. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [entry, timer] of [...this.retrying]) {
      clearTimeout(timer);
      this.retry(entry);
    }
    clearImmediate(this.flushing);
    await this.flush();
    await Promise.all(this.writes.values());
  }
}
