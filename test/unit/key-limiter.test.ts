/**
 * A key's budget (src/auth/sign-in-throttle.ts, createKeyLimiter) counted by group commit: calls of
 * one key made at once go out together, and still each counts one as it would alone. Against Redis
 * (its own key prefix) and in process.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createKeyLimiter } from "../../src/auth/sign-in-throttle.js";
import { AppError } from "../../src/lib/errors.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = new Redis(REDIS_URL, { connectionName: "key-limiter-test" });
afterAll(() => redis.quit());

describe.each([
  { store: "Redis", client: () => redis },
  { store: "process", client: () => undefined },
])("a key's budget in $store", ({ client }) => {
  const limiter = () => createKeyLimiter({ redis: client(), keyPrefix: `test:${randomUUID()}`, points: 5, windowSeconds: 60 });

  it("allows exactly the budget of twelve calls made at once, and counts the refused ones too", async () => {
    const l = limiter();
    const got = await Promise.all(Array.from({ length: 12 }, () => l.tryConsume("a.example")));
    expect(got.filter(Boolean)).toHaveLength(5);
    expect(got.slice(0, 5)).toEqual([true, true, true, true, true]);
    expect(await l.exhausted("a.example")).toBe(true);
    // another key has its own budget
    expect(await l.exhausted("b.example")).toBe(false);
    expect(await l.tryConsume("b.example")).toBe(true);
  });

  it("gives a later group what the window has left: 3 alone, then 2 of 4", async () => {
    const l = limiter();
    expect(await Promise.all([1, 2, 3].map(() => l.tryConsume("k")))).toEqual([true, true, true]);
    expect(await l.exhausted("k")).toBe(false);
    expect(await Promise.all([1, 2, 3, 4].map(() => l.tryConsume("k")))).toEqual([true, true, false, false]);
  });

  it("consume refuses past the budget with 429 and a Retry-After within the window; a reward gives one back", async () => {
    const l = limiter();
    const settled = await Promise.allSettled(Array.from({ length: 7 }, () => l.consume("k")));
    const refused = settled.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
    expect(refused).toHaveLength(2);
    for (const err of refused) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(429);
      const retry = Number((err as AppError).headers["Retry-After"]);
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
    }
    // 7 counted: two rewards leave it at 5, still none left; three more leave 2 counted, 3 to take
    await l.reward("k");
    await l.reward("k");
    expect(await l.exhausted("k")).toBe(true);
    for (let i = 0; i < 3; i++) await l.reward("k");
    expect(await Promise.all([1, 2, 3, 4].map(() => l.tryConsume("k")))).toEqual([true, true, true, false]);
  });
});

describe("a key's budget in Redis, group-committed", () => {
  it("sends twelve calls made at once as one command, and a burst of 200 in a few", async () => {
    const counted = new Redis(REDIS_URL, { connectionName: "key-limiter-count" });
    let commands = 0;
    const send = counted.sendCommand.bind(counted);
    counted.sendCommand = ((...args: Parameters<typeof send>) => {
      commands++;
      return send(...args);
    }) as typeof send;
    try {
      const l = createKeyLimiter({ redis: counted, keyPrefix: `test:${randomUUID()}`, points: 150, windowSeconds: 60 });
      await counted.ping();
      commands = 0;
      expect((await Promise.all(Array.from({ length: 12 }, () => l.tryConsume("peer.example")))).every(Boolean)).toBe(true);
      expect(commands).toBe(1);
      commands = 0;
      const burst = await Promise.all(Array.from({ length: 200 }, () => l.tryConsume("peer.example")));
      expect(burst.filter(Boolean)).toHaveLength(138);
      expect(commands).toBeLessThanOrEqual(3);
    } finally {
      await counted.quit();
    }
  });
});
