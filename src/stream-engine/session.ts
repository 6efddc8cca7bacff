// One open stream (an SSE connection or a GraphQL subscription): what it has seen (lastSeq), who
// it is for (Viewer), and the transport it writes to (StreamSink).
//
// Ordering: the channel delivers events in seq order without gaps. While the replay query runs
// the session buffers what the channel delivers; `start` sends the replay, then the buffer, and
// drops anything at or below the last seq it processed. So replay + live never repeat or skip.
import type { LiveEvent } from "./live-event.js";
import { canSee, type Viewer } from "./event-visibility.js";
import { CloseSignal } from "./close-signal.js";

export interface ConnectedInfo {
  discussionId: string;
  replayed: number;
  truncated: boolean;
  heartbeatSeconds: number;
}

/**
 * Why the server ends a stream: the maximum connection time passed, the instance stops, or a
 * reconnect with the same ticket took over (a ticket never serves two connections at once).
 */
export type EndReason = "max-connection-time" | "shutdown" | "superseded";

export interface StreamSink {
  /**
   * The stream is accepted: send the response head and the `connected` frame, whose SSE id is
   * `position`, the seq the stream continues after (see `streamPosition`): ids on a stream never go
   * backwards, so a client that resumes from whatever id it saw last (`connected`'s included) misses
   * nothing and gets nothing twice.
   */
  open(info: ConnectedInfo, position: number): void;
  /** A visible event, in seq order. False when the sink could not take it (closed, over its bound). */
  event(ev: LiveEvent): boolean;
  /**
   * The discussion's reader count changed (src/stream-engine/presence.ts): `event: presence`, with
   * no id (not in the event log, so it never moves Last-Event-ID). Transports without it skip it.
   */
  presence?(reading: number): void;
  /** A keep-alive, for transports that need one. */
  heartbeat?(): void;
  /** Replay is done: from now on events are live and count against the sink's bound. */
  beginLive?(): void;
  /** Sends `connection-timeout` and closes. */
  end(reason: EndReason): void;
  /** Called once when the sink closes, whatever the cause. */
  onClose(cb: () => void): void;
  readonly closed: boolean;
  /** Resolves once what was written has been handed off (used to let shutdown frames out). */
  flushed(): Promise<void>;
}

export interface StartOptions {
  /** Last-Event-ID / `after`: null = live only */
  after: number | null;
  /** the channel's head when the session joined: the replay covers (after, head] */
  head: number;
  replay: LiveEvent[];
  truncated: boolean;
  heartbeatSeconds: number;
  maxConnectionSeconds: number;
}

/** More events than this arriving during the replay query close the session. */
export const MAX_STARTUP_BUFFER = 10_000;

/**
 * Where a stream continues (contract section 4, "Stream": the `connected` frame's id): with no
 * Last-Event-ID the head (live only); with one, the id the replay starts after — the given id, or
 * when the window no longer keeps the event after it (`truncated`), the seq just before the oldest
 * kept event (the head when it keeps none). An id past the head continues after the head: a
 * position past it would make the next live ids go backwards.
 */
export function streamPosition(after: number | null, head: number, replay: readonly { seq: number }[], truncated: boolean): number {
  if (after === null) return head;
  const first = replay[0];
  if (truncated) return first ? Math.min(first.seq - 1, head) : head;
  return Math.min(after, head);
}

export class Session {
  lastSeq = 0;
  private startup: LiveEvent[] | null = [];
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private maxTimer: NodeJS.Timeout | undefined;
  private readonly closing = new CloseSignal();

  constructor(
    readonly tenantId: string,
    readonly discussionId: string,
    private viewer: Viewer,
    private readonly sink: StreamSink,
  ) {
    sink.onClose(() => this.close());
  }

  /** Who the stream is for, once a ticket redeemed with the connect's read says so (before `start`). */
  bind(viewer: Viewer): void {
    this.viewer = viewer;
  }

  get closed(): boolean {
    return this.closing.closed;
  }

  /** Runs once when the session closes (leave the channel, release the connection slot). */
  onClose(hook: () => void): void {
    this.closing.onClose(hook);
  }

  /** From the channel: every event, in seq order. */
  deliver(ev: LiveEvent): void {
    if (this.closing.closed) return;
    if (this.startup) {
      this.startup.push(ev);
      if (this.startup.length > MAX_STARTUP_BUFFER) this.close();
      return;
    }
    this.forward(ev);
  }

  start(o: StartOptions): void {
    if (this.closing.closed || !this.startup) return;
    this.lastSeq = streamPosition(o.after, o.head, o.replay, o.truncated);
    const visible = o.replay.filter((ev) => ev.seq > this.lastSeq && canSee(this.viewer, ev));
    this.sink.open(
      {
        discussionId: this.discussionId,
        replayed: visible.length,
        truncated: o.truncated,
        heartbeatSeconds: o.heartbeatSeconds,
      },
      this.lastSeq,
    );
    for (const ev of o.replay) this.forward(ev);
    // events at or below head that the replay left out are outside the window
    this.lastSeq = Math.max(this.lastSeq, o.head);
    this.sink.beginLive?.();
    const buffered = this.startup;
    this.startup = null;
    for (const ev of buffered) this.forward(ev);
    if (this.closing.closed || this.sink.closed) return this.close();
    if (this.sink.heartbeat) {
      const hb = () => this.sink.heartbeat?.();
      this.heartbeatTimer = setInterval(hb, o.heartbeatSeconds * 1000);
    }
    this.maxTimer = setTimeout(() => this.end("max-connection-time"), o.maxConnectionSeconds * 1000);
  }

  /** The discussion's reader count, once the stream has started. */
  presence(reading: number): void {
    if (this.closing.closed || this.startup) return;
    this.sink.presence?.(reading);
  }

  /** The server ends the stream (`connection-timeout`, then close). */
  end(reason: EndReason): void {
    if (this.closing.closed) return;
    if (this.startup) return this.close();
    this.sink.end(reason);
    this.close();
  }

  close(): void {
    if (this.closing.closed) return;
    this.startup = null;
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.maxTimer);
    this.closing.fire();
  }

  private forward(ev: LiveEvent): void {
    if (this.closing.closed || ev.seq <= this.lastSeq) return;
    this.lastSeq = ev.seq;
    if (!canSee(this.viewer, ev)) return;
    if (!this.sink.event(ev)) this.close();
  }
}
