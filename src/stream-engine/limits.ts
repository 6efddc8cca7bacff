// Connection caps for streams: per instance (config MAX_STREAMS_PER_INSTANCE) and per tenant across
// all instances (setting rateLimits.streamConnections), 429 rate_limited past either.
//
// Across instances (Redis): each instance keeps its own count per tenant in a key with a TTL,
// `eng:sc:{tenant}:n:<instance>`, listed in the set `eng:sc:{tenant}:i`; a Lua script sums the
// live counters and increments ours atomically, for a batch of acquires at once. The tenant is the
// keys' hash tag, so on a Redis Cluster the set and every counter the script reads share a slot. The instance
// re-writes its counters (and their TTL) every ttl/3, so a crashed instance's streams stop counting
// after at most the TTL, and any drift heals. If Redis is unreachable the check falls back to this
// instance's own count.
//
// Leases: a script call also takes a few spare slots (1/64 of the limit, at most 64; none for a
// limit under 64), which the instance's next acquires of the tenant use without a call, and a
// closing stream's slot becomes spare rather than a DECR (spares beyond twice the lease go back at
// once, the rest at the next re-write when the tenant has no streams here). A tenant at its limit
// can therefore refuse early on one instance by what the others hold spare, never admit more.
// Spares are used only under a limit at least as high as the one they were counted under: an acquire
// under a lowered limit first gives them all back and asks the script, which then admits nothing
// until the streams counted are fewer than the new limit (the open ones stay open); and a stream
// closing on an instance whose latest acquire of the tenant saw a lower limit gives its slot back at once.
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { AppError } from "../lib/errors.js";
import { keyedBatcher } from "../lib/batcher.js";
import { pipelinesByTag, type RedisClient } from "../lib/redis-connection.js";

export interface StreamSlots {
  /** Takes a slot or throws 429; the returned function gives it back (idempotent). */
  acquire(tenantId: string, tenantLimit: number): Promise<() => void>;
  /** streams open on this instance */
  readonly local: number;
  close(): Promise<void>;
}

export interface StreamSlotOptions {
  maxPerInstance: number;
  redis?: RedisClient | undefined;
  log: Logger;
  ttlSeconds?: number;
}

const RETRY_AFTER_SECONDS = 5;
/** the most spare slots a script call takes for one tenant */
export const MAX_SLOT_LEASE = 64;
/** Spare slots a script call takes: 1/64 of the limit, at most MAX_SLOT_LEASE (none under 64). */
export const slotLease = (limit: number): number => Math.min(MAX_SLOT_LEASE, Math.floor(limit / 64));

/**
 * Takes up to ARGV[5] slots at once (a batch of acquires): sums the live counters,
 * grants what the limit leaves room for and counts it on this instance's counter; returns how many.
 */
const ACQUIRE = `
local total = 0
for _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local v = redis.call('GET', ARGV[4] .. m)
  if v then total = total + tonumber(v) else redis.call('SREM', KEYS[1], m) end
end
local n = math.min(tonumber(ARGV[1]) - total, tonumber(ARGV[5]))
if n <= 0 then return 0 end
redis.call('INCRBY', KEYS[2], n)
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return n`;

/** The script as an ioredis command: EVALSHA, and the script itself only when Redis lacks it. */
type SlotsRedis = RedisClient & {
  engAcquireStreamSlots(
    setKey: string,
    counterKey: string,
    limit: number,
    instance: string,
    ttl: number,
    prefix: string,
    want: number,
  ): Promise<number>;
};

export function tooManyStreams(detail: string, limit: number): AppError {
  return new AppError(429, "rate_limited", detail, {
    headers: {
      "Retry-After": String(RETRY_AFTER_SECONDS),
      "RateLimit-Limit": String(limit),
      "RateLimit-Remaining": "0",
      "RateLimit-Reset": String(RETRY_AFTER_SECONDS),
    },
  });
}

export function createStreamSlots(opts: StreamSlotOptions): StreamSlots {
  const ttl = opts.ttlSeconds ?? 60;
  const instance = randomBytes(8).toString("hex");
  const perTenant = new Map<string, number>();
  /** per tenant with streams here: the limit its latest acquire here was asked under */
  const latestLimit = new Map<string, number>();
  /** per tenant: slots counted on this instance's Redis counter that no stream uses, and the highest limit they were counted under */
  const spare = new Map<string, { n: number; limit: number }>();
  let local = 0;
  const { redis } = opts;

  const setKey = (t: string) => `eng:sc:{${encodeURIComponent(t)}}:i`;
  const counterPrefix = (t: string) => `eng:sc:{${encodeURIComponent(t)}}:n:`;

  const bump = (tenantId: string, by: number) => {
    const n = (perTenant.get(tenantId) ?? 0) + by;
    if (n <= 0) {
      perTenant.delete(tenantId);
      latestLimit.delete(tenantId);
    } else perTenant.set(tenantId, n);
    local += by;
  };

  const scripted = redis as SlotsRedis | undefined;
  scripted?.defineCommand("engAcquireStreamSlots", { numberOfKeys: 2, lua: ACQUIRE });

  /**
   * A tenant's acquires are group-committed (src/lib/batcher.ts): those that arrive while Redis
   * answers the previous batch go as one script call, which also asks for the lease; the first
   * `granted` of them get a slot and what is left over is spare.
   */
  const acquireBatched = keyedBatcher<{ tenantId: string; limit: number }, boolean | null>(async (_key, items) => {
    const { tenantId, limit } = items[0]!.value;
    let granted: number;
    try {
      const prefix = counterPrefix(tenantId);
      const want = items.length + slotLease(limit);
      granted = Number(await scripted!.engAcquireStreamSlots(setKey(tenantId), prefix + instance, limit, instance, ttl, prefix, want));
    } catch (err) {
      opts.log.warn({ err: (err as Error).message }, "stream connection count unavailable; counting this instance only");
      for (const item of items) item.resolve(null);
      return;
    }
    if (granted > items.length) addSpare(tenantId, granted - items.length, limit);
    items.forEach((item, i) => item.resolve(i < granted));
  });

  const addSpare = (tenantId: string, n: number, limit: number) => {
    const s = spare.get(tenantId);
    spare.set(tenantId, { n: (s?.n ?? 0) + n, limit: Math.max(s?.limit ?? 0, limit) });
  };

  /**
   * A spare slot of the tenant, taken (no script call), or false when there is none. Spares counted
   * under a higher limit than `limit` (it was lowered) all go back to Redis first: the script decides.
   */
  function takeSpare(tenantId: string, limit: number): boolean {
    const s = spare.get(tenantId);
    if (!s) return false;
    if (s.limit > limit) {
      spare.delete(tenantId);
      // sent before the script call that follows on the same connection; no DEL (the counter may be
      // incremented by that call meanwhile): a counter at 0 expires with its TTL
      redis?.decrby(counterPrefix(tenantId) + instance, s.n).catch(() => undefined); // the periodic refresh re-writes the true count
      return false;
    }
    if (s.n === 1) spare.delete(tenantId);
    else s.n--;
    return true;
  }

  /**
   * A closed stream's Redis-counted slot (taken under `limit`): spare, and what is beyond twice the
   * lease back to Redis; all of them when they were counted under a higher limit than `latest`.
   */
  function giveBack(tenantId: string, limit: number, latest: number): void {
    const s = spare.get(tenantId);
    const n = (s?.n ?? 0) + 1;
    const countedUnder = Math.max(s?.limit ?? 0, limit);
    const keep = countedUnder > latest ? 0 : slotLease(limit);
    if (n <= 2 * keep) {
      spare.set(tenantId, { n, limit: countedUnder });
      return;
    }
    if (keep > 0) spare.set(tenantId, { n: keep, limit: countedUnder });
    else spare.delete(tenantId);
    if (!redis) return;
    const key = counterPrefix(tenantId) + instance;
    redis
      .decrby(key, n - keep)
      .then((left) => (left <= 0 ? redis.del(key) : 0))
      .catch(() => undefined); // the periodic refresh re-writes the true count
  }

  /** true = allowed (and counted in Redis), false = over the limit, null = Redis unavailable */
  function acquireShared(tenantId: string, limit: number): Promise<boolean | null> {
    if (!scripted) return Promise.resolve(null);
    return acquireBatched(`${limit} ${tenantId}`, { tenantId, limit });
  }

  async function refresh(): Promise<void> {
    if (!redis || redis.status !== "ready") return;
    const pipes = pipelinesByTag(redis);
    // a tenant with no stream here gives its spares back
    for (const tenantId of spare.keys()) {
      if (perTenant.has(tenantId)) continue;
      spare.delete(tenantId);
      pipes.for(tenantId).del(counterPrefix(tenantId) + instance);
    }
    for (const [tenantId, n] of perTenant) {
      pipes
        .for(tenantId)
        .set(counterPrefix(tenantId) + instance, n + (spare.get(tenantId)?.n ?? 0), "EX", ttl)
        .sadd(setKey(tenantId), instance)
        .expire(setKey(tenantId), ttl);
    }
    await pipes.exec();
  }

  const timer = redis ? setInterval(() => void refresh().catch(() => undefined), (ttl * 1000) / 3).unref() : undefined;

  return {
    get local() {
      return local;
    },

    async acquire(tenantId, tenantLimit) {
      if (local >= opts.maxPerInstance) {
        throw tooManyStreams("This instance has no room for more streams; retry shortly.", opts.maxPerInstance);
      }
      bump(tenantId, 1); // reserve first, so concurrent acquires see each other
      latestLimit.set(tenantId, tenantLimit);
      const shared = takeSpare(tenantId, tenantLimit) || (await acquireShared(tenantId, tenantLimit));
      const ownCount = perTenant.get(tenantId) ?? 0;
      if (shared === false || (shared === null && ownCount > tenantLimit)) {
        bump(tenantId, -1);
        throw tooManyStreams(`The tenant has reached its limit of ${tenantLimit} open streams.`, tenantLimit);
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const latest = latestLimit.get(tenantId) ?? tenantLimit;
        bump(tenantId, -1);
        if (shared && redis) giveBack(tenantId, tenantLimit, latest);
      };
    },

    async close() {
      clearInterval(timer);
      if (!redis || redis.status !== "ready") return;
      const pipes = pipelinesByTag(redis);
      for (const tenantId of new Set([...perTenant.keys(), ...spare.keys()])) pipes.for(tenantId).del(counterPrefix(tenantId) + instance);
      await pipes.exec().catch(() => undefined);
    },
  };
}
