// The live half of <engagement-thread>: a stream ticket (contract section 4), then an EventSource on
// the discussion's stream. The browser's EventSource resumes with Last-Event-ID after a drop or a
// restart; when the stream refuses it (the ticket's resume lifetime has passed) this asks for a new
// ticket and resumes from the last id it saw (`?lastEventId=`), backing off from 1 s to 30 s. A ticket
// refused because the discussion does not exist yet (404: a page before its first comment) is asked
// again, backing off from 1 s to a minute, and the stream then replays the discussion from its start,
// so a first comment written in another tab or by another reader shows here, live; at once when this
// reader's own first comment creates it (resume). A ticket refused for anything else (a key or an
// origin refused) is not asked again until resume(). It also
// says when the element's first snapshot may be read (afterOpens), so that nothing written while the
// page connects is missed.
import { ServiceError, type ThreadApi } from "./api.js";
import type { LiveEvent } from "./store.js";
// the service's own list of event names (a constant module, bundled in)
import { STREAM_EVENT_TYPES } from "../../../src/events/types.js";

/** how long the first snapshot waits for the stream to connect before it loads anyway (and again later) */
const STREAM_WAIT_MS = 3000;

/** How often, at the longest, a page without a discussion yet asks whether its first comment has come. */
const NOT_YET_MAX_MS = 60_000;

/** Failures that pass, after which a ticket is asked for again (anything else is a 4xx refusal). */
const RETRIED = new Set(["network", "unavailable", "internal_error", "rate_limited", "service_unavailable"]);

/** What the stream needs from the element and tells it. */
export interface LiveHost {
  /** the reader's token, when there is one: a ticket is bound to the reader */
  identity(): Promise<string | null>;
  /** an event of the stream, its envelope's type and data */
  event(event: LiveEvent): void;
  /** `live` changed */
  liveChanged(): void;
  /** the snapshot was read before the stream was live: read it again now that it is */
  reload(): void;
  /** the discussion's readers (its open streams, this one included) changed: `event: presence` */
  presence(reading: number): void;
}

export class LiveStream {
  /** false while the stream is down and being reopened */
  live = true;
  /** the discussion's readers as the stream last said (1: only this one, or not told yet) */
  reading = 1;
  private api: ThreadApi | null = null;
  private discussionId: string | null = null;
  private source: EventSource | null = null;
  private lastEventId: string | null = null;
  /** true once the stream has said `connected`; false when it could not open (see afterOpens) */
  private streamReady: Promise<boolean> = Promise.resolve(false);
  private markStreamReady: (connected: boolean) => void = () => undefined;
  /** the snapshot was read before the stream was live: read it again when it is */
  private reloadWhenLive = false;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private retryDelay = 1000;
  /** the ticket was refused for what it asks (not for a failure that passes): no retry until resume() */
  private refused = false;
  /** the discussion does not exist yet: its ticket is asked again, less and less often */
  private waiting = false;
  /** the first connection resumes after a server-rendered page's seq: a truncated replay reloads */
  private resuming = false;

  constructor(private readonly host: LiveHost) {}

  /**
   * Follows a discussion (none when `api` is null) from its latest event, or after the event seq
   * `after` (a server-rendered first page's: embed/src/thread/island.ts), closing the stream of the
   * one before. A resume the stream can no longer replay whole (`truncated`) reloads the page.
   */
  follow(api: ThreadApi | null, discussionId: string | null, after: number | null = null): void {
    this.close();
    this.api = api;
    this.discussionId = discussionId;
    this.lastEventId = after === null ? null : String(after);
    this.resuming = after !== null;
    this.reading = 1;
    this.reloadWhenLive = false;
    this.refused = false;
    this.waiting = false;
    this.streamReady = new Promise((resolve) => (this.markStreamReady = resolve));
    if (api) void this.open();
  }

  /** The discussion now exists (the reader's first comment created it): a refused stream opens. */
  resume(): void {
    if (!this.refused && !this.waiting) return;
    this.refused = false;
    this.waiting = false;
    clearTimeout(this.retryTimer);
    this.retryDelay = 1000;
    void this.open();
  }

  /**
   * A snapshot read before the stream is live could miss a comment written in between (the stream
   * starts at the discussion's latest event when it connects). So the first snapshot is read once
   * the stream has said `connected`: everything after that arrives on the stream, buffered while the
   * snapshot loads and applied after it (applying an event the snapshot already shows changes
   * nothing). A stream that cannot open soon does not hold the thread back: it loads now and again
   * once the stream is live.
   */
  async afterOpens(): Promise<void> {
    const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), STREAM_WAIT_MS));
    if (!(await Promise.race([this.streamReady, timeout]))) this.reloadWhenLive = true;
  }

  close(): void {
    clearTimeout(this.retryTimer);
    this.source?.close();
    this.source = null;
  }

  private async open(): Promise<void> {
    const api = this.api;
    const discussionId = this.discussionId;
    if (!api || !discussionId || this.source) return;
    let ticket: string;
    try {
      ticket = await api.ticket(discussionId, await this.host.identity());
    } catch (e) {
      this.markStreamReady(false);
      // a discussion not there yet: asked again, and its stream then replays it from the start
      if (e instanceof ServiceError && e.code === "not_found") {
        this.waiting = true;
        if (this.lastEventId === null) {
          this.lastEventId = "0";
          this.resuming = true;
        }
        this.scheduleReopen(NOT_YET_MAX_MS);
        return;
      }
      // any other refusal of what is asked stays one (4xx): asking again changes nothing until resume()
      if (e instanceof ServiceError && !RETRIED.has(e.code)) {
        this.refused = true;
        return;
      }
      this.scheduleReopen();
      return;
    }
    this.waiting = false;
    if (api !== this.api || this.source) return;
    const source = new EventSource(api.streamUrl(discussionId, ticket, this.lastEventId));
    this.source = source;
    source.addEventListener("connected", (e) => {
      this.lastEventId = (e as MessageEvent).lastEventId || this.lastEventId;
      if (this.resuming) {
        this.resuming = false;
        if (truncated((e as MessageEvent<string>).data)) this.reloadWhenLive = true;
      }
      this.retryDelay = 1000;
      this.setLive(true);
      this.markStreamReady(true);
      if (this.reloadWhenLive) {
        this.reloadWhenLive = false;
        this.host.reload();
      }
    });
    for (const name of STREAM_EVENT_TYPES) source.addEventListener(name, (e) => this.onEvent(name, e as MessageEvent<string>));
    // presence frames have no id: they never move lastEventId (contract section 19)
    source.addEventListener("presence", (e) => {
      try {
        const { reading } = JSON.parse((e as MessageEvent<string>).data) as { reading?: unknown };
        if (typeof reading !== "number" || !Number.isInteger(reading) || reading < 0) return;
        this.reading = reading;
        this.host.presence(reading);
      } catch {
        /* not ours */
      }
    });
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        // refused (e.g. the ticket's resume lifetime is over): a new ticket, resuming from the last id
        this.markStreamReady(false);
        this.close();
        this.scheduleReopen();
      }
      this.setLive(false);
    };
  }

  private onEvent(type: string, e: MessageEvent<string>): void {
    if (e.lastEventId) this.lastEventId = e.lastEventId;
    this.setLive(true);
    let event: LiveEvent;
    try {
      const envelope = JSON.parse(e.data) as { seq?: unknown; data?: LiveEvent["data"] };
      const { seq } = envelope;
      event = { type, data: envelope.data ?? {}, ...(typeof seq === "number" && Number.isSafeInteger(seq) ? { seq } : {}) };
    } catch {
      return;
    }
    this.host.event(event);
  }

  private setLive(live: boolean): void {
    if (this.live === live) return;
    this.live = live;
    this.host.liveChanged();
  }

  private scheduleReopen(max = 30_000): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.open(), this.retryDelay);
    this.retryDelay = Math.min(this.retryDelay * 2, max);
  }
}

/** Whether a `connected` frame says the replay asked for was cut to the window the stream keeps. */
function truncated(data: string): boolean {
  try {
    return (JSON.parse(data) as { truncated?: unknown }).truncated === true;
  } catch {
    return false;
  }
}
