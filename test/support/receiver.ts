// A real webhook receiver on loopback (node:http on 127.0.0.1:0) for tests: records every request
// with its raw body and arrival time, answers the handshake by default, and can be told to fail,
// hang or answer anything per request.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";

export interface Received {
  /** Date.now() when the request had fully arrived */
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  json: any;
  event: string | undefined;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** keep the request open until release() or close() */
  hang?: boolean;
  delayMs?: number;
}

/** Decides the answer; `n` counts the requests of the same kind (handshakes vs deliveries), 1-based. */
export type Responder = (req: Received, n: number) => Reply | Promise<Reply>;

/** Echo the challenge for handshakes, 200 for deliveries. */
export const okResponder: Responder = (req) =>
  req.event === "verification" ? { status: 200, body: { challenge: req.json?.challenge } } : { status: 200, body: "ok" };

export interface Receiver {
  url: string;
  requests: Received[];
  respond: Responder;
  handshakes(): Received[];
  deliveries(): Received[];
  /** Resolves when `pred(requests)` holds (checked on every request and every 20 ms). */
  waitFor(pred: (reqs: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Answers every hanging request with 200. */
  release(): void;
  close(): Promise<void>;
}

export async function startReceiver(respond: Responder = okResponder): Promise<Receiver> {
  const requests: Received[] = [];
  const hanging = new Set<ServerResponse>();
  const counts = { verification: 0, delivery: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        json = undefined;
      }
      const event = req.headers["x-service-event"] as string | undefined;
      const r: Received = { at: Date.now(), method: req.method ?? "", path: req.url ?? "", headers: req.headers, raw, json, event };
      requests.push(r);
      const n = event === "verification" ? ++counts.verification : ++counts.delivery;
      void Promise.resolve(receiver.respond(r, n)).then(async (reply) => {
        if (reply.delayMs) await new Promise((ok) => setTimeout(ok, reply.delayMs));
        if (reply.hang) {
          hanging.add(res);
          res.on("close", () => hanging.delete(res));
          return;
        }
        const body = reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
        res.writeHead(reply.status ?? 200, {
          "content-type": typeof reply.body === "string" ? "text/plain" : "application/json",
          ...reply.headers,
        });
        res.end(body);
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;

  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    respond,
    handshakes: () => requests.filter((r) => r.event === "verification"),
    deliveries: () => requests.filter((r) => r.event !== "verification"),
    async waitFor(pred, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pred(requests)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${requests.length} requests)`);
        await new Promise((ok) => setTimeout(ok, 20));
      }
    },
    release() {
      for (const res of hanging) {
        res.writeHead(200).end("ok");
      }
      hanging.clear();
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
  return receiver;
}

/** Polls `check` until it returns a truthy value. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 10_000,
  stepMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((ok) => setTimeout(ok, stepMs));
  }
}
