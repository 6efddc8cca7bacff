// Per-caller request budget (per API key, per admin subject; per publishable key and per reader behind
// it), fixed one-minute windows, shared by every instance through Redis (rate-limiter-flexible), in
// process without Redis. The budgets are the tenant's `rateLimits` settings.
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { PrismaClient } from "../generated/prisma/client.js";
import { errors } from "../lib/errors.js";
import { keyedBatcher } from "../lib/batcher.js";
import { resolveSettings, type Settings } from "../tenancy/settings-model.js";
import type { Principal } from "./principal.js";

export interface RateLimitInfo {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface RateLimiter {
  /**
   * Counts one request (or `points` units of work: each root field of a GraphQL operation is one);
   * throws 429 rate_limited past the budget. `storedSettings` (the tenant row's
   * settings, when the caller already has it) saves the limiter its own cached lookup.
   */
  consume(principal: Principal, storedSettings?: unknown, points?: number): Promise<RateLimitInfo>;
  /**
   * Counts one request of a reader acting through a publishable key (per identity `sub`, on top of
   * the key's own budget: one reader cannot spend a whole site's budget).
   */
  consumeReader(tenantId: string, readerId: string, storedSettings?: unknown): Promise<RateLimitInfo>;
  /** Forget cached settings of a tenant (after a settings change on this instance). */
  invalidate(tenantId: string): void;
}

const SETTINGS_TTL_MS = 10_000;

export function rateLimitHeaders(i: RateLimitInfo): Record<string, string> {
  return {
    "RateLimit-Limit": String(i.limit),
    "RateLimit-Remaining": String(Math.max(0, i.remaining)),
    "RateLimit-Reset": String(i.resetSeconds),
  };
}

export function createRateLimiter(opts: { prisma: PrismaClient; redis?: Redis | undefined; onRefusal?: () => void }): RateLimiter {
  const limiters = new Map<number, RateLimiterAbstract>();
  const limits = new Map<string, { value: Settings["rateLimits"]; at: number }>();

  const limiterFor = (points: number): RateLimiterAbstract => {
    let l = limiters.get(points);
    if (!l) {
      l = opts.redis
        ? new RateLimiterRedis({
            storeClient: opts.redis,
            points,
            duration: 60,
            keyPrefix: `eng:rl:${points}`,
            // Redis down or stalled (commands time out): count in process until it is back
            rejectIfRedisNotReady: true,
            insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }),
          })
        : new RateLimiterMemory({ points, duration: 60 });
      limiters.set(points, l);
    }
    return l;
  };

  const limitsOf = async (tenantId: string, storedSettings: unknown): Promise<Settings["rateLimits"]> => {
    if (storedSettings !== undefined) return resolveSettings(storedSettings).rateLimits;
    const hit = limits.get(tenantId);
    if (hit && Date.now() - hit.at < SETTINGS_TTL_MS) return hit.value;
    const t = await opts.prisma.tenant.findUnique({ where: { id: tenantId }, select: { settings: true } });
    const value = resolveSettings(t?.settings).rateLimits;
    limits.set(tenantId, { value, at: Date.now() });
    return value;
  };

  /**
   * Consumes of one bucket are group-committed (src/lib/batcher.ts): a busy key's requests go to
   * the store as one consume of their summed points instead of one command each. The store
   * returns the bucket's total after the batch; walking the batch in arrival order from the total
   * before it, each request is allowed or refused exactly as it would have been alone.
   */
  const consumeBatched = keyedBatcher<{ limit: number; bucket: string; points: number }, RateLimitInfo>(async (_key, items) => {
    const { limit, bucket } = items[0]!.value;
    const total = items.reduce((n, i) => n + i.value.points, 0);
    let res: RateLimiterRes;
    try {
      res = await limiterFor(limit).consume(bucket, total);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw errors.unavailable("The rate limiter's store is unavailable.");
      res = err; // over the budget: some (or all) of the batch are refused
    }
    const resetSeconds = Math.ceil(res.msBeforeNext / 1000);
    let used = res.consumedPoints - total;
    for (const item of items) {
      used += item.value.points;
      if (used <= limit) {
        item.resolve({ limit, remaining: limit - used, resetSeconds });
        continue;
      }
      opts.onRefusal?.();
      const reset = Math.max(1, resetSeconds);
      item.reject(errors.rateLimited(reset, rateLimitHeaders({ limit, remaining: 0, resetSeconds: reset })));
    }
  });

  const take = (bucket: string, limit: number, points: number): Promise<RateLimitInfo> =>
    consumeBatched(`${limit} ${bucket}`, { limit, bucket, points });

  return {
    async consume(p, storedSettings, points = 1) {
      const limits = await limitsOf(p.tenantId, storedSettings);
      if (p.kind === "admin") return take(`${p.tenantId}:a:${p.subject}`, limits.requestsPerMinute, points);
      if (p.kind === "key") return take(`${p.tenantId}:k:${p.keyId}`, limits.requestsPerMinute, points);
      if (p.kind === "operator") return take(`${p.tenantId}:o:${p.operatorId}`, limits.requestsPerMinute, points);
      return take(`${p.tenantId}:k:${p.keyId}`, limits.publishableKeyRequestsPerMinute, points);
    },
    async consumeReader(tenantId, readerId, storedSettings) {
      const limits = await limitsOf(tenantId, storedSettings);
      return take(`${tenantId}:r:${readerId}`, limits.readerRequestsPerMinute, 1);
    },
    invalidate(tenantId) {
      limits.delete(tenantId);
    },
  };
}
