// A TCP relay in front of a PostgreSQL server or pooler that reads what clients send: each
// connection's startup parameters and every Parse (the extended protocol's statement, with its name)
// and simple Query. Tests point DATABASE_URL at it to see what reaches the pooler.
import { connect, createServer, type Server, type Socket } from "node:net";

export interface WireTap {
  url: string;
  /** the startup parameters of every connection, in order */
  startups: Record<string, string>[];
  /** every Parse message: the statement's name ("" = unnamed) and text */
  parses: { name: string; text: string }[];
  /** every simple Query message's text */
  queries: string[];
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

function cstrings(buf: Buffer, from: number): string[] {
  const out: string[] = [];
  let at = from;
  while (at < buf.length) {
    const end = buf.indexOf(0, at);
    if (end < 0) break;
    out.push(buf.toString("utf8", at, end));
    at = end + 1;
  }
  return out;
}

/** Relays `targetUrl`'s host and port; the returned url is `targetUrl` pointed at the tap. */
export async function startWireTap(targetUrl: string): Promise<WireTap> {
  const target = new URL(targetUrl);
  const tap: Omit<WireTap, "url" | "close"> = { startups: [], parses: [], queries: [] };
  const sockets = new Set<Socket>();

  const server: Server = createServer((client) => {
    sockets.add(client);
    const upstream = connect({ host: target.hostname, port: Number(target.port || 5432) });
    sockets.add(upstream);
    let pending = Buffer.alloc(0);
    let started = false;
    const read = (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (!started) {
          if (pending.length < 8) return;
          const len = pending.readInt32BE(0);
          if (pending.length < len) return;
          const code = pending.readInt32BE(4);
          if (code !== SSL_REQUEST && code !== GSSENC_REQUEST && code !== CANCEL_REQUEST) {
            const words = cstrings(pending.subarray(0, len), 8); // key, value, …, "" (the end)
            const params: Record<string, string> = {};
            for (let i = 0; words[i] && i + 1 < words.length; i += 2) params[words[i]!] = words[i + 1]!;
            tap.startups.push(params);
            started = true;
          }
          pending = pending.subarray(len);
          continue;
        }
        if (pending.length < 5) return;
        const len = pending.readInt32BE(1);
        if (pending.length < len + 1) return;
        const type = String.fromCharCode(pending[0]!);
        const body = pending.subarray(5, len + 1);
        if (type === "P") {
          const [name = "", text = ""] = cstrings(body, 0);
          tap.parses.push({ name, text });
        } else if (type === "Q") {
          tap.queries.push(cstrings(body, 0)[0] ?? "");
        }
        pending = pending.subarray(len + 1);
      }
    };
    client.on("data", (chunk: Buffer) => {
      read(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as { port: number }).port);
  return {
    ...tap,
    url: url.toString(),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
