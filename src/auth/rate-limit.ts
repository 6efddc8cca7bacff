// Per-caller request budget (per API key, or per admin subject), fixed one-minute windows, shared by
// every instance through Redis (rate-limiter-flexible), in process without Redis. The budget is the
// tenant's `rateLimits.requestsPerMinute` setting.
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { PrismaClient } from "../generated/prisma/client.js";
import { errors } from "../lib/errors.js";
import { resolveSettings } from "../tenancy/settings-model.js";
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
  const limits = new Map<string, { value: number; at: number }>();

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

  const limitOf = async (tenantId: string): Promise<number> => {
    const hit = limits.get(tenantId);
    if (hit && Date.now() - hit.at < SETTINGS_TTL_MS) return hit.value;
    const t = await opts.prisma.tenant.findUnique({ where: { id: tenantId }, select: { settings: true } });
    const value = resolveSettings(t?.settings).rateLimits.requestsPerMinute;
    limits.set(tenantId, { value, at: Date.now() });
    return value;
  };

  return {
    async consume(p, storedSettings, points = 1) {
      const limit = storedSettings !== undefined ? resolveSettings(storedSettings).rateLimits.requestsPerMinute : await limitOf(p.tenantId);
      const key = p.kind === "key" ? `${p.tenantId}:k:${p.keyId}` : `${p.tenantId}:a:${p.subject}`;
      try {
        const r = await limiterFor(limit).consume(key, points);
        return { limit, remaining: r.remainingPoints, resetSeconds: Math.ceil(r.msBeforeNext / 1000) };
      } catch (err) {
        if (err instanceof RateLimiterRes) {
          opts.onRefusal?.();
          const reset = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
          throw errors.rateLimited(reset, rateLimitHeaders({ limit, remaining: 0, resetSeconds: reset }));
        }
        throw errors.unavailable("The rate limiter's store is unavailable.");
      }
    },
    invalidate(tenantId) {
      limits.delete(tenantId);
    },
  };
}
