// Presence (contract section 19): the open streams of a discussion count as its readers across
// instances (two servers on one Redis), a closed stream stops counting, a killed instance's streams
// vanish within the (short, here) expiry, `event: presence` frames are coalesced and carry no id,
// `counts?presence=true` adds `reading`, and embedded mode (no Redis) counts in process. Readers are
// people, not connections: a reader's streams count once, a client address's reader-less streams
// up to STREAM_PRESENCE_PER_ADDRESS. Other loopback addresses (127.0.0.2 …) are other clients.
import type { ChildProcess } from "node:child_process";
import { createClient } from "graphql-sse";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { startServer, testEnv, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { openSse, rawSse, type SseClient } from "./support/sse.js";
import { signInGuest } from "./support/sign-in.js";
import { spawnReady } from "./support/process.js";
import type { HubOptions } from "../src/stream-engine/hub.js";
import { DEFAULT_PRESENCE_PER_ADDRESS, presenceKey } from "../src/stream-engine/presence.js";

const PRESENCE: Partial<HubOptions> = { presenceTtlMs: 1_500, presenceRefreshMs: 300, presenceIntervalMs: 400 };

let a: TestServer;
let b: TestServer;
let t: TestTenant;
let n = 0;
const open: { close(): unknown }[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([startServer({}, { stream: PRESENCE }), startServer({}, { stream: PRESENCE })]);
  t = await createTestTenant(a);
});
afterAll(async () => {
  for (const c of open) await c.close();
  for (const c of children) c.kill("SIGKILL");
  await Promise.all([a?.stop(), b?.stop()]);
});

async function discussion(tenant = t): Promise<string> {
  const id = `p-${++n}`;
  expect((await tenant.api.put(`/api/v1/discussions/${id}`, {})).status).toBe(201);
  return id;
}

/**
 * A stream that records its presence frames (and when they came) and the last event id it saw;
 * opened with `key` (and a reader's `identity`) from the address `from` (default 127.0.0.1).
 */
function stream(server: { url: string }, id: string, key = t.apiKey, o: { identity?: string; from?: string } = {}) {
  const headers: Record<string, string> = { "x-api-key": key, ...(o.identity ? { "x-service-identity": o.identity } : {}) };
  return watch(`${server.url}/api/v1/stream/${id}`, headers, o.from);
}

/** The same, opened with a stream ticket (as a browser does). */
function ticketStream(server: { url: string }, id: string, ticket: string, from?: string) {
  return watch(`${server.url}/api/v1/stream/${id}?ticket=${ticket}`, {}, from);
}

function watch(url: string, headers: Record<string, string>, from: string | undefined) {
  const c = openSse(url, headers, from ? { from } : {});
  const presence: { reading: number; at: number }[] = [];
  c.es.addEventListener("presence", (e) => {
    const m = e as MessageEvent<string>;
    presence.push({ ...(JSON.parse(m.data) as { reading: number }), at: Date.now() });
  });
  open.push(c);
  return Object.assign(c, { presence, reading: () => presence.at(-1)?.reading });
}

const connected = (c: SseClient) => c.waitFor((f) => f.some((x) => x.event === "connected"));

async function reading(server: { url: string }, ids: string[], key = t.apiKey): Promise<Record<string, number>> {
  const r = await fetch(`${server.url}/api/v1/discussions/counts?ids=${ids.join(",")}&presence=true`, { headers: { "x-api-key": key } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { reading: Record<string, number> }).reading;
}

describe("presence across instances", () => {
  it("counts the streams on both instances; a closed one stops counting", async () => {
    const id = await discussion();
    const other = await discussion();
    // three clients (each address's streams count apart)
    const s1 = stream(a, id);
    await connected(s1);
    const s2 = stream(b, id, t.apiKey, { from: "127.0.0.2" });
    const s3 = stream(b, id, t.apiKey, { from: "127.0.0.3" });
    await Promise.all([connected(s2), connected(s3)]);
    await vi.waitFor(async () => expect(await reading(a, [id, other])).toEqual({ [id]: 3, [other]: 0 }), { timeout: 5_000 });
    expect(await reading(b, [id])).toEqual({ [id]: 3 });
    // every stream, on either instance, is told 3
    await vi.waitFor(() => expect([s1.reading(), s2.reading(), s3.reading()]).toEqual([3, 3, 3]), { timeout: 5_000 });

    s3.close();
    await vi.waitFor(() => expect(s1.reading()).toBe(2), { timeout: 5_000 });
    expect(await reading(b, [id])).toEqual({ [id]: 2 });
    s2.close();
    await vi.waitFor(() => expect(s1.reading()).toBe(1), { timeout: 5_000 });
    expect(await reading(b, [id])).toEqual({ [id]: 1 });
  });

  it('frames presence as `event: presence` / `data: {"reading": n}`, without an id line', async () => {
    const id = await discussion();
    const raw = await rawSse(`${a.url}/api/v1/stream/${id}`, { "x-api-key": t.apiKey });
    open.push(raw);
    await raw.waitForText((x) => x.includes("event: connected"));
    const s = stream(b, id);
    await connected(s);
    await raw.waitForText((x) => x.includes("event: presence"));
    const frame = raw
      .text()
      .split("\n\n")
      .find((f) => f.includes("event: presence"));
    // no `id:` line: per the SSE rules the client's Last-Event-ID stays that of the last domain event
    expect(frame).toBe('event: presence\ndata: {"reading":2}');
    expect((await t.api.post(`/api/v1/discussions/${id}/lock`)).status).toBe(200);
    await raw.waitForText((x) => x.includes("event: discussion_locked"));
    expect(raw.text()).toContain("id: 1\nevent: discussion_locked");
  });

  it("a lone stream is sent no presence frame (it is the one reader)", async () => {
    const id = await discussion();
    const raw = await rawSse(`${a.url}/api/v1/stream/${id}`, { "x-api-key": t.apiKey });
    open.push(raw);
    await raw.waitForText((x) => x.includes("event: connected"));
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 1 }));
    await new Promise((r) => setTimeout(r, 3 * PRESENCE.presenceIntervalMs!)); // what would have come has come
    expect(raw.text()).not.toContain("presence");
  });

  it("coalesces changes: at most one frame per interval per discussion", async () => {
    const id = await discussion();
    const watcher = stream(a, id);
    await connected(watcher);
    // eight clients' streams join in a burst on the other instance, then four leave
    const burst = Array.from({ length: 8 }, (_, i) => stream(b, id, t.apiKey, { from: `127.0.0.${10 + i}` }));
    await Promise.all(burst.map(connected));
    for (const c of burst.slice(0, 4)) c.close();
    await vi.waitFor(() => expect(watcher.reading()).toBe(5), { timeout: 5_000 });
    await new Promise((r) => setTimeout(r, 2 * PRESENCE.presenceIntervalMs!));
    expect(watcher.reading()).toBe(5);
    const at = watcher.presence.map((p) => p.at);
    expect(at.length).toBeLessThan(12); // 12 changes
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(PRESENCE.presenceIntervalMs! - 50);
    for (const c of burst.slice(4)) c.close();
  });

  it("counts a GraphQL subscription of the discussion as a reader", async () => {
    const id = await discussion();
    const c = createClient({ url: `${b.url}/graphql/stream`, headers: { "x-api-key": t.apiKey }, retryAttempts: 0 });
    const sub = c.iterate({
      query: `subscription($d: String!) { discussionEvents(discussionId: $d) { __typename } }`,
      variables: { d: id },
    });
    await sub.next(); // StreamConnected
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 1 }), { timeout: 5_000 });
    await sub.return?.();
    c.dispose();
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 0 }), { timeout: 5_000 });
  });

  it("a killed instance's streams stop counting within the expiry; a client it shared counts by its other streams", async () => {
    const id = await discussion();
    const watcher = stream(a, id);
    await connected(watcher);
    const env = {
      ...process.env,
      ...testEnv(),
      PRESENCE_TTL_MS: String(PRESENCE.presenceTtlMs),
      PRESENCE_REFRESH_MS: String(PRESENCE.presenceRefreshMs),
      PRESENCE_INTERVAL_MS: String(PRESENCE.presenceIntervalMs),
    };
    const { proc, ready: url } = await spawnReady("test/support/presence-server.mjs", env, 60_000);
    children.push(proc);
    // two clients with a stream there only, and a third with three there (the cap's worth) and one here
    const crashing = [
      stream({ url }, id, t.apiKey, { from: "127.0.0.2" }),
      stream({ url }, id, t.apiKey, { from: "127.0.0.3" }),
      ...Array.from({ length: 3 }, () => stream({ url }, id, t.apiKey, { from: "127.0.0.4" })),
    ];
    await Promise.all(crashing.map(connected));
    const shared = stream(b, id, t.apiKey, { from: "127.0.0.4" });
    await connected(shared);
    // (every stream is recorded before it is connected: the count never passes through this on its way up)
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 1 + 2 + DEFAULT_PRESENCE_PER_ADDRESS }), {
      timeout: 5_000,
    });
    await vi.waitFor(() => expect(watcher.reading()).toBe(1 + 2 + DEFAULT_PRESENCE_PER_ADDRESS), { timeout: 5_000 });
    proc.kill("SIGKILL");
    const killedAt = Date.now();
    for (const c of crashing) c.close(); // the client side only: the killed server never removes them
    // the watcher and the shared client's stream here
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 2 }), { timeout: 10_000, interval: 50 });
    // gone from the counts no later than the expiry after the last refresh (and the next refresh here)
    expect(Date.now() - killedAt).toBeLessThan(PRESENCE.presenceTtlMs! + PRESENCE.presenceRefreshMs! + 1_000);
    // and the streams of the surviving instances are told, by their next refresh and count
    await vi.waitFor(() => expect([watcher.reading(), shared.reading()]).toEqual([2, 2]), { timeout: 5_000 });
    shared.close();
  });
});

describe("people, not connections", () => {
  const CAP = DEFAULT_PRESENCE_PER_ADDRESS;
  const mint = async (creds: Parameters<TestTenant["as"]>[0], id: string) => {
    const r = await t.as(creds).post("/api/v1/stream/ticket", { discussionId: id });
    expect(r.status).toBe(201);
    return r.body.ticket as string;
  };

  it("50 streams of one publishable key from one address count as the cap, across instances; closing brings it down", async () => {
    const id = await discussion();
    const pk = (await t.admin.post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
    const tickets = await Promise.all(Array.from({ length: 50 }, () => mint({ key: pk }, id)));
    const flood = tickets.map((ticket, i) => ticketStream(i % 2 ? a : b, id, ticket));
    await Promise.all(flood.map(connected));
    // someone else, elsewhere, is told the flood's CAP and themselves
    const other = stream(a, id, t.apiKey, { from: "127.0.0.2" });
    await connected(other);
    await vi.waitFor(() => expect(other.reading()).toBe(CAP + 1), { timeout: 5_000 });
    expect(await reading(a, [id])).toEqual({ [id]: CAP + 1 });
    expect(await reading(b, [id])).toEqual({ [id]: CAP + 1 });
    // fewer than CAP left open: each counts again
    for (const c of flood.slice(0, 50 - (CAP - 1))) c.close();
    await vi.waitFor(async () => expect(await reading(b, [id])).toEqual({ [id]: CAP }), { timeout: 5_000 });
    for (const c of flood.slice(50 - (CAP - 1))) c.close();
    await vi.waitFor(() => expect(other.reading()).toBe(1), { timeout: 5_000 });
    expect(await reading(a, [id])).toEqual({ [id]: 1 });
    other.close();
    await vi.waitFor(async () => expect(await reading(b, [id])).toEqual({ [id]: 0 }), { timeout: 5_000 });
  });

  it("a reader counts once, however many streams on whichever instance; two readers at one address count two", async () => {
    const id = await discussion();
    const [alice, bob] = await Promise.all([t.identity("alice"), t.identity("bob")]);
    // a key with her identity on both instances, and tickets minted for her, from two addresses
    const hers = [
      stream(a, id, t.apiKey, { identity: alice }),
      stream(b, id, t.apiKey, { identity: alice }),
      ticketStream(b, id, await mint({ key: t.apiKey, identity: alice }, id), "127.0.0.2"),
      ticketStream(a, id, await mint({ key: t.apiKey, identity: alice }, id)),
    ];
    await Promise.all(hers.map(connected));
    // bob, from her address (127.0.0.1)
    const his = stream(b, id, t.apiKey, { identity: bob });
    await connected(his);
    await vi.waitFor(() => expect(his.reading()).toBe(2), { timeout: 5_000 });
    await vi.waitFor(() => expect(hers.map((c) => c.reading())).toEqual([2, 2, 2, 2]), { timeout: 5_000 });
    expect(await reading(a, [id])).toEqual({ [id]: 2 });
    // Redis holds them hashed: neither reader's id nor an address appears in a key or a member
    const redis = new Redis(inject("redisUrl"));
    try {
      const keys = await redis.keys(`${presenceKey(t.tenantId, id)}*`);
      expect(keys.length).toBeGreaterThan(1);
      const contents = await Promise.all(
        keys.map(async (k) => ((await redis.type(k)) === "hash" ? redis.hkeys(k) : redis.zrange(k, 0, -1))),
      );
      const held = [...keys, ...contents.flat()].join("\n");
      expect(held).not.toMatch(/alice|bob|127\.0\.0|::1/);
    } finally {
      redis.disconnect();
    }
    // she closes all but one stream: still there
    for (const c of hers.slice(0, 3)) c.close();
    await new Promise((r) => setTimeout(r, 2 * PRESENCE.presenceIntervalMs!));
    expect(await reading(a, [id])).toEqual({ [id]: 2 });
    expect(his.reading()).toBe(2);
    hers[3]!.close();
    await vi.waitFor(() => expect(his.reading()).toBe(1), { timeout: 5_000 });
    expect(await reading(a, [id])).toEqual({ [id]: 1 });
    his.close();
  });

  it("reader-less streams count per address up to the cap, across instances; people behind one address still count", async () => {
    const id = await discussion();
    // two people behind one address (a NAT), on either instance
    const nat = [stream(a, id, t.apiKey, { from: "127.0.0.2" }), stream(b, id, t.apiKey, { from: "127.0.0.2" })];
    // one client with more streams than the cap, spread over both instances
    const busy = Array.from({ length: CAP + 2 }, (_, i) => stream(i % 2 ? a : b, id, t.apiKey, { from: "127.0.0.3" }));
    await Promise.all([...nat, ...busy].map(connected));
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 2 + CAP }), { timeout: 5_000 });
    await vi.waitFor(() => expect(nat[0]!.reading()).toBe(2 + CAP), { timeout: 5_000 });
    for (const c of busy.slice(1)) c.close();
    await vi.waitFor(() => expect(nat[0]!.reading()).toBe(3), { timeout: 5_000 });
    expect(await reading(b, [id])).toEqual({ [id]: 3 });
    nat[1]!.close();
    busy[0]!.close();
    await vi.waitFor(() => expect(nat[0]!.reading()).toBe(1), { timeout: 5_000 });
    nat[0]!.close();
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 0 }), { timeout: 5_000 });
  });

  it("guests of the hosted sign-in count by their address, as reader-less streams do: twenty from one address are not twenty", async () => {
    const id = await discussion();
    expect((await t.api.patch("/api/v1/settings", { signIn: { methods: ["guest"] } })).status).toBe(200);
    // guest sessions anyone can make, all from 127.0.0.1 (the sign-in's address), one more streaming from 127.0.0.2
    const guests = await Promise.all(Array.from({ length: CAP + 3 }, (_, i) => signInGuest(a.url, t.tenantId, `Guest ${i}`)));
    const streams = guests.map((g, i) =>
      stream(i % 2 ? a : b, id, t.apiKey, { identity: g.token, ...(i === 0 ? { from: "127.0.0.2" } : {}) }),
    );
    await Promise.all(streams.map(connected));
    // the one at 127.0.0.2, and the rest at 127.0.0.1 up to the cap
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 1 + CAP }), { timeout: 5_000 });
    // a reader of the site's own (an assertion) still counts once, beside them
    const named = stream(a, id, t.apiKey, { identity: await t.identity("named-reader") });
    await connected(named);
    await vi.waitFor(async () => expect(await reading(b, [id])).toEqual({ [id]: 2 + CAP }), { timeout: 5_000 });
  });

  it("state lost in Redis (a restart, a flush): each instance sends its streams again at its next refresh", async () => {
    const id = await discussion();
    const ada = await t.identity("ada");
    const streams = [
      stream(a, id, t.apiKey, { identity: ada }),
      stream(b, id, t.apiKey, { identity: ada }),
      ...Array.from({ length: CAP + 2 }, (_, i) => stream(i % 2 ? a : b, id, t.apiKey, { from: "127.0.0.5" })),
    ];
    await Promise.all(streams.map(connected));
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 1 + CAP }), { timeout: 5_000 });
    const redis = new Redis(inject("redisUrl"));
    try {
      const keys = await redis.keys(`${presenceKey(t.tenantId, id)}*`);
      expect(keys.length).toBe(3);
      await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
    await vi.waitFor(async () => expect(await reading(b, [id])).toEqual({ [id]: 1 + CAP }), { timeout: 5_000 });
    for (const c of streams) c.close();
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 0 }), { timeout: 5_000 });
  });

  it("STREAM_PRESENCE_PER_ADDRESS=0: every reader-less stream counts (a reader still once)", async () => {
    const open0 = await startServer({ STREAM_PRESENCE_PER_ADDRESS: "0" }, { stream: PRESENCE });
    try {
      const t0 = await createTestTenant(open0);
      const id = await discussion(t0);
      const ada = await t0.identity("ada");
      const streams = [
        ...Array.from({ length: CAP + 2 }, () => stream(open0, id, t0.apiKey)),
        stream(open0, id, t0.apiKey, { identity: ada }),
        stream(open0, id, t0.apiKey, { identity: ada }),
      ];
      await Promise.all(streams.map(connected));
      await vi.waitFor(() => expect(streams[0]!.reading()).toBe(CAP + 3), { timeout: 5_000 });
      expect(await reading(open0, [id], t0.apiKey)).toEqual({ [id]: CAP + 3 });
      for (const c of streams.slice(1)) c.close();
      await vi.waitFor(() => expect(streams[0]!.reading()).toBe(1), { timeout: 5_000 });
      streams[0]!.close();
    } finally {
      await open0.stop();
    }
  });
});

describe("counts?presence", () => {
  it("adds `reading` only when asked; the plain answer is unchanged", async () => {
    const id = await discussion();
    const plain = await fetch(`${a.url}/api/v1/discussions/counts?ids=${id}`, { headers: { "x-api-key": t.apiKey } });
    expect(await plain.json()).toEqual({ counts: { [id]: 0 } });
    expect(plain.headers.get("cache-control")).toBe("public, max-age=30");
    const withPresence = await fetch(`${a.url}/api/v1/discussions/counts?ids=${id},nope&presence=true`, {
      headers: { "x-api-key": t.apiKey },
    });
    expect(await withPresence.json()).toEqual({ counts: { [id]: 0, nope: 0 }, reading: { [id]: 0, nope: 0 } });
    expect(withPresence.headers.get("cache-control")).toBe("public, max-age=5");
    const bad = await fetch(`${a.url}/api/v1/discussions/counts?ids=${id}&presence=yes`, { headers: { "x-api-key": t.apiKey } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe("invalid_parameter");
  });

  it("GraphQL: discussionCounts(presence: true) { reading }", async () => {
    const id = await discussion();
    const s = stream(a, id);
    await connected(s);
    const q = async (presence: boolean) =>
      (
        await t.api.post("/graphql", {
          query: `query($ids: [String!]!, $p: Boolean) { discussionCounts(ids: $ids, presence: $p) { discussionId reading } }`,
          variables: { ids: [id], p: presence },
        })
      ).body.data.discussionCounts;
    await vi.waitFor(async () => expect(await q(true)).toEqual([{ discussionId: id, reading: 1 }]));
    expect(await q(false)).toEqual([{ discussionId: id, reading: null }]);
    s.close();
  });

  it("counts only the tenant's own streams", async () => {
    const other = await createTestTenant(a);
    const id = await discussion();
    await discussion(other).then(() => undefined);
    expect((await other.api.put(`/api/v1/discussions/${id}`, {})).status).toBe(201);
    const s = stream(a, id);
    await connected(s);
    await vi.waitFor(async () => expect(await reading(a, [id])).toEqual({ [id]: 1 }));
    expect(await reading(a, [id], other.apiKey)).toEqual({ [id]: 0 });
    s.close();
  });
});

describe("embedded mode (no Redis): counted in process", () => {
  let e: TestServer;
  let et: TestTenant;
  beforeAll(async () => {
    e = await startServer({ REDIS_URL: "", REDIS_CLUSTER_NODES: "" }, { stream: PRESENCE });
    et = await createTestTenant(e);
  });
  afterAll(() => e?.stop());

  it("counts, frames and drops streams without Redis", async () => {
    const id = await discussion(et);
    const s1 = stream(e, id, et.apiKey);
    const s2 = stream(e, id, et.apiKey);
    await Promise.all([connected(s1), connected(s2)]);
    await vi.waitFor(() => expect([s1.reading(), s2.reading()]).toEqual([2, 2]), { timeout: 5_000 });
    expect(await reading(e, [id], et.apiKey)).toEqual({ [id]: 2 });
    s2.close();
    await vi.waitFor(() => expect(s1.reading()).toBe(1), { timeout: 5_000 });
    expect(await reading(e, [id], et.apiKey)).toEqual({ [id]: 1 });
  });

  it("counts people: one address's streams up to the cap, a reader once", async () => {
    const id = await discussion(et);
    const CAP = DEFAULT_PRESENCE_PER_ADDRESS;
    const ada = await et.identity("ada");
    const anon = Array.from({ length: CAP + 2 }, () => stream(e, id, et.apiKey, { from: "127.0.0.2" }));
    const hers = [stream(e, id, et.apiKey, { identity: ada }), stream(e, id, et.apiKey, { identity: ada, from: "127.0.0.3" })];
    await Promise.all([...anon, ...hers].map(connected));
    await vi.waitFor(() => expect(hers[0]!.reading()).toBe(CAP + 1), { timeout: 5_000 });
    expect(await reading(e, [id], et.apiKey)).toEqual({ [id]: CAP + 1 });
    for (const c of anon) c.close();
    hers[1]!.close();
    await vi.waitFor(() => expect(hers[0]!.reading()).toBe(1), { timeout: 5_000 });
    expect(await reading(e, [id], et.apiKey)).toEqual({ [id]: 1 });
    hers[0]!.close();
  });
});

describe("STREAM_PRESENCE=0", () => {
  it("counts no readers and sends no presence frame", async () => {
    const off = await startServer({ STREAM_PRESENCE: "0" }, { stream: PRESENCE });
    try {
      const ot = await createTestTenant(off);
      const id = await discussion(ot);
      const s1 = stream(off, id, ot.apiKey);
      const s2 = stream(off, id, ot.apiKey);
      await Promise.all([connected(s1), connected(s2)]);
      await new Promise((r) => setTimeout(r, 3 * PRESENCE.presenceIntervalMs!));
      expect(await reading(off, [id], ot.apiKey)).toEqual({ [id]: 0 });
      expect(s1.presence).toEqual([]);
      s1.close();
      s2.close();
    } finally {
      await off.stop();
    }
  });
});
