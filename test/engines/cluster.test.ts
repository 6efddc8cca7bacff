// The service on a Redis Cluster (contract section 17, REDIS_CLUSTER_NODES): fan-out on sharded
// pub/sub across instances, the keys a script touches together in one slot, and a lost master —
// writes and reads answer without a 5xx while it is down (section 9: as with Redis down), open
// streams get every event exactly once, in order, from the log, and go live again when it returns.
// The first two run on the project's cluster (test/support/cluster-setup.ts); the third kills a
// master of a cluster of its own (test/support/redis-cluster.ts).
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RedisEventBus } from "../../src/events/bus.js";
import { keySlot } from "../../src/lib/cluster-slot.js";
import { client } from "../support/client.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { startRedisCluster, type RedisCluster } from "../support/redis-cluster.js";
import { startServer, type TestServer } from "../support/server.js";
import { openSse, seqsOf, type SseClient } from "../support/sse.js";

const nodesOf = (list: string) => list.split(",").map((n) => ({ host: n.split(":")[0]!, port: Number(n.split(":")[1]) }));

/** A client of the cluster for the test's own looks (slot table, PUBSUB, SCAN on each master). */
async function clusterClient(nodes: string): Promise<Cluster> {
  const c = new Cluster(nodesOf(nodes), { redisOptions: { connectionName: "cluster-test" } });
  await new Promise<void>((resolve, reject) => c.once("ready", resolve).once("error", reject));
  return c;
}

/** The master (`host:port`) serving a key's or channel's slot. */
const ownerOf = (c: Cluster, key: string) => c.slots[keySlot(key)]![0]!;
const masterNode = (c: Cluster, key: string) => c.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === key)!;
const channelOf = (s: TestServer, tenantId: string, discussionId: string) =>
  (s.app.runtime.bus as RedisEventBus).channelFor(tenantId, discussionId);

const streamOf = (s: TestServer, t: TestTenant, id: string, lastEventId?: number) =>
  openSse(`${s.url}/api/v1/stream/${id}`, {
    "x-api-key": t.apiKey,
    ...(lastEventId !== undefined ? { "last-event-id": String(lastEventId) } : {}),
  });

/** Every domain event exactly once, in seq order, from `from` to `to`. */
function expectExactly(stream: SseClient, from: number, to: number) {
  expect(seqsOf(stream.events())).toEqual(Array.from({ length: to - from + 1 }, (_, i) => from + i));
}

describe("on a Redis Cluster", () => {
  let a: TestServer;
  let b: TestServer;
  let t: TestTenant;
  let admin: Cluster;

  beforeAll(async () => {
    [a, b] = await Promise.all([startServer(), startServer()]);
    t = await createTestTenant(a);
    admin = await clusterClient(inject("redisClusterNodes")!);
  });
  afterAll(async () => {
    admin?.disconnect();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it("fans out on sharded pub/sub: streams on one instance, writes on the other, every event exactly once, in order", async () => {
    const ids = Array.from({ length: 9 }, (_, i) => `fan-${i}`);
    await Promise.all(ids.map((id) => t.api.put(`/api/v1/discussions/${id}`, {})));
    // the discussions' channels are spread over the shards
    const channels = ids.map((id) => channelOf(a, t.tenantId, id));
    expect(new Set(channels.map((ch) => ownerOf(admin, ch))).size).toBeGreaterThan(1);
    const streams = ids.map((id) => streamOf(a, t, id));
    await Promise.all(streams.map((s) => s.waitFor((f) => f.some((x) => x.event === "connected"))));
    // each channel is a sharded subscription on its own shard (SSUBSCRIBE), not a cluster-wide one
    for (const ch of channels) {
      const node = masterNode(admin, ownerOf(admin, ch));
      expect(await node.call("PUBSUB", "SHARDNUMSUB", ch)).toEqual([ch, 1]);
      expect(await node.call("PUBSUB", "NUMSUB", ch)).toEqual([ch, 0]);
    }
    // every write on the other instance, several discussions at once
    const writer = client(b.url, { key: t.apiKey, identity: await t.identity("fan-writer") });
    const perDiscussion = 8;
    await Promise.all(
      ids.map(async (id) => {
        for (let i = 0; i < perDiscussion; i++) {
          const r = await writer.post(`/api/v1/discussions/${id}/comments`, { body: `${id} #${i}` });
          expect(r.status).toBe(201);
        }
      }),
    );
    for (const [i, s] of streams.entries()) {
      await s.waitForEvents(perDiscussion);
      const head = Number(s.frames[0]!.id);
      expectExactly(s, head + 1, head + perDiscussion);
      expect(s.events().map((e) => e.data.data.comment.body)).toEqual(Array.from({ length: perDiscussion }, (_, n) => `${ids[i]} #${n}`));
      s.close();
    }
  });

  it("keeps the keys a script touches together in one slot, as Redis computes it (stream caps: the tenant is the hash tag)", async () => {
    const tag = `{${encodeURIComponent(t.tenantId)}}`;
    const streams = [streamOf(a, t, "fan-0"), streamOf(b, t, "fan-1")];
    await Promise.all(streams.map((s) => s.waitFor((f) => f.some((x) => x.event === "connected"))));
    const keys = (await Promise.all(admin.nodes("master").map((n) => n.keys(`eng:sc:${tag}:*`)))).flat();
    // the tenant's set of instances and each instance's counter, which the acquire script reads together
    expect(keys.filter((k) => k.endsWith(":i"))).toHaveLength(1);
    expect(keys.filter((k) => k.includes(":n:")).length).toBeGreaterThanOrEqual(2);
    const slots = new Set(await Promise.all(keys.map((k) => admin.cluster("KEYSLOT", k))));
    expect([...slots]).toEqual([keySlot(keys[0]!)]);
    expect(await admin.scard(`eng:sc:${tag}:i`)).toBe(2);
    // rate-limiter-flexible keeps the request budgets in the cluster (one key per bucket)
    const budgets = (await Promise.all(admin.nodes("master").map((n) => n.keys(`eng:rl:*${t.tenantId}*`)))).flat();
    expect(budgets.length).toBeGreaterThan(0);
    for (const s of streams) s.close();
  });
});

describe("a master lost and back (a cluster of the test's own)", () => {
  let cluster: RedisCluster;
  let a: TestServer;
  let b: TestServer;
  let t: TestTenant;
  let admin: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    const env = { REDIS_CLUSTER_NODES: cluster.nodes.join(",") };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
    t = await createTestTenant(a);
    admin = await clusterClient(cluster.nodes.join(","));
  }, 60_000);
  afterAll(async () => {
    admin?.disconnect();
    await Promise.all([a?.stop(), b?.stop()]);
    await cluster?.stop();
  });

  it("writes and reads answer without a 5xx while it is down; open streams get every event exactly once, in order, and go live when it is back", async () => {
    const victim = cluster.nodes[0]!;
    // a discussion whose channel lives on the master that goes, and one whose channel does not
    const candidates = Array.from({ length: 60 }, (_, i) => `shard-${i}`);
    const down = candidates.find((id) => ownerOf(admin, channelOf(a, t.tenantId, id)) === victim)!;
    const up = candidates.find((id) => ownerOf(admin, channelOf(a, t.tenantId, id)) !== victim)!;
    const writer = client(b.url, { key: t.apiKey, identity: await t.identity("shard-writer") });
    const reader = (s: TestServer) => client(s.url, { key: t.apiKey });
    const answers: { what: string; status: number; ms: number }[] = [];
    const timed = async (what: string, call: () => Promise<{ status: number }>) => {
      const started = Date.now();
      const { status } = await call();
      answers.push({ what, status, ms: Date.now() - started });
      return status;
    };
    let n = 0;
    const write = (id: string) => timed(`write ${id}`, () => writer.post(`/api/v1/discussions/${id}/comments`, { body: `${id} #${++n}` }));
    const readAll = (s: TestServer) =>
      Promise.all([
        timed("read comments", () => reader(s).get(`/api/v1/discussions/${down}/comments`)),
        timed("read discussion", () => reader(s).get(`/api/v1/discussions/${up}`)),
      ]);

    expect([await write(down), await write(up)]).toEqual([201, 201]);
    const sDown = streamOf(a, t, down, 0);
    const sUp = streamOf(a, t, up, 0);
    await Promise.all([sDown.waitForEvents(1), sUp.waitForEvents(1)]);

    await cluster.kill(0);
    for (let round = 0; round < 4; round++) {
      await Promise.all([write(down), write(up), readAll(a), readAll(b)]);
    }
    // degraded as with Redis down (section 9): every answer a success, none slow
    expect(answers.filter((x) => x.status >= 300)).toEqual([]);
    expect(Math.max(...answers.map((x) => x.ms))).toBeLessThan(4_000);
    await expect.poll(async () => (await fetch(`${a.url}/readyz`)).status, { timeout: 10_000 }).toBe(503);
    // the streams that were open get what was written meanwhile, from the log (the head check)
    await sUp.waitForEvents(5, 15_000);
    await sDown.waitForEvents(5, 15_000);
    // a new stream needs its channel's shard: on a lost one it is refused with 503 (never a 500),
    // on another it opens
    const refused = await fetch(`${b.url}/api/v1/stream/${down}`, { headers: { "x-api-key": t.apiKey } });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { code: string }).code).toBe("unavailable");
    const other = streamOf(b, t, up, 0);
    await other.waitForEvents(5);
    other.close();

    await cluster.restart(0);
    await expect.poll(async () => (await fetch(`${a.url}/readyz`)).status, { timeout: 15_000 }).toBe(200);
    for (let i = 0; i < 3; i++) {
      expect(await write(down)).toBe(201);
      expect(await write(up)).toBe(201);
    }
    await Promise.all([sDown.waitForEvents(8), sUp.waitForEvents(8)]);
    expectExactly(sDown, 1, 8);
    expectExactly(sUp, 1, 8);
    // live again on the shard that came back: a write reaches the open stream at once, not at the
    // next head check
    const before = Date.now();
    expect(await write(down)).toBe(201);
    await sDown.waitForEvents(9);
    expect(Date.now() - before).toBeLessThan(2_000);
    expectExactly(sDown, 1, 9);
    // and a stream resuming on the other instance replays exactly from the log
    const resumed = streamOf(b, t, down, 3);
    await resumed.waitForEvents(6);
    expectExactly(resumed, 4, 9);
    for (const s of [sDown, sUp, resumed]) s.close();
  }, 90_000);
});

describe("the reader's own stream on a Redis Cluster", () => {
  let a: TestServer;
  let b: TestServer;
  let t: TestTenant;

  beforeAll(async () => {
    [a, b] = await Promise.all([startServer(), startServer()]);
    t = await createTestTenant(a);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it("a reply posted on instance A reaches the parent author's me-stream on instance B; a mark-read on A reaches it too", async () => {
    expect((await t.api.put("/api/v1/discussions/me-x", {})).status).toBe(201);
    const annOnA = client(a.url, { key: t.apiKey, identity: await t.identity("ann-x") });
    const bobOnA = client(a.url, { key: t.apiKey, identity: await t.identity("bob-x") });
    const top = (await annOnA.post("/api/v1/discussions/me-x/comments", { body: "top" })).body;
    const me = openSse(`${b.url}/api/v1/stream/me`, { "x-api-key": t.apiKey, "x-service-identity": await t.identity("ann-x") });
    try {
      await me.waitFor((f) => f.some((x) => x.event === "connected"));
      const replies = [];
      for (let i = 0; i < 3; i++)
        replies.push((await bobOnA.post("/api/v1/discussions/me-x/comments", { body: `re ${i}`, parentId: top.id })).body);
      await me.waitFor((f) => f.filter((x) => x.event === "inbox_item").length === 3);
      const items = me.frames.filter((x) => x.event === "inbox_item");
      expect(items.map((f) => [f.id, f.data.comment.id])).toEqual(replies.map((r, i) => [String(i + 1), r.id]));
      expect((await annOnA.post("/api/v1/me/inbox/read", { all: true })).body).toEqual({ unreadCount: 0 });
      await me.waitFor((f) => f.some((x) => x.event === "inbox_read"));
      expect(me.frames.find((x) => x.event === "inbox_read")!.data).toEqual({ unreadCount: 0 });
    } finally {
      me.close();
    }
  });
});
