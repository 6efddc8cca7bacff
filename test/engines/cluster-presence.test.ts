// Presence on a Redis Cluster (src/stream-engine/presence.ts, docs/streams.md "Presence"): a
// discussion's keys share its hash tag, so several discussions land on several masters; each
// discussion's writes are a pipeline of their own (presence-store.ts `sync`), the notices a sharded
// channel. Three instances on the project's cluster (test/support/cluster-setup.ts): servers a and
// b, and a Presence in this process (on the service's command connection to the cluster), whose
// joins and leaves on every discussion happen in one turn of the event loop. The counts are read on
// b; a's streams are told them; the leases of an instance are gone once it has closed.
import { randomBytes } from "node:crypto";
import { Cluster } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { systemClock } from "../../src/lib/clock.js";
import { keySlot } from "../../src/lib/cluster-slot.js";
import { closeConnection, createCommandConnection, type RedisClient } from "../../src/lib/redis-connection.js";
import type { HubOptions } from "../../src/stream-engine/hub.js";
import { Presence, presenceKey } from "../../src/stream-engine/presence.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { startServer, type TestServer } from "../support/server.js";
import { openSse, type SseClient } from "../support/sse.js";

const PRESENCE: Partial<HubOptions> = { presenceTtlMs: 5_000, presenceRefreshMs: 1_000, presenceIntervalMs: 100 };
const WAIT = { timeout: 15_000, interval: 50 };

describe("presence on a Redis Cluster", () => {
  const nodes = inject("redisClusterNodes")!.split(",");
  let a: TestServer;
  let b: TestServer;
  let t: TestTenant;
  let admin: Cluster;
  let redis: RedisClient;
  let p: Presence;
  const streams: SseClient[] = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([startServer({}, { stream: PRESENCE }), startServer({}, { stream: PRESENCE })]);
    t = await createTestTenant(a);
    admin = new Cluster(nodes.map((n) => ({ host: n.split(":")[0]!, port: Number(n.split(":")[1]) })));
    await new Promise<void>((resolve, reject) => admin.once("ready", resolve).once("error", reject));
    redis = createCommandConnection({ clusterNodes: nodes }, { name: "cluster-presence-test" });
    await vi.waitFor(() => expect(redis.status).toBe("ready"), WAIT);
    p = new Presence({
      clock: systemClock,
      log: pino({ level: "silent" }),
      redis,
      redisTarget: { clusterNodes: nodes },
      options: PRESENCE,
      // every stream of this instance a person of its own
      people: { secret: randomBytes(32), perAddress: 0 },
    });
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await p?.close();
    if (redis) await closeConnection(redis);
    admin?.disconnect();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const reading = async (server: TestServer, ids: string[]) => {
    const r = await fetch(`${server.url}/api/v1/discussions/counts?ids=${ids.join(",")}&presence=true`, {
      headers: { "x-api-key": t.apiKey },
    });
    expect(r.status).toBe(200);
    return ((await r.json()) as { reading: Record<string, number> }).reading;
  };
  const each = (ids: string[], n: (id: string) => number) => Object.fromEntries(ids.map((id) => [id, n(id)]));
  /** Each discussion's lease holders (instances). */
  const leases = (ids: string[]) => Promise.all(ids.map((id) => admin.zcard(`${presenceKey(t.tenantId, id)}:l`)));

  it("streams on discussions of several masters: joins and leaves of one turn counted right on another instance; leases gone after close", async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `pr-${i}`);
    await Promise.all(ids.map(async (id) => expect((await t.api.put(`/api/v1/discussions/${id}`, {})).status).toBe(201)));
    // the discussions' keys are on more than one master
    const masters = new Set(ids.map((id) => admin.slots[keySlot(presenceKey(t.tenantId, id))]![0]));
    expect(masters.size).toBeGreaterThan(1);

    // a: one stream on each discussion, told the count
    const told = new Map<string, number[]>();
    for (const id of ids) {
      const s = openSse(`${a.url}/api/v1/stream/${id}`, { "x-api-key": t.apiKey });
      const got: number[] = [];
      s.es.addEventListener(
        "presence",
        (e) => void got.push((JSON.parse((e as MessageEvent<string>).data) as { reading: number }).reading),
      );
      told.set(id, got);
      streams.push(s);
    }
    await Promise.all(streams.map((s) => s.waitFor((f) => f.some((x) => x.event === "connected"))));
    await vi.waitFor(async () => expect(await reading(b, ids)).toEqual(each(ids, () => 1)), WAIT);
    const last = () => each(ids, (id) => told.get(id)!.at(-1) ?? 1);

    // this process: two streams on each discussion, all joining in one turn
    const leaves = ids.map((id) =>
      [0, 1].map(() => p.join(t.tenantId, id, { presence: () => undefined }, { readerId: null, address: null })),
    );
    await vi.waitFor(async () => expect(await reading(b, ids)).toEqual(each(ids, () => 3)), WAIT);
    await vi.waitFor(() => expect(last()).toEqual(each(ids, () => 3)), WAIT);
    expect(await leases(ids)).toEqual(ids.map(() => 2));

    // in one turn: one of its streams on each discussion leaves, and the other one too on the first
    for (const [i, [first, second]] of leaves.entries()) {
      first!();
      if (i === 0) second!();
    }
    const after = (id: string) => (id === ids[0] ? 1 : 2);
    await vi.waitFor(async () => expect(await reading(b, ids)).toEqual(each(ids, after)), WAIT);
    await vi.waitFor(() => expect(last()).toEqual(each(ids, after)), WAIT);
    // its last stream of the first discussion gone: its lease there given back
    expect(await leases(ids)).toEqual(ids.map((id) => (id === ids[0] ? 1 : 2)));

    // this instance closes: its streams stop counting, its leases are gone
    await p.close();
    await vi.waitFor(async () => expect(await reading(b, ids)).toEqual(each(ids, () => 1)), WAIT);
    expect(await leases(ids)).toEqual(ids.map(() => 1));
    // a's streams close: nothing counts, no lease is left
    for (const s of streams.splice(0)) s.close();
    await vi.waitFor(async () => expect(await reading(b, ids)).toEqual(each(ids, () => 0)), WAIT);
    await vi.waitFor(async () => expect(await leases(ids)).toEqual(ids.map(() => 0)), WAIT);
  });
});
