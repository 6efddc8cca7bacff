// The per-tenant stream cap across instances (src/stream-engine/limits.ts) on the real Redis: acquires
// that arrive together go to Redis as one script call per instance and turn, and still never
// grant more than the limit between them.
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, describe, expect, inject, it, vi } from "vitest";
import { createStreamSlots, slotLease } from "../src/stream-engine/limits.js";

const clients: Redis[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.quit()));
});

function instance() {
  const redis = new Redis(inject("redisUrl"));
  clients.push(redis);
  const sent: string[] = [];
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (cmd: any) => {
    sent.push(String(cmd.name).toLowerCase());
    return send(cmd);
  };
  return { slots: createStreamSlots({ maxPerInstance: 1_000, redis, log: pino({ level: "silent" }) }), sent, redis };
}

const settle = (ps: Promise<() => void>[]) =>
  Promise.allSettled(ps).then((rs) => ({
    granted: rs.flatMap((r) => (r.status === "fulfilled" ? [r.value] : [])),
    refused: rs.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason),
  }));

describe("stream slots across instances", () => {
  it("grants exactly the tenant's limit to 2 × 40 simultaneous acquires, one script call per instance, and frees on release", async () => {
    const tenant = `slots-${Date.now()}`;
    const a = instance();
    const b = instance();
    const { granted, refused } = await settle([
      ...Array.from({ length: 40 }, () => a.slots.acquire(tenant, 25)),
      ...Array.from({ length: 40 }, () => b.slots.acquire(tenant, 25)),
    ]);
    expect(granted).toHaveLength(25);
    expect(refused).toHaveLength(55);
    expect(refused.every((e: any) => e.status === 429 && e.code === "rate_limited")).toBe(true);
    const scriptCalls = a.sent.filter((c) => c === "evalsha" || c === "eval");
    expect(scriptCalls.length).toBeGreaterThanOrEqual(1);
    expect(scriptCalls.length).toBeLessThanOrEqual(2); // EVALSHA, and EVAL once on NOSCRIPT
    expect(a.slots.local + b.slots.local).toBe(25);

    for (const release of granted.slice(0, 3)) release();
    await new Promise((r) => setTimeout(r, 50)); // the DECRs reach Redis
    const again = await settle(Array.from({ length: 5 }, () => b.slots.acquire(tenant, 25)));
    expect(again.granted).toHaveLength(3);
    for (const release of [...granted.slice(3), ...again.granted]) release();
    await Promise.all([a.slots.close(), b.slots.close()]);
  });

  it("leases: a script call takes spare slots for the next acquires; the instances never admit more than the limit between them", async () => {
    const tenant = `slots-lease-${Date.now()}`;
    const limit = 640; // a lease of 10
    expect(slotLease(limit)).toBe(10);
    const a = instance();
    const b = instance();
    const granted: (() => void)[] = [];
    let refused = 0;
    const scriptCalls = () => [...a.sent, ...b.sent].filter((c) => c === "evalsha" || c === "eval").length;
    let callsFor600 = 0;
    for (let i = 0; i < 400; i++) {
      const { granted: g, refused: r } = await settle([a.slots.acquire(tenant, limit), b.slots.acquire(tenant, limit)]);
      granted.push(...g);
      refused += r.length;
      if (i === 299) callsFor600 = scriptCalls();
    }
    expect(granted.length + refused).toBe(800);
    expect(granted.length).toBeLessThanOrEqual(limit);
    expect(granted.length).toBeGreaterThanOrEqual(limit - 2 * slotLease(limit));
    expect(a.slots.local + b.slots.local).toBe(granted.length);
    // below the limit one script call served about a lease's worth of acquires (past it, each
    // refusal asks Redis: another instance may have freed slots)
    expect(callsFor600).toBeLessThan(600 / 5);
    // closing streams keep at most twice the lease spare per instance; the rest goes back at once
    for (const release of granted) release();
    await vi.waitFor(async () => {
      const keys = await a.redis.keys(`eng:sc:{${tenant}}:n:*`);
      const counters = keys.length ? await a.redis.mget(keys) : [];
      expect(counters.reduce((n, v) => n + Number(v ?? 0), 0)).toBeLessThanOrEqual(2 * 2 * slotLease(limit));
    });
    await Promise.all([a.slots.close(), b.slots.close()]);
  });

  it("a lowered limit: spares counted under the higher one are not used; nothing is admitted until fewer than it are open", async () => {
    const tenant = `slots-lower-${Date.now()}`;
    const a = instance();
    const b = instance();
    const held = [await a.slots.acquire(tenant, 640), await a.slots.acquire(tenant, 640), await b.slots.acquire(tenant, 640)];
    const refused = async (s: typeof a) => expect(s.slots.acquire(tenant, 2)).rejects.toMatchObject({ status: 429, code: "rate_limited" });
    await refused(a); // a's spares go back to Redis
    await refused(b); // and b's
    held.pop()!(); // b's stream closes: 2 open, at the limit
    await refused(a);
    await refused(b);
    held.pop()!(); // one of a's: 1 open; its slot goes back to Redis at once (a's latest acquire saw the lower limit)
    const admitted = await vi.waitFor(() => a.slots.acquire(tenant, 2));
    await refused(a);
    await refused(b);
    for (const release of [...held, admitted]) release();
    await Promise.all([a.slots.close(), b.slots.close()]);
  });
});
