/**
 * Server-Sent Events framing and a bounded writer (API contract section 4, "Stream").
 *
 * The writer never holds more than `maxBufferedBytes` for a client that stops reading: a frame
 * that would take the buffered bytes (`writableLength`, which for an `http.ServerResponse`
 * includes the socket's buffer) over the bound is not written; the connection is destroyed
 * instead and `onOverflow` fires. A single frame larger than the bound is still written when
 * nothing is buffered, so a healthy client gets it.
 */

export interface SseEvent {
  id?: string | number;
  event: string;
  data: string;
  /** Reconnection delay hint for the client, in ms. */
  retry?: number;
}

/** Any field that must stay on one line (id, event name). */
const LINE_BREAK = /[\r\n]/;
/** Line terminators per the SSE parsing rules: CRLF, LF or a lone CR. */
const ANY_EOL = /\r\n|\r|\n/;

function singleLine(field: string, value: string): string {
  if (LINE_BREAK.test(value)) throw new TypeError(`SSE ${field} must not contain a line break`);
  if (value.includes("\0")) throw new TypeError(`SSE ${field} must not contain NUL`);
  return value;
}

/** `id: …\nevent: …\ndata: …\n\n`; multi-line data becomes several `data:` lines. */
export function formatEvent(ev: SseEvent): string {
  let out = "";
  if (ev.id !== undefined) {
    if (typeof ev.id === "number" && !Number.isFinite(ev.id)) throw new TypeError("SSE id must be finite");
    out += `id: ${singleLine("id", String(ev.id))}\n`;
  }
  const event = singleLine("event", ev.event);
  if (event === "") throw new TypeError("SSE event name must not be empty");
  out += `event: ${event}\n`;
  if (ev.retry !== undefined) {
    if (!Number.isInteger(ev.retry) || ev.retry < 0) throw new TypeError("SSE retry must be a non-negative integer");
    out += `retry: ${ev.retry}\n`;
  }
  for (const line of ev.data.split(ANY_EOL)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** `: text\n\n` — a comment line (ignored by clients; used as heartbeat). */
export function formatComment(text = ""): string {
  return `${text
    .split(ANY_EOL)
    .map((line) => (line === "" ? ":" : `: ${line}`))
    .join("\n")}\n\n`;
}

/** Response headers of an event stream; `extra` is merged over them. */
export function sseHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache, no-transform",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
    ...extra,
  };
}

/** What the writer needs from its target: an `http.ServerResponse` fits, so does a `net.Socket`. */
export interface SseTarget {
  write(chunk: string | Uint8Array): boolean;
  readonly writableLength: number;
  end(): unknown;
  destroy(error?: Error): unknown;
  readonly destroyed?: boolean;
  readonly writableEnded?: boolean;
  on(event: "drain" | "close" | "error", listener: (...args: unknown[]) => void): unknown;
  off(event: "drain" | "close" | "error", listener: (...args: unknown[]) => void): unknown;
}

/** Why the writer closed: `client` went away, `server` called close(), `overflow`, or a write `error`. */
export type SseCloseReason = "client" | "server" | "overflow" | "error";

export interface SseWriterOptions {
  /** Bound on bytes buffered for this client. Default 1 MiB. */
  maxBufferedBytes?: number;
  /** Fired once when the client fell so far behind that the connection was destroyed. */
  onOverflow?: (info: { bufferedBytes: number; frameBytes: number; maxBufferedBytes: number }) => void;
  /** Fired once when the writer closes, for any reason (after `onOverflow` on overflow). */
  onClose?: (reason: SseCloseReason) => void;
}

export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

export class SseWriter {
  readonly maxBufferedBytes: number;
  private readonly target: SseTarget;
  private readonly onOverflow: SseWriterOptions["onOverflow"];
  private readonly onCloseCb: SseWriterOptions["onClose"];
  private isClosed = false;
  private waitingForDrain = false;

  private readonly handleClose = () => this.finish("client");
  private readonly handleError = () => {
    this.finish("error");
    this.target.destroy();
  };
  private readonly handleDrain = () => {
    this.waitingForDrain = false;
  };

  constructor(target: SseTarget, opts: SseWriterOptions = {}) {
    const max = opts.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    if (!Number.isFinite(max) || max <= 0) throw new RangeError("maxBufferedBytes must be a positive number");
    this.maxBufferedBytes = max;
    this.target = target;
    this.onOverflow = opts.onOverflow;
    this.onCloseCb = opts.onClose;
    target.on("close", this.handleClose);
    target.on("error", this.handleError);
    target.on("drain", this.handleDrain);
    if (target.destroyed || target.writableEnded) this.finish("client");
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Bytes written but not yet handed to the kernel. */
  get bufferedBytes(): number {
    return this.target.writableLength;
  }

  /** True while the target asked us to wait for `drain` (the client is reading slower than we write). */
  get backpressured(): boolean {
    return this.waitingForDrain;
  }

  /**
   * Writes a formatted frame (a string, or its UTF-8 bytes — a Buffer shared by many writers is
   * written without copying). Returns true when it was written, false when the writer is closed
   * or the frame overflowed the bound (the connection is then destroyed).
   */
  send(frame: string | Uint8Array): boolean {
    if (this.isClosed) return false;
    const frameBytes = typeof frame === "string" ? Buffer.byteLength(frame, "utf8") : frame.byteLength;
    const buffered = this.target.writableLength;
    if (buffered > 0 && buffered + frameBytes > this.maxBufferedBytes) {
      this.overflow(buffered, frameBytes);
      return false;
    }
    const ok = this.target.write(frame);
    if (!ok) this.waitingForDrain = true;
    return true;
  }

  /** Sends a comment frame (`: hb`), keeping proxies from timing the connection out. */
  heartbeat(text = ""): boolean {
    return this.send(formatComment(text));
  }

  /** Ends the response gracefully (buffered frames are still flushed). */
  close(): void {
    if (this.isClosed) return;
    this.finish("server");
    this.target.end();
  }

  private overflow(bufferedBytes: number, frameBytes: number): void {
    // Mark closed first so nothing reentrant writes more, then free the buffers.
    this.isClosed = true;
    this.detach();
    this.target.destroy();
    try {
      this.onOverflow?.({ bufferedBytes, frameBytes, maxBufferedBytes: this.maxBufferedBytes });
    } finally {
      this.onCloseCb?.("overflow");
    }
  }

  private finish(reason: SseCloseReason): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.detach();
    this.onCloseCb?.(reason);
  }

  private detach(): void {
    this.target.off("close", this.handleClose);
    this.target.off("drain", this.handleDrain);
    // Keep a no-op error listener: a destroyed/ended stream may still emit 'error', which must not crash.
    this.target.off("error", this.handleError);
    this.target.on("error", noop);
  }
}

function noop(): void {}

export function createSseWriter(target: SseTarget, opts?: SseWriterOptions): SseWriter {
  return new SseWriter(target, opts);
}
