// Rate-limit leases (src/auth/rate-lease.ts): a store call takes a few points more than its
// requests need and the instance's next requests use them without a call. On one instance the
// count stays exact; across instances a bucket never allows more than its budget. Two limiters
// on the real Redis are two instances.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createRateLimiter, type RateLimiter } from "../src/auth/rate-limit.js";
import { claimLease, MAX_LEASE, nextLease, refusedByLease, storeAsk } from "../src/auth/rate-lease.js";
import type { Principal } from "../src/auth/principal.js";
import { AppError } from "../src/lib/errors.js";

const redis = new Redis(inject("redisUrl"));
// until the connection is ready the limiter counts in process (its insurance limiter)
beforeAll(() => (redis.status === "ready" ? undefined : new Promise<void>((resolve) => redis.once("ready", () => resolve()))));
afterAll(() => redis.quit());

function limiter() {
  const calls = { store: 0 };
  // settings always come with the call here: the database is never asked
  const l = createRateLimiter({ prisma: undefined as never, redis, onStoreCall: () => void calls.store++ });
  return { l, calls };
}

const keyOf = (): Principal => ({ kind: "key", tenantId: `ten_${randomUUID()}`, keyId: `key_${randomUUID()}`, capabilities: new Set() });
const budget = (n: number) => ({ rateLimits: { requestsPerMinute: n } });

/** Remaining after the request, or null when it was refused with 429. */
async function attempt(l: RateLimiter, p: Principal, n: number): Promise<number | null> {
  try {
    return (await l.consume(p, budget(n))).remaining;
  } catch (err) {
    if (err instanceof AppError && err.status === 429) return null;
    throw err;
  }
}

describe("rate-limit leases", () => {
  it("one instance, one at a time: exactly the budget, every remaining exact, far fewer store calls than requests", async () => {
    const { l, calls } = limiter();
    const p = keyOf();
    const seen: (number | null)[] = [];
    let callsAtBudget = 0;
    for (let i = 0; i < 150; i++) {
      seen.push(await attempt(l, p, 100));
      if (i === 99) callsAtBudget = calls.store;
    }
    expect(seen.slice(0, 100)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    expect(seen.slice(100).every((r) => r === null)).toBe(true);
    expect(calls.store).toBeLessThan(40);
    // past the budget the lease decides the refusals: no store call at all
    expect(calls.store).toBe(callsAtBudget);
  });

  it("one instance, bursts at once between single requests: exactly the budget", async () => {
    const { l } = limiter();
    const p = keyOf();
    const results: (number | null)[] = [];
    for (let round = 0; round < 6; round++) {
      results.push(await attempt(l, p, 40));
      results.push(...(await Promise.all(Array.from({ length: 9 }, () => attempt(l, p, 40)))));
    }
    const allowed = results.filter((r) => r !== null);
    expect(allowed).toHaveLength(40);
    expect([...allowed].sort((a, b) => a! - b!)).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it("two instances sharing a bucket: never more than the budget, and short of it by no more than what they hold unused", async () => {
    const a = limiter();
    const b = limiter();
    const p = keyOf();
    let allowed = 0;
    for (let i = 0; i < 120; i++) {
      const burst = await Promise.all(Array.from({ length: 1 + (i % 4) }, (_, j) => attempt((i + j) % 3 === 0 ? b.l : a.l, p, 300)));
      allowed += burst.filter((r) => r !== null).length;
    }
    expect(allowed).toBeLessThanOrEqual(300);
    expect(allowed).toBeGreaterThanOrEqual(300 - 2 * MAX_LEASE);
    // and each instance made far fewer store calls than it served requests
    expect(a.calls.store + b.calls.store).toBeLessThan(allowed / 2);
  });
});

describe("lease accounting", () => {
  it("a window's first call takes no lease; a batch the carried points cover makes no store call", () => {
    expect(storeAsk(100, claimLease(undefined, Date.now()), 3)).toEqual({ fromLease: 0, ask: 3, extra: 0 });
    const lease = nextLease({ limit: 100, used: 10, left: 5, until: Date.now() + 30_000 });
    const claim = claimLease(lease, Date.now());
    expect(lease.left).toBe(0); // taken for the batch: nothing else uses it meanwhile
    expect(storeAsk(100, claim, 4)).toEqual({ fromLease: 4, ask: 0, extra: 0 });
    // more than carried: the rest plus an eighth of what is left after the batch
    expect(storeAsk(100, claim, 9)).toEqual({ fromLease: 5, ask: 4 + 10, extra: 10 });
  });

  it("a lease near its window's end is not used, and never holds more than the budget leaves", () => {
    const ending = nextLease({ limit: 100, used: 10, left: 5, until: Date.now() + 500 });
    expect(claimLease(ending, Date.now())).toEqual({ carried: 0, used: 0, until: 0 });
    expect(nextLease({ limit: 12, used: 11, left: 5, until: Date.now() + 30_000 }).left).toBe(1);
    expect(nextLease({ limit: 12, used: 14, left: 5, until: Date.now() + 30_000 })).toMatchObject({ used: 12, left: 0 });
    expect(storeAsk(1000, { carried: 0, used: 0, until: Date.now() + 30_000 }, 1).extra).toBe(MAX_LEASE);
  });

  it("refuses from the lease only what the store would refuse", () => {
    const lease = nextLease({ limit: 12, used: 10, left: 2, until: Date.now() + 30_000 });
    expect(refusedByLease(lease, 3, Date.now())).toBe(true); // 10 + 3 > 12
    expect(refusedByLease(lease, 2, Date.now())).toBe(false); // the lease has them
    const spent = nextLease({ limit: 12, used: 11, left: 0, until: Date.now() + 30_000 });
    expect(refusedByLease(spent, 1, Date.now())).toBe(false); // 12 is still within: ask the store
    expect(refusedByLease(spent, 2, Date.now())).toBe(true);
    expect(refusedByLease(nextLease({ limit: 12, used: 12, left: 0, until: Date.now() + 500 }), 1, Date.now())).toBe(false);
  });
});
