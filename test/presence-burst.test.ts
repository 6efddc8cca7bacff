// Presence writes are coalesced per discussion (src/stream-engine/presence.ts): the joins and leaves
// of one turn of the event loop reach Redis in one write, so a burst — every stream of a discussion
// closing at once (a deploy, a benchmark's teardown) or their reconnect storm — costs a few script
// calls, not one per stream, and the count still comes out exact. The calls are counted with MONITOR
// on a Redis of this file's own (nothing else talks to it), every stream a person of its own
// (perAddress 0), so a write carries as many persons as streams changed.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { systemClock } from "../src/lib/clock.js";
import { Presence, presenceKey, type PresenceMember } from "../src/stream-engine/presence.js";
import { PRESENCE_CHANNEL } from "../src/stream-engine/presence-notices.js";
import { createTestTenant } from "./support/fixtures.js";
import { startOwnRedis, type OwnRedis } from "./support/own-services.js";
import { startServer, type TestServer } from "./support/server.js";
import { rawSse } from "./support/sse.js";

let own: OwnRedis;
let redis: Redis;
let monitored: Redis;
let monitor: Awaited<ReturnType<Redis["monitor"]>>;
/** the sync script's calls seen on each discussion's key, and the persons they carried */
const syncs = new Map<string, { calls: number; persons: number }>();
/** the messages published on the presence channel */
const notices: string[] = [];
/** the last ECHO the monitor saw */
let echoed = "";

beforeAll(async () => {
  own = await startOwnRedis();
  redis = new Redis(own.url);
  monitored = new Redis(own.url);
  monitor = await monitored.monitor();
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    // EVALSHA <sha> 3 <slots> <leases> <counts> <now> <end> <instance> <leased> <ttl> (<tag> <cap> <streams>)+
    // (a refresh has the same keys and 5 arguments; commands a script runs come from "lua")
    const [command, , numkeys, slots] = args;
    if (/^echo$/i.test(command ?? "")) echoed = args[1]!;
    if (/^publish$/i.test(command ?? "") && args[1] === PRESENCE_CHANNEL) notices.push(args[2]!);
    if (source === "lua" || !/^eval(sha)?$/i.test(command ?? "") || numkeys !== "3" || args.length < 14) return;
    const s = syncs.get(slots!) ?? { calls: 0, persons: 0 };
    syncs.set(slots!, { calls: s.calls + 1, persons: s.persons + (args.length - 11) / 3 });
  });
});
afterAll(async () => {
  monitor?.disconnect();
  monitored?.disconnect();
  redis?.disconnect();
  await own?.stop();
});

/** The sync calls seen on the key so far (MONITOR's feed is read up to an ECHO sent now). */
async function seen(key: string): Promise<{ calls: number; persons: number }> {
  const marker = randomBytes(6).toString("hex");
  await redis.echo(marker);
  await vi.waitFor(() => expect(echoed).toBe(marker));
  return { ...(syncs.get(key) ?? { calls: 0, persons: 0 }) };
}

/** A stream that records the counts it is told. */
/** A Presence on the test's own Redis through `client`, with no refresh during the test (the calls counted are the joins' and leaves'). */
const presenceOn = (client: Redis, extra: { presenceIntervalMs?: number; onPipelines?: (n: number) => void } = {}) =>
  new Presence({
    clock: systemClock,
    log: pino({ level: "silent" }),
    redis: client,
    redisTarget: { url: own.url },
    options: {
      presenceRefreshMs: 3_600_000,
      presenceTtlMs: 7_200_000,
      ...(extra.presenceIntervalMs !== undefined ? { presenceIntervalMs: extra.presenceIntervalMs } : {}),
    },
    people: { secret: randomBytes(32), perAddress: 0 },
    ...(extra.onPipelines ? { onPipelines: extra.onPipelines } : {}),
  });

const member = () => {
  const told: number[] = [];
  return Object.assign({ presence: (n: number) => void told.push(n) } satisfies PresenceMember, { told });
};

describe("presence in one process (Presence on a Redis of its own)", () => {
  let presence: Presence;
  let client: Redis;
  beforeAll(() => {
    client = new Redis(own.url);
    presence = presenceOn(client, { presenceIntervalMs: 20 });
  });
  afterAll(async () => {
    await presence?.close();
    client?.disconnect();
  });

  it("1,200 streams joining in one turn are a few sync calls; all leaving in one turn too; the count is exact each time", async () => {
    const N = 1_200;
    const key = presenceKey("t-burst", "d-1");
    const members = Array.from({ length: N }, member);
    const leaves = members.map((m) => presence.join("t-burst", "d-1", m, { readerId: null, address: "10.0.0.1" }));
    await vi.waitFor(async () => expect(await presence.count("t-burst", ["d-1"])).toEqual([N]), { timeout: 10_000, interval: 20 });
    // every stream is told the whole count: the count was taken after the write was answered
    await vi.waitFor(() => expect(members.every((m) => m.told.at(-1) === N)).toBe(true), { timeout: 10_000 });
    expect(members[0]!.told).toEqual([N]);
    const joined = await seen(key);
    expect(joined.persons).toBe(N);
    // one call per 100 persons (the store's script batch), written in 500-person syncs; one per stream before
    expect(joined.calls).toBeLessThanOrEqual(Math.ceil(N / 100));

    for (const leave of leaves) leave();
    await vi.waitFor(async () => expect(await presence.count("t-burst", ["d-1"])).toEqual([0]), { timeout: 10_000, interval: 20 });
    const left = await seen(key);
    expect(left.persons - joined.persons).toBe(N);
    expect(left.calls - joined.calls).toBeLessThanOrEqual(Math.ceil(N / 100));
    // the last stream gone: the lease was given back, nothing of the discussion's counts is left
    await vi.waitFor(async () => expect(await redis.zcard(`${key}:l`)).toBe(0));
    expect(await redis.hlen(`${key}:c`)).toBe(0);
    expect(await redis.zcard(key)).toBe(0);
    expect(presence.local).toBe(0);
  });

  it("streams that join and leave within one turn end counted right (a reader's and an address's, beside others that stay)", async () => {
    const key = presenceKey("t-burst", "d-2");
    const reader = { readerId: "ada", address: "10.0.0.2" };
    const stay = [member(), member(), member()];
    const stays = stay.map((m) => presence.join("t-burst", "d-2", m, { readerId: null, address: "10.0.0.3" }));
    // ada: two streams, one closes at once; three more address streams come and go in the same turn
    presence.join("t-burst", "d-2", member(), reader);
    presence.join("t-burst", "d-2", member(), reader)();
    for (let i = 0; i < 3; i++) presence.join("t-burst", "d-2", member(), { readerId: null, address: "10.0.0.4" })();
    await vi.waitFor(async () => expect(await presence.count("t-burst", ["d-2"])).toEqual([4]), { timeout: 10_000, interval: 20 });
    await vi.waitFor(() => expect(stay.map((m) => m.told.at(-1))).toEqual([4, 4, 4]), { timeout: 10_000 });
    expect((await seen(key)).calls).toBe(1);
    // the three leave in one turn, as another stream of ada's comes and goes
    for (const leave of stays) leave();
    presence.join("t-burst", "d-2", member(), reader)();
    await vi.waitFor(async () => expect(await presence.count("t-burst", ["d-2"])).toEqual([1]), { timeout: 10_000, interval: 20 });
    expect((await seen(key)).calls).toBe(2);
  });
});

describe("presence on many discussions at once (one stream on each)", () => {
  it("1,000 streams, each on its own discussion, joining in one turn then leaving in one turn: a few pipelines each (1,000 before), every count 0 and every lease gone", async () => {
    const N = 1_000;
    const client = new Redis(own.url);
    let pipelines = 0;
    const p = presenceOn(client, { presenceIntervalMs: 20, onPipelines: (n) => void (pipelines += n) });
    try {
      const ids = Array.from({ length: N }, (_, i) => `m-${i}`);
      const keys = ids.map((d) => presenceKey("t-many", d));
      const leaves = ids.map((d) => p.join("t-many", d, { presence: () => undefined }, { readerId: null, address: "10.0.0.6" }));
      await vi.waitFor(async () => expect(await p.count("t-many", ids)).toEqual(ids.map(() => 1)), { timeout: 20_000, interval: 50 });
      const joined = pipelines;
      // 1,000 writes of one person each: two waves of 500 script calls, one pipeline each on one Redis
      expect(joined).toBeGreaterThan(0);
      expect(joined).toBeLessThanOrEqual(Math.ceil(N / 500) + 2);

      for (const leave of leaves) leave();
      await vi.waitFor(async () => expect(await p.count("t-many", ids)).toEqual(ids.map(() => 0)), { timeout: 20_000, interval: 50 });
      // the last stream of each discussion gone: its lease was given back, nothing of its counts is left
      const left = async () => {
        const pipe = redis.pipeline();
        for (const key of keys) pipe.zcard(`${key}:l`).hlen(`${key}:c`).zcard(key);
        return ((await pipe.exec()) ?? []).reduce((sum, [, n]) => sum + Number(n), 0);
      };
      await vi.waitFor(async () => expect(await left()).toBe(0), { timeout: 20_000, interval: 50 });
      expect(pipelines - joined).toBeGreaterThan(0);
      expect(pipelines - joined).toBeLessThanOrEqual(Math.ceil(N / 500) + 2);
      // MONITOR: each discussion had its one join and its one leave written, one sync call each
      await seen(keys[0]!);
      expect(keys.map((k) => syncs.get(k))).toEqual(keys.map(() => ({ calls: 2, persons: 2 })));
      expect(p.local).toBe(0);
    } finally {
      await p.close();
      client.disconnect();
    }
  });
});

describe("notices to the other instances", () => {
  it("50 discussions changed in one turn are told in one PUBLISH (one each before), joining and leaving; a notice of one key is still understood", async () => {
    const N = 50;
    const clients = [new Redis(own.url), new Redis(own.url)];
    const [a, b] = clients.map((client) => presenceOn(client, { presenceIntervalMs: 20 })) as [Presence, Presence];
    const client0 = { readerId: null, address: "10.0.0.7" };
    try {
      const ids = Array.from({ length: N }, (_, i) => `n-${i}`);
      // b: a stream on each, told what the others count
      const watchers = ids.map(() => member());
      ids.forEach((d, i) => b.join("t-notice", d, watchers[i]!, client0));
      await vi.waitFor(async () => expect(await b.count("t-notice", ids)).toEqual(ids.map(() => 1)), { timeout: 10_000 });
      await new Promise((r) => setTimeout(r, 100)); // (b's own notices published)
      await seen(presenceKey("t-notice", ids[0]!));
      const before = notices.length;

      // a: a stream on each, in one turn
      const leaves = ids.map((d) => a.join("t-notice", d, member(), client0));
      await vi.waitFor(() => expect(watchers.map((w) => w.told.at(-1))).toEqual(ids.map(() => 2)), { timeout: 10_000 });
      await seen(presenceKey("t-notice", ids[0]!));
      const joined = notices.slice(before);
      expect(joined.length).toBeGreaterThan(0);
      expect(joined.length).toBeLessThanOrEqual(2);
      // (MONITOR shows a newline escaped, as \n)
      expect(joined.flatMap((m) => m.split(/\\n|\n/)).sort()).toEqual(ids.map((d) => presenceKey("t-notice", d)).sort());

      // a's last stream of each leaves, in one turn
      for (const leave of leaves) leave();
      await vi.waitFor(() => expect(watchers.map((w) => w.told.at(-1))).toEqual(ids.map(() => 1)), { timeout: 10_000 });
      await seen(presenceKey("t-notice", ids[0]!));
      const left = notices.slice(before + joined.length);
      expect(left.length).toBeGreaterThan(0);
      expect(left.length).toBeLessThanOrEqual(2);

      // the single notice of the version before (one PUBLISH of one discussion's key) still makes b count again:
      // another instance's stream, written by hand, then announced the old way
      const key = presenceKey("t-notice", ids[0]!);
      await redis.zadd(`${key}:l`, Date.now() + 3_600_000, "4242");
      await redis.zadd(key, 4242, "s:elsewhere#0");
      await redis.publish(PRESENCE_CHANNEL, key);
      await vi.waitFor(() => expect(watchers[0]!.told.at(-1)).toBe(2), { timeout: 10_000 });
      expect(watchers[1]!.told.at(-1)).toBe(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
      for (const c of clients) c.disconnect();
    }
  });
});

describe("closing presence (the instance stops)", () => {
  it("writes the changes still queued before it gives its leases back: nothing of a dropped discussion stays", async () => {
    const client = new Redis(own.url);
    const p = presenceOn(client);
    try {
      const client0 = { readerId: null, address: "10.0.0.5" };
      const gone = Array.from({ length: 5 }, () => p.join("t-close", "gone", { presence: () => undefined }, client0));
      p.join("t-close", "kept", { presence: () => undefined }, client0);
      await vi.waitFor(async () => expect(await p.count("t-close", ["gone", "kept"])).toEqual([5, 1]), { timeout: 10_000 });
      // the last leaves of one discussion, still queued when the instance stops
      for (const leave of gone) leave();
      await p.close();
      for (const d of ["gone", "kept"]) {
        const key = presenceKey("t-close", d);
        expect([await redis.zcard(`${key}:l`), await redis.hlen(`${key}:c`), await redis.zcard(key)]).toEqual([0, 0, 0]);
      }
    } finally {
      await p.close();
      client.disconnect();
    }
  });
});

describe("SSE streams of one server (on a Redis of its own)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(
      { REDIS_URL: own.url, REDIS_CLUSTER_NODES: "", STREAM_PRESENCE_PER_ADDRESS: "0" },
      { stream: { presenceRefreshMs: 3_600_000, presenceTtlMs: 7_200_000, presenceIntervalMs: 50 } },
    );
  });
  afterAll(() => server?.stop());

  it("300 streams closing at once are a few sync calls (one each before), and the count comes out 0", async () => {
    const N = 300;
    const t = await createTestTenant(server);
    expect((await t.api.put("/api/v1/discussions/burst", {})).status).toBe(201);
    const key = presenceKey(t.tenantId, "burst");
    const reading = async () => {
      const r = await fetch(`${server.url}/api/v1/discussions/counts?ids=burst&presence=true`, { headers: { "x-api-key": t.apiKey } });
      return ((await r.json()) as { reading: Record<string, number> }).reading.burst;
    };
    const streams = await Promise.all(
      Array.from({ length: N }, () => rawSse(`${server.url}/api/v1/stream/burst`, { "x-api-key": t.apiKey })),
    );
    await Promise.all(streams.map((s) => s.waitForText((x) => x.includes("event: connected"))));
    await vi.waitFor(async () => expect(await reading()).toBe(N), { timeout: 10_000, interval: 20 });
    const joined = await seen(key);
    expect(joined.persons).toBe(N);
    // (the openings come one or a few a turn, as their requests arrive: coalesced only as far as they meet)
    expect(joined.calls).toBeLessThanOrEqual(N);

    await Promise.all(streams.map((s) => s.close()));
    await vi.waitFor(async () => expect(await reading()).toBe(0), { timeout: 10_000, interval: 20 });
    await vi.waitFor(async () => expect(await redis.zcard(`${key}:l`)).toBe(0));
    const left = await seen(key);
    expect(left.persons - joined.persons).toBe(N);
    expect(left.calls - joined.calls).toBeLessThanOrEqual(N / 10);
    console.log(`presence-burst: ${N} SSE streams: ${joined.calls} sync calls to join, ${left.calls - joined.calls} to leave`);
  });
});
