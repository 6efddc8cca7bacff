// The per-tenant stream cap across instances (src/stream/limits.ts) on the real Redis: acquires
// that arrive together go to Redis as one script call per instance and turn, and still never
// grant more than the limit between them.
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createStreamSlots } from "../src/stream/limits.js";

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
  return { slots: createStreamSlots({ maxPerInstance: 1_000, redis, log: pino({ level: "silent" }) }), sent };
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
});
