// A session's SSE transport: writes the contract's frames through the bounded SseWriter.
//
// The response body is close-delimited (HTTP/1.1 without chunked encoding: a stream only ever ends
// by closing its connection), so after the head each frame is one plain socket write of bytes that
// are encoded once per event and shared by every stream — no per-client encoding or chunk framing.
// The start of a stream (head, `connected`, the replay) is one write: a reconnect storm is mostly that.
//
// Pacing: while the socket asks us to wait (a write returned false), frames queue here and go out
// on 'drain'. Replayed frames (read deliberately, at most replay.maxEvents) do not count against
// the bound; live frames do: when the client's lag — bytes the socket holds plus live frames
// queued here — passes maxBufferedBytes, the client is cut off. Memory per slow client is bounded.
import type { ServerResponse } from "node:http";
import type { LiveEvent } from "./live-event.js";
import { SseWriter, formatComment, formatEvent } from "./sse-writer.js";
import type { ConnectedInfo, EndReason, StreamSink } from "./session.js";
import type { ReaderConnectedInfo, ReaderFrame, ReaderSink } from "./reader-stream.js";
import { CloseSignal } from "./close-signal.js";

export interface SseSinkOptions {
  headers: Record<string, string>;
  maxBufferedBytes: number;
  /** Called right before the response head is written: the stream is accepted. */
  onOpen(): void;
  onOverflow(): void;
}

type Frame = string | Buffer;
const HEARTBEAT = Buffer.from(formatComment("heartbeat"), "utf8");
const noop = () => {};

/** `event: presence` frames, encoded once per count (every stream of the discussion shares them); no `id:` line. */
const presenceFrames = new Map<number, Buffer>();
export function presenceFrame(reading: number): Buffer {
  let frame = presenceFrames.get(reading);
  if (!frame) {
    frame = Buffer.from(formatEvent({ event: "presence", data: JSON.stringify({ reading }) }), "utf8");
    if (presenceFrames.size >= 1024) presenceFrames.clear();
    presenceFrames.set(reading, frame);
  }
  return frame;
}
const byteLength = (f: Frame) => (typeof f === "string" ? Buffer.byteLength(f) : f.byteLength);

export class SseSink implements StreamSink, ReaderSink {
  private writer: SseWriter | undefined;
  private readonly closing = new CloseSignal();
  private live = false;
  /** `connected` and the replayed frames, until they leave with the head in one write */
  private startup: Buffer[] | null = null;
  private queue: Frame[] = [];
  /** index of the next frame to send in `queue` (a shift() per frame would be quadratic) */
  private head = 0;
  /** queued frames at the head of the queue that are replay (not counted against the bound) */
  private replayQueued = 0;
  private liveQueuedBytes = 0;
  private endAfterDrain = false;
  private readonly done: Promise<void>;
  private flushedResolve!: () => void;

  constructor(
    private readonly res: ServerResponse,
    private readonly opts: SseSinkOptions,
  ) {
    this.done = new Promise((resolve) => (this.flushedResolve = resolve));
    res.once("close", () => {
      this.flushedResolve();
      this.finish(); // the client went away (also before the stream started)
    });
    if (res.destroyed) this.finish();
  }

  get closed(): boolean {
    return this.closing.closed;
  }

  onClose(cb: () => void): void {
    this.closing.onClose(cb);
  }

  flushed(): Promise<void> {
    return this.done;
  }

  open(info: ConnectedInfo, position: number): void {
    this.openWith(info, position);
  }

  /** A reader's own stream (src/stream-engine/reader-stream.ts): the same framing, its own `connected`. */
  openReader(info: ReaderConnectedInfo, position: number): void {
    this.openWith(info, position);
  }

  frame(f: ReaderFrame): boolean {
    return this.write(f.sseBytes);
  }

  private openWith(info: ConnectedInfo | ReaderConnectedInfo, position: number): void {
    if (this.closing.closed) return;
    this.opts.onOpen();
    this.opts.onOpen = noop; // do not keep the request's objects alive for the stream's life
    this.res.useChunkedEncodingByDefault = false;
    // The head is only stored here: it goes out with the start-up frames (`connected` and the
    // replay), all in one socket write, when the session turns live (or at the end of this tick).
    this.res.writeHead(200, { ...this.opts.headers, Connection: "close" });
    const socket = this.res.socket;
    if (!socket || socket.destroyed) return this.finish();
    socket.setNoDelay(true);
    socket.once("finish", () => this.flushedResolve()); // our end() reached the kernel
    this.writer = new SseWriter(socket, {
      maxBufferedBytes: this.opts.maxBufferedBytes,
      onOverflow: () => this.opts.onOverflow(),
      onClose: () => this.finish(),
    });
    socket.on("drain", () => this.pump());
    this.startup = [Buffer.from(formatEvent({ id: position, event: "connected", data: JSON.stringify(info) }), "utf8")];
    process.nextTick(() => this.flushStartup());
  }

  /** The head and the start-up frames, as one write. */
  private flushStartup(): void {
    const frames = this.startup;
    if (!frames) return;
    this.startup = null;
    if (this.closing.closed || !this.writer || this.writer.closed) return;
    this.res.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
  }

  beginLive(): void {
    this.flushStartup();
    this.live = true;
  }

  event(ev: LiveEvent): boolean {
    return this.write(ev.sseBytes);
  }

  private write(bytes: Buffer): boolean {
    if (this.startup && !this.closing.closed) {
      this.startup.push(bytes); // a replayed event: its shared bytes, copied into the start-up write
      return true;
    }
    return this.enqueue(bytes);
  }

  presence(reading: number): void {
    this.flushStartup();
    this.enqueue(presenceFrame(reading)); // live: counts against the bound like any frame
  }

  heartbeat(): void {
    this.flushStartup();
    // a heartbeat only matters on an idle connection; a backlog keeps it alive anyway
    if (this.writer && this.queued === 0 && !this.writer.backpressured) this.writer.send(HEARTBEAT);
  }

  end(reason: EndReason): void {
    this.flushStartup();
    if (!this.writer || this.writer.closed) return this.finish();
    const frame = formatEvent({ event: "connection-timeout", data: JSON.stringify({ reason }) });
    if (this.queued === 0 && !this.writer.backpressured) {
      this.writer.send(frame);
      this.writer.close();
      return;
    }
    // let the backlog out first, then say goodbye (the bound still applies meanwhile)
    this.queue.push(frame);
    this.liveQueuedBytes += byteLength(frame);
    this.endAfterDrain = true;
  }

  private get queued(): number {
    return this.queue.length - this.head;
  }

  private enqueue(frame: Frame): boolean {
    const w = this.writer;
    if (!w || w.closed || this.endAfterDrain) return false;
    if (this.queued === 0 && !w.backpressured) return w.send(frame);
    this.queue.push(frame);
    if (!this.live) {
      this.replayQueued++;
      return true;
    }
    this.liveQueuedBytes += byteLength(frame);
    if (w.bufferedBytes + this.liveQueuedBytes > this.opts.maxBufferedBytes) {
      this.opts.onOverflow();
      this.res.destroy();
      this.finish();
      return false;
    }
    return true;
  }

  private pump(): void {
    const w = this.writer;
    if (!w) return;
    while (this.queued > 0 && !w.backpressured && !w.closed) {
      const frame = this.queue[this.head++] as Frame;
      if (this.replayQueued > 0) this.replayQueued--;
      else this.liveQueuedBytes -= byteLength(frame);
      w.send(frame);
    }
    if (this.queued === 0) {
      this.queue = [];
      this.head = 0;
      if (this.endAfterDrain) w.close();
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private finish(): void {
    if (this.closing.closed) return;
    this.startup = null;
    this.queue = [];
    this.head = 0;
    this.closing.fire();
  }
}
