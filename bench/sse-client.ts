// The stream bench's SSE client (bench/stream.ts, and its client processes in bench/stream-clients.ts).

import net from "node:net";

/** Milliseconds on CLOCK_MONOTONIC: the same clock in every process of the machine, so a time taken in one process compares with another's. */
export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export interface Client {
  socket: net.Socket;
  close(): void;
}

/** An `id:` line read: the stream's discussion, the id, and when its chunk was read (nowMs). */
export type OnEvent = (discussion: string, seq: number, at: number) => void;

const ID = Buffer.from("\nid: ");
const CONNECTED = Buffer.from("event: connected");

/**
 * A minimal SSE reader on a raw socket (an HTTP client's per-chunk overhead would dominate the
 * measurement with 10,000 streams): resolves once `connected` arrives; reports each `id:` line with
 * the time its chunk was read (the start of the socket's `data` callback). The stream body is
 * close-delimited, so after the head it is plain SSE text. `localAddress` binds the client's end to
 * that loopback address (more source addresses, more ephemeral ports: about 28,000 per address).
 */
export function connect(
  url: string,
  discussion: string,
  key: string,
  onEvent: OnEvent,
  headers: Record<string, string> = {},
  localAddress?: string,
): Promise<Client> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(port), host: hostname, ...(localAddress ? { localAddress } : {}) });
    const client: Client = { socket, close: () => socket.destroy() };
    let connected = false;
    let first = true;
    let tail: Buffer = Buffer.alloc(0);
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    socket.setNoDelay(true);
    socket.write(`GET /api/v1/stream/${discussion} HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${key}\r\n${extra}\r\n`);
    socket.on("data", (chunk: Buffer) => {
      const at = nowMs();
      // keep a few bytes of the previous chunk so a marker split across chunks is still found
      const buf = tail.length ? Buffer.concat([tail, chunk]) : chunk;
      if (first) {
        first = false;
        if (!buf.subarray(0, 12).toString("latin1").startsWith("HTTP/1.1 200")) {
          reject(new Error(`stream answered ${buf.subarray(0, 40).toString("latin1")}`));
          socket.destroy();
          return;
        }
      }
      if (!connected) {
        if (buf.includes(CONNECTED)) {
          connected = true;
          resolve(client);
        }
      }
      let i = buf.indexOf(ID);
      while (i !== -1) {
        const eol = buf.indexOf(10, i + ID.length);
        if (eol === -1) break; // the id line continues in the next chunk
        onEvent(discussion, Number(buf.toString("latin1", i + ID.length, eol)), at);
        i = buf.indexOf(ID, eol);
      }
      tail = i !== -1 ? buf.subarray(i) : buf.subarray(Math.max(0, buf.length - ID.length));
    });
    socket.on("error", (err) => (connected ? undefined : reject(err)));
  });
}
