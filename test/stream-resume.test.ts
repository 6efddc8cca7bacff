// Resuming a stream cut in the middle of its replay (contract section 4, "Stream": `connected` carries
// the position the stream continues after, so ids on a stream never go backwards). A real
// EventSource (the `eventsource` package) whose connection is cut at a random point reconnects with
// the last id it saw, whatever frame that was, and must get every event exactly once, in order:
// with an API key, with a resumable ticket, and over the GraphQL subscription (`position`, `after`).
import { EventSource } from "eventsource";
import { createClient } from "graphql-sse";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { writeEvent } from "./support/sse.js";

let server: TestServer;
let t: TestTenant;
/** events before the client's Last-Event-ID, then a full replay window (replay.maxEvents = 1,000) */
const SKIPPED = 5;
const REPLAY = 1_000;
const LAST = SKIPPED + REPLAY;
const ID = "resume-1";

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  expect((await t.api.put(`/api/v1/discussions/${ID}`, {})).status).toBe(201);
  await writeEvent(server, t.tenantId, ID, { count: LAST });
}, 60_000);
afterAll(() => server?.stop());

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** an integer in [min, max] */
const randomInt = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

const RETRY = new TextEncoder().encode("retry: 10\n\n");

/**
 * A fetch for EventSource whose n-th response is cut after its `cuts[n]`-th frame and a few bytes of
 * the next (a connection dropped mid-frame: EventSource drops that partial frame, as over a real
 * network). The real connection is aborted, so the server sees the client go. Each body starts
 * with `retry: 10`, so EventSource reconnects after 10 ms instead of 3 s (no event, no id).
 */
function cuttingFetch(headers: Record<string, string>, cuts: number[], sent: { lastEventId: string | null }[]) {
  let n = 0;
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    // `headers` as given for the first connection; EventSource's own Last-Event-ID wins on a reconnect
    const all = new Headers(headers);
    for (const [k, v] of new Headers(init?.headers)) all.set(k, v);
    sent.push({ lastEventId: all.get("last-event-id") });
    const ctrl = new AbortController();
    init?.signal?.addEventListener("abort", () => ctrl.abort());
    const res = await fetch(input, { ...init, headers: all, signal: ctrl.signal });
    const cutAfter = cuts[n++];
    if (res.status !== 200 || !res.body) return res;
    const reader = res.body.getReader();
    let frames = 0;
    let prevNewline = false;
    let rest = -1; // bytes still to pass once the frame count is reached
    const body = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(RETRY),
      async pull(c) {
        const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (done) return c.close();
        if (cutAfter === undefined) return c.enqueue(value);
        for (let i = 0; i < value.length; i++) {
          if (rest === 0) {
            if (i > 0) c.enqueue(value.subarray(0, i));
            ctrl.abort();
            return c.close();
          }
          if (rest > 0) rest--;
          const newline = value[i] === 0x0a;
          if (newline && prevNewline && ++frames === cutAfter) rest = randomInt(0, 20);
          prevNewline = newline;
        }
        c.enqueue(value);
        if (rest >= 0) {
          // the frame count was reached and nothing more of this chunk is left to pass: cut now
          ctrl.abort();
          c.close();
        }
      },
      cancel: () => ctrl.abort(),
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

/** An EventSource whose first connections are cut after `cuts` frames; collects what it dispatched. */
function cutStream(url: string, headers: Record<string, string>, cuts: number[]) {
  const sent: { lastEventId: string | null }[] = [];
  const es = new EventSource(url, { fetch: cuttingFetch(headers, cuts, sent) });
  const frames: { event: string; id: string }[] = [];
  for (const name of ["connected", "discussion_locked", "connection-timeout"]) {
    es.addEventListener(name, (e) => void frames.push({ event: name, id: (e as MessageEvent<string>).lastEventId }));
  }
  return {
    sent,
    frames,
    seqs: () => frames.filter((f) => f.event === "discussion_locked").map((f) => Number(f.id)),
    close: () => es.close(),
  };
}

/** Waits until the client has every event of the replay, then a moment more for any duplicate. */
async function complete(c: ReturnType<typeof cutStream>, cuts: number[]) {
  await vi.waitFor(
    () => {
      if (c.seqs().length < REPLAY || c.sent.length <= cuts.length) throw new Error(`${c.seqs().length} events, ${c.sent.length} connects`);
    },
    { timeout: 20_000, interval: 20 },
  );
  await new Promise((r) => setTimeout(r, 100));
  c.close();
  const context = JSON.stringify({ cuts, sent: c.sent, connected: c.frames.filter((f) => f.event === "connected") });
  expect(c.seqs(), context).toEqual(range(SKIPPED + 1, LAST));
  return context;
}

/**
 * Where to cut: right after `connected` (the case a head id broke), at a random frame of the replay
 * (`connected` and 1,000 events), and three times in a row (each connection has frames enough left).
 */
function cutPlans(): number[][] {
  const third = () => randomInt(1, Math.floor(REPLAY / 3));
  return [[1], [randomInt(1, REPLAY + 1)], [third(), third(), third()]];
}

describe("a stream cut during its replay resumes where it broke", () => {
  it("with X-API-Key: every event exactly once, in order; `connected` carries the given Last-Event-ID", async () => {
    const plans = cutPlans();
    const clients = plans.map((cuts) =>
      cutStream(`${server.url}/api/v1/stream/${ID}`, { "x-api-key": t.apiKey, "last-event-id": String(SKIPPED) }, cuts),
    );
    for (const [i, c] of clients.entries()) {
      const context = await complete(c, plans[i]!);
      // the first `connected` continues after the given id, never at the head
      expect(c.frames[0], context).toEqual({ event: "connected", id: String(SKIPPED) });
      // the reconnect presents the last id dispatched before the cut (`connected`'s own when nothing followed)
      expect(c.sent[1]?.lastEventId, context).toBe(plans[i]![0] === 1 ? String(SKIPPED) : c.frames[plans[i]![0]! - 1]!.id);
      // ids never go backwards on the stream the client saw
      const ids = c.frames.map((f) => Number(f.id));
      expect(ids, context).toEqual([...ids].sort((a, b) => a - b));
    }
  }, 60_000);

  it("with a ticket: the EventSource resumes the redeemed ticket with the last id it saw", async () => {
    const plans = cutPlans();
    const clients = [];
    for (const cuts of plans) {
      const r = await t.api.post("/api/v1/stream/ticket", { discussionId: ID });
      expect(r.status).toBe(201);
      // the first connection presents Last-Event-ID as a query parameter (a browser cannot set the header)
      clients.push(cutStream(`${server.url}/api/v1/stream/${ID}?ticket=${r.body.ticket}&lastEventId=${SKIPPED}`, {}, cuts));
    }
    for (const [i, c] of clients.entries()) {
      const context = await complete(c, plans[i]!);
      expect(c.frames[0], context).toEqual({ event: "connected", id: String(SKIPPED) });
    }
  }, 60_000);
});

const SUBSCRIPTION = /* GraphQL */ `
  subscription Resume($d: String!, $after: Int, $ticket: String) {
    discussionEvents(discussionId: $d, after: $after, ticket: $ticket) {
      __typename
      ... on StreamConnected {
        position
        replayed
        truncated
      }
      ... on StreamEvent {
        seq
      }
    }
  }
`;

/**
 * Subscribes with `after`, stops after `take` items (or at the end of the replay) and returns the
 * items; the next subscription resumes after the last position or seq seen.
 */
async function subscribeUntil(path: string, headers: Record<string, string>, variables: Record<string, unknown>, take: number) {
  // a copy: the single-connection client writes its stream token into the headers object it is given
  const client = createClient({
    url: `${server.url}${path}`,
    headers: { ...headers },
    retryAttempts: 0,
    singleConnection: path.endsWith("/stream"),
  });
  const items: any[] = [];
  try {
    for await (const r of client.iterate({ query: SUBSCRIPTION, variables })) {
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      const item = r.data?.discussionEvents as any;
      items.push(item);
      if (items.length >= take || item?.seq === LAST) break;
    }
  } finally {
    client.dispose();
  }
  return items;
}

describe("the GraphQL subscription resumes with `after` = the last position or seq seen", () => {
  it.each([
    { name: "distinct connections, X-API-Key", path: "/graphql", ticket: false },
    { name: "single connection, ticket", path: "/graphql/stream", ticket: true },
  ])(
    "$name",
    async ({ path, ticket }) => {
      const minted = ticket ? (await t.api.post("/api/v1/stream/ticket", { discussionId: ID })).body.ticket : undefined;
      const headers: Record<string, string> = ticket ? {} : { "x-api-key": t.apiKey };
      const takes = [1, randomInt(2, REPLAY), Infinity];
      const seqs: number[] = [];
      let after = SKIPPED;
      for (const [i, take] of takes.entries()) {
        const items = await subscribeUntil(path, headers, { d: ID, after, ...(minted ? { ticket: minted } : {}) }, take);
        expect(items[0], JSON.stringify({ takes, i })).toMatchObject({ __typename: "StreamConnected", position: after, truncated: false });
        for (const item of items) {
          after = item.__typename === "StreamConnected" ? item.position : item.seq;
          if (item.__typename === "StreamEvent") seqs.push(item.seq);
        }
      }
      expect(seqs).toEqual(range(SKIPPED + 1, LAST));
    },
    60_000,
  );
});
