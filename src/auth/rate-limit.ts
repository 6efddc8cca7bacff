// Per-caller request budget (per API key, per admin subject; per publishable key and per reader behind
// it), fixed one-minute windows, shared by every instance through Redis (rate-limiter-flexible), in
// process without Redis. The budgets are the tenant's `rateLimits` settings.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { PrismaClient } from "../generated/prisma/client.js";
import { errors, type AppError } from "../lib/errors.js";
import { keyedBatcher } from "../lib/batcher.js";
import type { RedisClient } from "../lib/redis-connection.js";
import { claimLease, nextLease, refusedByLease, storeAsk, useLease, usedBefore, type Lease } from "./rate-lease.js";
import { resolveSettings } from "../tenancy/settings/resolve.js";
import { type Settings } from "../tenancy/settings/tree.js";
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
/** buckets whose leases are kept (per instance; past it they are dropped, which only costs store calls) */
const MAX_LEASES = 100_000;

export function rateLimitHeaders(i: RateLimitInfo): Record<string, string> {
  return {
    "RateLimit-Limit": String(i.limit),
    "RateLimit-Remaining": String(Math.max(0, i.remaining)),
    "RateLimit-Reset": String(i.resetSeconds),
  };
}

export function createRateLimiter(opts: {
  prisma: PrismaClient;
  redis?: RedisClient | undefined;
  onRefusal?: () => void;
  onStoreCall?: () => void;
}): RateLimiter {
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
   *
   * A batch also takes a lease (src/auth/rate-lease.ts): a few points more than it needs, which
   * the next requests of the bucket on this instance use without a store call. On one instance the
   * count stays exact; across instances a bucket may refuse early by what the others hold unused.
   */
  const leases = new Map<string, Lease>();
  const refusal = (limit: number, resetSeconds: number): AppError => {
    opts.onRefusal?.();
    const reset = Math.max(1, resetSeconds);
    return errors.rateLimited(reset, rateLimitHeaders({ limit, remaining: 0, resetSeconds: reset }));
  };
  const consumeBatched = keyedBatcher<{ limit: number; bucket: string; points: number }, RateLimitInfo>(async (key, items) => {
    const { limit, bucket } = items[0]!.value;
    const total = items.reduce((n, i) => n + i.value.points, 0);
    const claim = claimLease(leases.get(key), Date.now());
    const { fromLease, ask, extra } = storeAsk(limit, claim, total);
    let used: number;
    let until: number;
    if (ask === 0) {
      // the lease covers the batch: no store call
      used = claim.used;
      until = claim.until;
    } else {
      let res: RateLimiterRes;
      opts.onStoreCall?.();
      try {
        res = await limiterFor(limit).consume(bucket, ask);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) {
          leases.delete(key);
          throw errors.unavailable("The rate limiter's store is unavailable.");
        }
        res = err; // over the budget: some (or all) of the batch are refused
      }
      used = usedBefore(res.consumedPoints, ask, claim.carried);
      until = Date.now() + res.msBeforeNext;
    }
    const resetSeconds = Math.max(0, Math.ceil((until - Date.now()) / 1000));
    for (const item of items) {
      used += item.value.points;
      if (used <= limit) {
        item.resolve({ limit, remaining: limit - used, resetSeconds });
        continue;
      }
      item.reject(refusal(limit, resetSeconds));
    }
    if (leases.size >= MAX_LEASES && !leases.has(key)) leases.clear();
    leases.set(key, nextLease({ limit, used, left: claim.carried - fromLease + extra, until }));
  });

  const take = (bucket: string, limit: number, points: number): Promise<RateLimitInfo> => {
    const key = `${limit} ${bucket}`;
    const lease = leases.get(key);
    const now = Date.now();
    if (lease && useLease(lease, points, now)) {
      return Promise.resolve({ limit, remaining: limit - lease.used, resetSeconds: Math.ceil((lease.until - now) / 1000) });
    }
    if (lease && refusedByLease(lease, points, now)) return Promise.reject(refusal(limit, Math.ceil((lease.until - now) / 1000)));
    return consumeBatched(key, { limit, bucket, points });
  };

  return {
    async consume(p, storedSettings, points = 1) {
      const limits = await limitsOf(p.tenantId, storedSettings);
      if (p.kind === "admin") return take(`${p.tenantId}:a:${p.subject}`, limits.requestsPerMinute, points);
      if (p.kind === "key") return take(`${p.tenantId}:k:${p.keyId}`, limits.requestsPerMinute, points);
      if (p.kind === "operator") return take(`${p.tenantId}:o:${p.operatorId}`, limits.requestsPerMinute, points);
      if (p.kind === "alert_link") return take(`${p.tenantId}:l:${p.alertJobId}`, limits.requestsPerMinute, points);
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
