// One discussion's live feed on this instance: a single bus subscription shared by every local
// session of the discussion, delivering each event exactly once, in seq order, with no gaps.
//
// `head` is the last seq delivered. A bus message for head+1 is delivered at once; a later one is
// held, and if the missing seq does not arrive within `gapGraceMs` (messages from two instances
// can cross) the events after head are read from the log. A message without its envelope, a bus
// reconnect (`catchUp`) and the hub's periodic head check (`noteHead`) read the log the same way,
// so delivery never depends on pub/sub alone. Messages at or below head are duplicates: dropped.
import type { BusMessage, EventBus } from "../events/bus.js";
import { LiveEvent } from "./live-event.js";
import type { EventLogReader } from "../events/replay.js";
import { errors } from "../lib/errors.js";

export interface ChannelDeps {
  bus: EventBus;
  log: EventLogReader;
  gapGraceMs: number;
  onError(err: unknown, what: string): void;
  /** a catch-up read of the log (for the hub's stats) */
  onLogRead?(): void;
  /** an event arrived with its envelope on the bus (for the fan-out lag metric) */
  onBusEvent?(event: LiveEvent): void;
  /** an event was written to every member, in `seconds` (for the fan-out metric) */
  onFanout?: ((seconds: number) => void) | undefined;
}

export interface ChannelMember {
  deliver(ev: LiveEvent): void;
}

const PAGE = 500;
/** Held messages beyond this are dropped (they are read from the log instead). */
const MAX_HELD = 5_000;

export class Channel {
  /** last seq delivered to the members */
  head = 0;
  readonly members = new Set<ChannelMember>();
  readonly ready: Promise<void>;
  private initialized = false;
  private closed = false;
  /** highest seq known to exist */
  private target = 0;
  private readonly held = new Map<number, LiveEvent>();
  private reading: Promise<void> | null = null;
  private graceTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;

  /**
   * `readHead` is the channel's first read of the log, after it has subscribed (default: the head
   * alone; the hub reads the first session's replay with it). Null = no such discussion: `ready`
   * rejects with 404 and the subscription is dropped.
   */
  constructor(
    readonly tenantId: string,
    readonly discussionId: string,
    private readonly deps: ChannelDeps,
    readHead: () => Promise<number | null> = () => deps.log.head(tenantId, discussionId),
  ) {
    this.ready = this.init(readHead);
  }

  get idle(): boolean {
    return this.members.size === 0;
  }

  add(member: ChannelMember): void {
    this.members.add(member);
  }

  remove(member: ChannelMember): void {
    this.members.delete(member);
  }

  /** The hub saw `seq` as the discussion's head in the database. */
  noteHead(seq: number): void {
    if (!this.initialized || this.closed || seq <= this.head) return;
    this.target = Math.max(this.target, seq);
    this.pump(false);
  }

  /** After a bus reconnect: messages may have been lost, read whatever is after head. */
  catchUp(): void {
    if (!this.initialized || this.closed) return;
    this.target = Math.max(this.target, this.head + 1);
    this.pump(true);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.graceTimer);
    this.held.clear();
    this.members.clear();
    await this.ready.catch(() => undefined);
    await this.unsubscribe?.().catch((err: unknown) => this.deps.onError(err, "unsubscribe"));
  }

  private async init(readHead: () => Promise<number | null>): Promise<void> {
    // Subscribe first, then read the head: an event committed in between is in both, and the
    // message is dropped as a duplicate; none can fall between the two.
    this.unsubscribe = await this.deps.bus.subscribe(this.tenantId, this.discussionId, (m) => this.onMessage(m));
    if (this.closed) {
      await this.unsubscribe();
      return;
    }
    let head: number | null;
    try {
      head = await readHead();
      if (head === null) throw errors.notFound("Discussion");
    } catch (err) {
      this.closed = true;
      await this.unsubscribe().catch((e: unknown) => this.deps.onError(e, "unsubscribe"));
      throw err;
    }
    this.head = head;
    this.target = Math.max(this.target, this.head);
    this.initialized = true;
    this.pump(false);
  }

  private onMessage(m: BusMessage): void {
    if (this.closed || m.seq <= this.head) return;
    this.target = Math.max(this.target, m.seq);
    const ev = LiveEvent.fromBus(m);
    if (ev) this.deps.onBusEvent?.(ev);
    if (ev && this.held.size < MAX_HELD) this.held.set(m.seq, ev);
    // without the envelope there is nothing to wait for: read the log now
    this.pump(!ev);
  }

  /** Delivers what is contiguous; reads the log for a gap (now, or after the grace period). */
  private pump(readNow: boolean): void {
    if (!this.initialized || this.closed) return;
    this.drainHeld();
    if (this.target <= this.head || this.reading) return;
    if (readNow || this.deps.gapGraceMs <= 0) {
      this.startRead();
    } else if (!this.graceTimer) {
      this.graceTimer = setTimeout(() => {
        this.graceTimer = undefined;
        if (!this.closed && this.target > this.head && !this.reading) this.startRead();
      }, this.deps.gapGraceMs);
    }
  }

  private drainHeld(): void {
    for (const seq of this.held.keys()) if (seq <= this.head) this.held.delete(seq);
    let next = this.held.get(this.head + 1);
    while (next && !this.closed) {
      this.held.delete(next.seq);
      this.deliver(next);
      next = this.held.get(this.head + 1);
    }
  }

  private startRead(): void {
    clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
    let failed = false;
    this.reading = this.readLog()
      .catch((err: unknown) => {
        failed = true; // retried by the next message, bus reconnect or head check
        this.deps.onError(err, "catch-up read");
      })
      .finally(() => {
        this.reading = null;
        if (!failed && !this.closed && this.target > this.head) this.pump(false);
      });
  }

  private async readLog(): Promise<void> {
    while (!this.closed && this.target > this.head) {
      const before = this.head;
      this.deps.onLogRead?.();
      const rows = await this.deps.log.after(this.tenantId, this.discussionId, this.head, PAGE);
      if (this.closed) return;
      for (const row of rows) {
        if (row.envelope.seq <= this.head) continue;
        this.deliver(this.held.get(row.envelope.seq) ?? LiveEvent.fromStored(row));
      }
      this.drainHeld();
      // Nothing new in the log: the seq we were told about does not exist; stop (no busy loop).
      if (this.head === before) this.target = this.head;
    }
  }

  private deliver(ev: LiveEvent): void {
    this.head = ev.seq;
    this.held.delete(ev.seq);
    const started = this.deps.onFanout && this.members.size > 0 ? performance.now() : -1;
    for (const m of this.members) {
      try {
        m.deliver(ev);
      } catch (err) {
        this.deps.onError(err, "deliver");
      }
    }
    if (started >= 0) this.deps.onFanout?.((performance.now() - started) / 1000);
  }
}
