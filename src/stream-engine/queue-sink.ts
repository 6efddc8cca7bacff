// A session's GraphQL transport: an async iterator the subscription resolver returns. Bounded: a
// consumer that falls more than `maxQueued` live items behind is cut off (the subscription
// completes). Replayed items (at most replay.maxEvents) do not count against the bound.
import type { LiveEvent } from "./live-event.js";
import type { ConnectedInfo, EndReason, StreamSink } from "./session.js";
import type { ReaderConnectedInfo, ReaderFrame, ReaderSink } from "./reader-stream.js";
import { CloseSignal } from "./close-signal.js";

export type StreamItem =
  ({ kind: "connected"; position: number } & ConnectedInfo) | { kind: "event"; event: LiveEvent } | { kind: "timeout"; reason: EndReason };

/** What a reader's own subscription yields (src/stream-engine/reader-stream.ts). */
export type ReaderStreamItem =
  | ({ kind: "reader-connected"; position: number } & ReaderConnectedInfo)
  | { kind: "frame"; frame: ReaderFrame }
  | { kind: "timeout"; reason: EndReason };

type Item = StreamItem | ReaderStreamItem;

/** A discussion's subscription takes StreamItems, a reader's ReaderStreamItems (never both). */
export class QueueSink<T extends Item = StreamItem> implements StreamSink, ReaderSink, AsyncIterableIterator<T> {
  private queue: Item[] = [];
  private head = 0;
  private live = false;
  /** replayed items still queued (they are at the front) */
  private replayQueued = 0;
  private waiter: ((r: IteratorResult<T>) => void) | null = null;
  /** no more items will be queued (the queue may still hold some) */
  private ended = false;
  private readonly closing = new CloseSignal();
  private drainedResolve!: () => void;
  private readonly drained = new Promise<void>((resolve) => (this.drainedResolve = resolve));

  constructor(private readonly maxQueued: number) {}

  get closed(): boolean {
    return this.closing.closed;
  }

  onClose(cb: () => void): void {
    this.closing.onClose(cb);
  }

  flushed(): Promise<void> {
    return this.drained;
  }

  open(info: ConnectedInfo, position: number): void {
    this.push({ kind: "connected", ...info, position });
  }

  beginLive(): void {
    this.live = true;
  }

  openReader(info: ReaderConnectedInfo, position: number): void {
    this.push({ kind: "reader-connected", ...info, position });
  }

  frame(f: ReaderFrame): boolean {
    return this.item({ kind: "frame", frame: f });
  }

  event(ev: LiveEvent): boolean {
    return this.item({ kind: "event", event: ev });
  }

  private item(item: Item): boolean {
    if (this.ended) return false;
    if (this.live && this.queued - this.replayQueued >= this.maxQueued) {
      this.abort();
      return false;
    }
    if (!this.live && !this.waiter) this.replayQueued++;
    this.push(item);
    return true;
  }

  end(reason: EndReason): void {
    this.push({ kind: "timeout", reason });
    this.ended = true;
    this.finish();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queued > 0) {
      const item = this.queue[this.head++] as T;
      if (this.replayQueued > 0 && (item.kind === "event" || item.kind === "frame")) this.replayQueued--;
      if (this.queued === 0) {
        this.queue = [];
        this.head = 0;
      }
      return Promise.resolve({ value: item, done: false });
    }
    if (this.ended) {
      this.settle();
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => (this.waiter = resolve));
  }

  /** The consumer stopped (client unsubscribed or disconnected). */
  return(): Promise<IteratorResult<T>> {
    this.abort();
    return Promise.resolve({ value: undefined, done: true });
  }

  private get queued(): number {
    return this.queue.length - this.head;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private push(item: Item): void {
    if (this.ended) return;
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w({ value: item as T, done: false });
    } else {
      this.queue.push(item);
    }
  }

  private abort(): void {
    this.ended = true;
    this.queue = [];
    this.head = 0;
    this.finish();
    this.settle();
  }

  private settle(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.({ value: undefined, done: true });
    this.drainedResolve();
  }

  private finish(): void {
    this.closing.fire();
  }
}
