// Across instances: two servers on the same PostgreSQL and Redis. A write on one reaches streams on
// the other; tickets redeem once across them; the per-tenant cap counts both; and a stream keeps
// every event, once and in order, while its instance's Redis subscriber connection is killed.
// Also one stream on the in-process bus (REDIS_URL unset).
import { Redis } from "ioredis";
import { inject } from "vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RedisEventBus } from "../src/events/bus.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";
import { openSse, patchSettings, rawSse, seqsOf, writeEvent } from "./support/sse.js";

let a: TestServer;
let b: TestServer;
let admin: Redis;
let n = 0;

beforeAll(async () => {
  // B recovers only through gap detection and bus reconnects here, not the periodic head check
  [a, b] = await Promise.all([startServer(), startServer({}, { stream: { headCheckMs: 600_000 } } as any)]);
  admin = new Redis(inject("redisUrl"));
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  admin?.disconnect();
});

const url = (s: TestServer, id: string, q = "") => `${s.url}/api/v1/stream/${id}${q}`;

async function setup() {
  const t = await createTestTenant(a);
  const id = `c-${++n}`;
  await t.api.put(`/api/v1/discussions/${id}`, {});
  return { t, id };
}

async function killClient(name: string): Promise<void> {
  const list = (await admin.client("LIST")) as string;
  const line = list.split("\n").find((l) => l.split(" ").includes(`name=${name}`));
  const id = line?.match(/(?:^|\s)id=(\d+)/)?.[1];
  if (id) await admin.client("KILL", "ID", id);
}

describe("two instances", () => {
  it("a write through one instance reaches a stream on the other", async () => {
    const { t, id } = await setup();
    const onB = openSse(url(b, id), { "x-api-key": t.apiKey });
    const onA = openSse(url(a, id), { "x-api-key": t.apiKey });
    await Promise.all([onA, onB].map((c) => c.waitFor((f) => f.length === 1)));
    const lock = await t.api.post(`/api/v1/discussions/${id}/lock`); // t.api talks to A
    expect(lock.status).toBe(200);
    await writeEvent(b, t.tenantId, id); // and a write on B
    for (const c of [onA, onB]) {
      await c.waitForEvents(2);
      expect(c.events().map((f) => [f.id, f.event])).toEqual([
        ["1", "discussion_locked"],
        ["2", "discussion_locked"],
      ]);
      c.close();
    }
  });

  it("a ticket minted on one instance is redeemed exactly once across both", async () => {
    const { t, id } = await setup();
    const { ticket } = (await t.api.post("/api/v1/stream/ticket", { discussionId: id })).body;
    const tries = await Promise.all([a, b, a, b].map((s) => rawSse(url(s, id, `?ticket=${ticket}`))));
    expect(tries.map((x) => x.status).sort()).toEqual([200, 401, 401, 401]);
    await Promise.all(tries.map((x) => x.close()));
  });

  it("counts a tenant's streams on every instance against rateLimits.streamConnections", async () => {
    const { t, id } = await setup();
    await patchSettings(a, t.tenantId, { rateLimits: { streamConnections: 2 } });
    const s1 = await rawSse(url(a, id), { "x-api-key": t.apiKey });
    const s2 = await rawSse(url(b, id), { "x-api-key": t.apiKey });
    expect([s1.status, s2.status]).toEqual([200, 200]);
    expect((await fetch(url(a, id), { headers: { "x-api-key": t.apiKey } })).status).toBe(429);
    expect((await fetch(url(b, id), { headers: { "x-api-key": t.apiKey } })).status).toBe(429);
    await Promise.all([s1.close(), s2.close()]);
  });

  it("keeps every event once and in order while the subscriber connection is killed during writes", async () => {
    const { t, id } = await setup();
    const client = openSse(url(b, id), { "x-api-key": t.apiKey });
    await client.waitFor((f) => f.length === 1);
    const subscriber = (b.app.runtime.bus as RedisEventBus).connectionNames.subscriber;
    const reads = b.app.streams.stats().logReads;
    const total = 150;
    // the subscriber is killed every 25 writes (driven by the writes, not by the wall clock, so a
    // fast writer cannot outrun the kills), and the writes go on while it reconnects
    let kills = 0;
    for (let written = 0; written < total; written++) {
      if (written > 0 && written % 25 === 0) {
        await killClient(subscriber);
        kills++;
      }
      await writeEvent(a, t.tenantId, id);
    }
    await client.waitForEvents(total, 20_000);
    expect(kills).toBe(5);
    expect(b.app.streams.stats().logReads).toBeGreaterThan(reads); // recovered from the log
    expect(seqsOf(client.events())).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(client.opens).toBe(1); // the SSE connection itself never dropped
    client.close();
  }, 60_000);
});

describe("in-process bus (REDIS_URL unset)", () => {
  it("streams a write on the same instance", async () => {
    const solo = await startServer({ REDIS_URL: "" });
    try {
      expect(solo.app.runtime.redis).toBeUndefined();
      const t = await createTestTenant(solo);
      await t.api.put("/api/v1/discussions/solo", {});
      const es = openSse(url(solo, "solo"), { "x-api-key": t.apiKey });
      await es.waitFor((f) => f.length === 1);
      await t.api.post("/api/v1/discussions/solo/lock");
      await writeEvent(solo, t.tenantId, "solo", { count: 2 });
      await es.waitForEvents(3);
      expect(seqsOf(es.events())).toEqual([1, 2, 3]);
      es.close();
    } finally {
      await solo.stop();
    }
  });
});
