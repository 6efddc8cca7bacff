import { EventEmitter } from "node:events";
import http from "node:http";
import net from "node:net";
import { EventSource } from "eventsource";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  DEFAULT_MAX_BUFFERED_BYTES,
  SseWriter,
  formatComment,
  formatEvent,
  sseHeaders,
  type SseCloseReason,
  type SseTarget,
} from "../../src/stream-engine/sse-writer.js";

const WAIT = { timeout: 10_000, interval: 5 };

describe("SSE framing", () => {
  it("frames id, event and data", () => {
    expect(formatEvent({ id: 42, event: "comment_created", data: '{"a":1}' })).toBe('id: 42\nevent: comment_created\ndata: {"a":1}\n\n');
    expect(formatEvent({ event: "connected", data: "{}" })).toBe("event: connected\ndata: {}\n\n");
    expect(formatEvent({ id: "7", event: "x", data: "", retry: 3000 })).toBe("id: 7\nevent: x\nretry: 3000\ndata: \n\n");
  });

  it("splits multi-line data on LF, CRLF and lone CR into several data lines", () => {
    expect(formatEvent({ event: "m", data: "a\nb\r\nc\rd\n" })).toBe("event: m\ndata: a\ndata: b\ndata: c\ndata: d\ndata: \n\n");
    // Data can never end the frame early or inject fields.
    const frame = formatEvent({ event: "m", data: "x\n\nevent: evil\nid: 999" });
    expect(frame).toBe("event: m\ndata: x\ndata: \ndata: event: evil\ndata: id: 999\n\n");
  });

  it("rejects line breaks and NUL in ids and event names", () => {
    expect(() => formatEvent({ id: "1\n2", event: "m", data: "" })).toThrow(TypeError);
    expect(() => formatEvent({ id: "1\r", event: "m", data: "" })).toThrow(TypeError);
    expect(() => formatEvent({ id: "a\0", event: "m", data: "" })).toThrow(TypeError);
    expect(() => formatEvent({ event: "m\ndata: x", data: "" })).toThrow(TypeError);
    expect(() => formatEvent({ event: "", data: "" })).toThrow(TypeError);
    expect(() => formatEvent({ id: Number.NaN, event: "m", data: "" })).toThrow(TypeError);
    expect(() => formatEvent({ event: "m", data: "", retry: -1 })).toThrow(TypeError);
  });

  it("frames comments, multi-line ones line by line", () => {
    expect(formatComment("hb")).toBe(": hb\n\n");
    expect(formatComment()).toBe(":\n\n");
    expect(formatComment("a\nb")).toBe(": a\n: b\n\n");
  });

  it("builds the stream headers", () => {
    expect(sseHeaders()).toEqual({
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    expect(sseHeaders({ Deprecation: "true" })).toMatchObject({ Deprecation: "true", Connection: "keep-alive" });
  });
});

/** A target whose buffered byte count the test controls. */
class FakeTarget extends EventEmitter implements SseTarget {
  writableLength = 0;
  destroyed = false;
  writableEnded = false;
  written: string[] = [];
  write(chunk: string): boolean {
    this.written.push(chunk);
    this.writableLength += Buffer.byteLength(chunk);
    return this.writableLength < 16 * 1024;
  }
  end(): void {
    this.writableEnded = true;
  }
  destroy(): void {
    this.destroyed = true;
    this.writableLength = 0;
    this.emit("close");
  }
}

describe("SseWriter bound (fake target)", () => {
  it("defaults to 1 MiB", () => {
    expect(new SseWriter(new FakeTarget()).maxBufferedBytes).toBe(DEFAULT_MAX_BUFFERED_BYTES);
    expect(DEFAULT_MAX_BUFFERED_BYTES).toBe(1024 * 1024);
  });

  it("writes up to the bound and destroys instead of buffering past it", () => {
    const target = new FakeTarget();
    const onOverflow = vi.fn();
    const reasons: SseCloseReason[] = [];
    const w = new SseWriter(target, { maxBufferedBytes: 100, onOverflow, onClose: (r) => reasons.push(r) });
    expect(w.send("x".repeat(60))).toBe(true);
    expect(w.send("y".repeat(40))).toBe(true); // exactly at the bound
    expect(target.writableLength).toBe(100);
    expect(w.send("z")).toBe(false);
    expect(target.destroyed).toBe(true);
    expect(target.written).toHaveLength(2);
    expect(onOverflow).toHaveBeenCalledTimes(1);
    expect(onOverflow).toHaveBeenCalledWith({ bufferedBytes: 100, frameBytes: 1, maxBufferedBytes: 100 });
    expect(reasons).toEqual(["overflow"]);
    expect(w.closed).toBe(true);
    expect(w.send("again")).toBe(false);
    expect(w.heartbeat()).toBe(false);
    expect(onOverflow).toHaveBeenCalledTimes(1);
  });

  it("counts bytes, not characters", () => {
    const target = new FakeTarget();
    const w = new SseWriter(target, { maxBufferedBytes: 10 });
    expect(w.send("é")).toBe(true); // 2 bytes
    expect(w.send("€€")).toBe(true); // 6 bytes: 8 in total
    expect(w.send("é")).toBe(true); // 10
    expect(w.send("a")).toBe(false);
  });

  it("still writes one frame larger than the bound when nothing is buffered", () => {
    const target = new FakeTarget();
    const w = new SseWriter(target, { maxBufferedBytes: 10 });
    expect(w.send("x".repeat(50))).toBe(true);
    target.writableLength = 0; // flushed
    expect(w.send("x".repeat(50))).toBe(true);
    expect(w.send("x")).toBe(false);
  });

  it("reports backpressure until drain", () => {
    const target = new FakeTarget();
    const w = new SseWriter(target, { maxBufferedBytes: 1024 * 1024 });
    w.send("x".repeat(20 * 1024));
    expect(w.backpressured).toBe(true);
    target.emit("drain");
    expect(w.backpressured).toBe(false);
  });

  it("closes on a stream error without throwing", () => {
    const target = new FakeTarget();
    const reasons: SseCloseReason[] = [];
    const w = new SseWriter(target, { onClose: (r) => reasons.push(r) });
    target.emit("error", new Error("EPIPE"));
    expect(w.closed).toBe(true);
    expect(target.destroyed).toBe(true);
    expect(reasons).toEqual(["error"]);
    expect(() => target.emit("error", new Error("again"))).not.toThrow();
  });
});

describe("SseWriter over node:http", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
    const server = http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    return (server.address() as net.AddressInfo).port;
  }

  it("streams frames a standard EventSource client parses back", async () => {
    const port = await serve((_req, res) => {
      res.writeHead(200, sseHeaders());
      const w = new SseWriter(res);
      w.send(formatEvent({ event: "connected", data: JSON.stringify({ replayed: 0 }) }));
      w.heartbeat("hb");
      w.send(formatEvent({ id: 5, event: "comment_created", data: "line 1\r\nline 2\n\nevent: evil" }));
      w.send(formatEvent({ id: 6, event: "comment_deleted", data: "{}" }));
    });
    const es = new EventSource(`http://127.0.0.1:${port}/`);
    cleanups.push(() => es.close());
    const got: { type: string; data: string; id: string }[] = [];
    for (const type of ["connected", "comment_created", "comment_deleted", "evil", "message"]) {
      es.addEventListener(type, (e) => got.push({ type, data: e.data, id: e.lastEventId }));
    }
    await vi.waitFor(() => expect(got).toHaveLength(3), WAIT);
    expect(got).toEqual([
      { type: "connected", data: '{"replayed":0}', id: "" },
      { type: "comment_created", data: "line 1\nline 2\n\nevent: evil", id: "5" },
      { type: "comment_deleted", data: "{}", id: "6" },
    ]);
  });

  it("destroys the connection and fires onOverflow once when the client stops reading", async () => {
    const max = 256 * 1024;
    const frame = formatEvent({ event: "comment_created", data: "x".repeat(64 * 1024) });
    const frameBytes = Buffer.byteLength(frame);
    const onOverflow = vi.fn();
    const reasons: SseCloseReason[] = [];
    let sentBytes = 0;
    let maxSeenBuffered = 0;
    let res: http.ServerResponse | undefined;
    const port = await serve((_req, r) => {
      res = r;
      r.writeHead(200, sseHeaders());
      const w = new SseWriter(r, { maxBufferedBytes: max, onOverflow, onClose: (reason) => reasons.push(reason) });
      // A producer that ignores backpressure, as live events do: one frame per tick.
      const pump = () => {
        if (w.send(frame)) {
          sentBytes += frameBytes;
          maxSeenBuffered = Math.max(maxSeenBuffered, w.bufferedBytes);
          setImmediate(pump);
        }
      };
      pump();
    });

    const client = net.connect(port, "127.0.0.1");
    cleanups.push(() => void client.destroy());
    await new Promise<void>((resolve) => client.once("connect", resolve));
    client.pause(); // never reads
    client.write("GET /api/v1/stream/d1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");

    await vi.waitFor(() => expect(onOverflow).toHaveBeenCalledTimes(1), WAIT);
    const info = onOverflow.mock.calls[0]![0] as { bufferedBytes: number; frameBytes: number; maxBufferedBytes: number };
    expect(info.maxBufferedBytes).toBe(max);
    expect(info.bufferedBytes + info.frameBytes).toBeGreaterThan(max);
    expect(info.bufferedBytes).toBeLessThanOrEqual(max);
    expect(maxSeenBuffered).toBeLessThanOrEqual(max); // never held more than the bound
    expect(sentBytes).toBeGreaterThan(max); // the kernel took some before Node buffered
    expect(res?.destroyed).toBe(true);
    expect(res?.socket?.destroyed ?? true).toBe(true);
    expect(reasons).toEqual(["overflow"]);

    // The client, once it reads again, sees the connection end.
    const ended = new Promise<void>((resolve) => client.once("close", () => resolve()));
    client.on("error", () => {});
    client.resume();
    await ended;
    expect(onOverflow).toHaveBeenCalledTimes(1);
    expect(reasons).toEqual(["overflow"]);
  });

  it("does not overflow for a client that keeps reading", async () => {
    const frame = formatEvent({ event: "m", data: "y".repeat(16 * 1024) });
    const onOverflow = vi.fn();
    const port = await serve((_req, r) => {
      r.writeHead(200, sseHeaders());
      const w = new SseWriter(r, { maxBufferedBytes: 256 * 1024, onOverflow });
      let n = 0;
      const pump = () => {
        if (n++ < 64 && w.send(frame)) setImmediate(pump);
        else w.close();
      };
      pump();
    });
    const body = await new Promise<string>((resolve, reject) => {
      http.get(`http://127.0.0.1:${port}/`, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve(text));
        response.on("error", reject);
      });
    });
    expect(body).toBe(frame.repeat(64));
    expect(onOverflow).not.toHaveBeenCalled();
  });

  it("fires onClose('client') when the client goes away, and stops writing", async () => {
    const reasons: SseCloseReason[] = [];
    let writer: SseWriter | undefined;
    const port = await serve((_req, r) => {
      r.writeHead(200, sseHeaders());
      writer = new SseWriter(r, { onClose: (reason) => reasons.push(reason) });
      writer.heartbeat();
    });
    const req = http.get(`http://127.0.0.1:${port}/`, (response) => {
      response.once("data", () => req.destroy());
    });
    req.on("error", () => {});
    await vi.waitFor(() => expect(reasons).toEqual(["client"]), WAIT);
    expect(writer?.closed).toBe(true);
    expect(writer?.send(formatComment("late"))).toBe(false);
  });

  it("close() ends the response gracefully with the frames flushed", async () => {
    const reasons: SseCloseReason[] = [];
    const port = await serve((_req, r) => {
      r.writeHead(200, sseHeaders());
      const w = new SseWriter(r, { onClose: (reason) => reasons.push(reason) });
      w.send(formatEvent({ event: "connection-timeout", data: "{}" }));
      w.close();
      w.close();
      expect(w.closed).toBe(true);
    });
    const { headers, body } = await new Promise<{ headers: http.IncomingHttpHeaders; body: string }>((resolve) => {
      http.get(`http://127.0.0.1:${port}/`, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ headers: response.headers, body: text }));
      });
    });
    expect(headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(headers["cache-control"]).toBe("no-cache, no-transform");
    expect(headers["x-accel-buffering"]).toBe("no");
    expect(body).toBe("event: connection-timeout\ndata: {}\n\n");
    expect(reasons).toEqual(["server"]);
  });
});
