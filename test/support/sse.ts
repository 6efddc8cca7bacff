// Stream test helpers: a real SSE client (the `eventsource` package: reconnects with Last-Event-ID
// on its own), a raw reader for exact framing, and shortcuts to write events and tune settings.
import { request } from "node:http";
import { Readable } from "node:stream";
import { EventSource } from "eventsource";
import { vi } from "vitest";
import { STREAM_EVENT_TYPES, type Audience, type EventType } from "../../src/events/types.js";
import { appendEvent } from "../../src/events/statement.js";
import { generateApiKey } from "../../src/auth/key-auth.js";
import { newId } from "../../src/lib/ids.js";
import type { TestServer } from "./server.js";

export const WAIT = { timeout: 10_000, interval: 10 };

export interface Frame {
  event: string;
  id: string;
  data: any;
}

export interface SseClient {
  es: EventSource;
  frames: Frame[];
  /** frames of the 12 domain events only */
  events(): Frame[];
  errors: { code?: number; message?: string }[];
  /** opened connections (1 + reconnects) */
  opens: number;
  waitFor(pred: (frames: Frame[]) => boolean, timeout?: number): Promise<void>;
  waitForEvents(n: number, timeout?: number): Promise<Frame[]>;
  close(): void;
}

const FRAME_NAMES = [...STREAM_EVENT_TYPES, "connected", "connection-timeout", "inbox_item", "inbox_read"];

/**
 * Opens an EventSource; `headers` go on every (re)connect, as a server-side client would send them.
 * `from`: the local address to connect from (another loopback address, 127.0.0.2 …, is another
 * client address to the server).
 */
export function openSse(url: string, headers: Record<string, string> = {}, opts: { from?: string } = {}): SseClient {
  const via = opts.from ? fetchFrom(opts.from) : fetch;
  const es = new EventSource(url, {
    fetch: (input, init) => via(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
  });
  const frames: Frame[] = [];
  const c: SseClient = {
    es,
    frames,
    events: () => frames.filter((f) => (STREAM_EVENT_TYPES as readonly string[]).includes(f.event)),
    errors: [],
    opens: 0,
    async waitFor(pred, timeout = WAIT.timeout) {
      await vi.waitFor(
        () => {
          if (!pred(frames)) throw new Error(`condition not met; frames: ${JSON.stringify(frames.map((f) => [f.event, f.id]))}`);
        },
        { timeout, interval: WAIT.interval },
      );
    },
    async waitForEvents(n, timeout) {
      await c.waitFor(() => c.events().length >= n, timeout);
      return c.events();
    },
    close: () => es.close(),
  };
  for (const name of FRAME_NAMES) {
    es.addEventListener(name, (e) => {
      const m = e as MessageEvent<string>;
      frames.push({ event: name, id: m.lastEventId, data: JSON.parse(m.data) });
    });
  }
  es.addEventListener("open", () => void c.opens++);
  es.addEventListener(
    "error",
    (e) => void c.errors.push({ code: (e as { code?: number }).code, message: (e as { message?: string }).message }),
  );
  return c;
}

/** A fetch for GETs whose connections come from `localAddress` (node:http; fetch cannot choose it). */
function fetchFrom(localAddress: string): typeof fetch {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const req = request(
        String(input instanceof Request ? input.url : input),
        { method: "GET", headers: init?.headers as Record<string, string>, localAddress },
        (res) => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
          resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status: res.statusCode ?? 0, headers }));
        },
      );
      init?.signal?.addEventListener("abort", () => req.destroy(new Error("aborted")));
      req.on("error", reject);
      req.end();
    });
}

/** Reads a stream's raw bytes (exact framing, headers). */
export async function rawSse(url: string, headers: Record<string, string> = {}) {
  const ctrl = new AbortController();
  const res = await fetch(url, { headers, signal: ctrl.signal });
  let text = "";
  let ended = false;
  const pump = (async () => {
    if (!res.body) return;
    const dec = new TextDecoder();
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += dec.decode(value, { stream: true });
      }
    } catch {
      /* aborted */
    }
    ended = true;
  })();
  return {
    res,
    status: res.status,
    headers: res.headers,
    text: () => text,
    ended: () => ended,
    async waitForText(pred: (t: string) => boolean, timeout = WAIT.timeout) {
      await vi.waitFor(
        () => {
          if (!pred(text)) throw new Error(`not yet: ${JSON.stringify(text.slice(-500))}`);
        },
        { timeout, interval: WAIT.interval },
      );
    },
    async waitForEnd(timeout = WAIT.timeout) {
      await vi.waitFor(
        () => {
          if (!ended) throw new Error("stream still open");
        },
        { timeout, interval: WAIT.interval },
      );
    },
    close: async () => {
      ctrl.abort();
      await pump;
    },
  };
}

/** Appends events as the domain's write functions do (row lock, seq, jobs, publish after commit). */
export async function writeEvent(
  server: TestServer,
  tenantId: string,
  discussionId: string,
  e: { type?: EventType; data?: Record<string, unknown>; audience?: Audience; readerId?: string | null; count?: number } = {},
): Promise<number[]> {
  const seqs: number[] = [];
  const services = server.app.runtime.services;
  for (let i = 0; i < (e.count ?? 1); i++) {
    const stored = await appendEvent(services, {
      tenantId,
      discussionId,
      type: e.type ?? "discussion_locked",
      data: e.data ?? { discussion: { id: discussionId, n: i } },
      ...(e.audience ? { audience: e.audience } : {}),
      ...(e.readerId !== undefined ? { readerId: e.readerId } : {}),
      at: services.clock.now(),
    });
    seqs.push(stored.envelope.seq);
  }
  return seqs;
}

/** Merges into the tenant's stored settings (what PATCH /settings does), straight in the database. */
export async function patchSettings(server: TestServer, tenantId: string, patch: Record<string, unknown>) {
  const prisma = server.app.runtime.services.prisma;
  const t = await prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } });
  const stored = (t.settings ?? {}) as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...stored };
  for (const [k, v] of Object.entries(patch)) {
    const cur = stored[k];
    merged[k] = v && typeof v === "object" && cur && typeof cur === "object" ? { ...cur, ...v } : v;
  }
  await prisma.tenant.update({ where: { id: tenantId }, data: { settings: merged as any } });
  server.app.runtime.services.authCache.invalidateTenant(tenantId); // written behind the API's back
}

/** An API key with exactly these capabilities (made in the database, as `POST /keys` would). */
export async function createKey(server: TestServer, tenantId: string, capabilities: string[] = []): Promise<string> {
  const k = generateApiKey();
  await server.app.runtime.services.prisma.apiKey.create({
    data: { id: newId("key"), tenantId, label: "stream test", keyHash: k.hash, prefix: k.prefix, capabilities },
  });
  return k.raw;
}

export const seqsOf = (frames: Frame[]) => frames.map((f) => Number(f.id));
