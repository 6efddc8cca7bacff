// Console sign-in throttling: failed password attempts per account (tenant + email) and per client
// address, counted in fixed windows shared by every instance through Redis (rate-limiter-flexible),
// so another instance or a restart gives no fresh tries. Without Redis (embedded mode) the counts
// are in process; with Redis down or stalled each instance counts in process until it is back
// (the insurance limiter) instead of failing the sign-in or letting every attempt through.
import { createHash } from "node:crypto";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { keyedBatcher } from "../lib/batcher.js";
import { errors } from "../lib/errors.js";
import type { RedisClient } from "../lib/redis-connection.js";

export interface SignInLimits {
  /** failed attempts per account (tenant + email) in a window */
  perAccount: number;
  /** failed attempts per client address in a window */
  perAddress: number;
  windowSeconds: number;
}

export const SIGN_IN_LIMITS: Readonly<SignInLimits> = { perAccount: 10, perAddress: 20, windowSeconds: 15 * 60 };

export interface SignInAttempt {
  address: string;
  tenantId: string;
  email: string;
}

export interface SignInThrottle {
  /**
   * Counts an attempt before the password is checked (atomically, so parallel attempts cannot all
   * pass one check); throws 429 rate_limited with Retry-After when the account or the address has
   * no attempts left in its window (a refused attempt is not counted).
   */
  begin(attempt: SignInAttempt): Promise<void>;
  /** The password was right: the account's count starts again and the attempt does not count for the address. */
  succeeded(attempt: SignInAttempt): Promise<void>;
  /** The password could not be checked (the database failed): the attempt does not count. */
  abandoned(attempt: SignInAttempt): Promise<void>;
}

/**
 * The Redis key prefix of one deployment (the instances sharing a database): its database's name,
 * so deployments (and test runs) sharing a Redis keep their counts apart.
 */
export function signInKeyPrefix(databaseUrl: string | undefined): string {
  let database = "embedded";
  if (databaseUrl) {
    try {
      database = decodeURIComponent(new URL(databaseUrl).pathname.slice(1)) || "postgres";
    } catch {
      database = "postgres";
    }
  }
  return `eng:signin:${database}`;
}

/** The account's key: hashed, so no email is stored in Redis and any input makes a short key. */
const accountKey = (a: SignInAttempt) => createHash("sha256").update(`${a.tenantId}\n${a.email.trim().toLowerCase()}`).digest("base64url");

/** how long an attempt made while the instance first connects to Redis waits for it */
const FIRST_CONNECTION_WAIT_MS = 1_000;

/**
 * Resolves once the first connection to Redis is made or has failed (or after a short wait): an
 * attempt right after start-up is counted in Redis, not in process, so a restart gives no fresh
 * tries. Later outages fall back at once (the limiter's insurance).
 */
function firstConnection(redis: RedisClient | undefined): () => Promise<void> {
  if (!redis || redis.status === "ready" || redis.status === "end") return () => Promise.resolve();
  let settled = false;
  const outcome = new Promise<void>((resolve) => {
    const done = () => {
      settled = true;
      redis.off("ready", done).off("error", done).off("end", done);
      resolve();
    };
    redis.once("ready", done).once("error", done).once("end", done);
  });
  return async () => {
    if (settled) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([outcome, new Promise<void>((resolve) => (timer = setTimeout(resolve, FIRST_CONNECTION_WAIT_MS)))]);
    clearTimeout(timer);
  };
}

/** A fixed-window counter shared through Redis when there is one (in process, and as its insurance, otherwise). */
function windowLimiter(redis: RedisClient | undefined, keyPrefix: string, points: number, duration: number): RateLimiterAbstract {
  if (!redis) return new RateLimiterMemory({ points, duration });
  return new RateLimiterRedis({
    storeClient: redis,
    points,
    duration,
    keyPrefix,
    // Redis down or not connected: count in process at once; stalled: after the command timeout
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ points, duration }),
  });
}

export function createSignInThrottle(opts: {
  redis?: RedisClient | undefined;
  keyPrefix: string;
  limits?: Readonly<SignInLimits>;
}): SignInThrottle {
  const limits = opts.limits ?? SIGN_IN_LIMITS;
  const limiter = (points: number, name: string) => windowLimiter(opts.redis, `${opts.keyPrefix}:${name}`, points, limits.windowSeconds);
  const byAccount = limiter(limits.perAccount, "acct");
  const byAddress = limiter(limits.perAddress, "addr");
  const connected = firstConnection(opts.redis);

  return {
    async begin(attempt) {
      await connected();
      const account = accountKey(attempt);
      const [acct, addr] = await Promise.allSettled([byAccount.consume(account), byAddress.consume(attempt.address)]);
      const refused = [acct, addr].flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
      if (refused.length === 0) return;
      // a refused attempt does not count where it was allowed
      await Promise.all([
        acct.status === "fulfilled" ? byAccount.reward(account) : undefined,
        addr.status === "fulfilled" ? byAddress.reward(attempt.address) : undefined,
      ]);
      const wait = Math.max(0, ...refused.map((r) => (r instanceof RateLimiterRes ? r.msBeforeNext : 0)));
      const other = refused.find((r) => !(r instanceof RateLimiterRes));
      if (other !== undefined) throw other;
      throw errors.rateLimited(Math.max(1, Math.ceil(wait / 1000)));
    },
    async succeeded(attempt) {
      await Promise.all([byAccount.delete(accountKey(attempt)), byAddress.reward(attempt.address)]);
    },
    async abandoned(attempt) {
      await Promise.all([byAccount.reward(accountKey(attempt)), byAddress.reward(attempt.address)]);
    },
  };
}

/** A budget of `points` per key in each window, shared by every instance (Redis) when there is one. */
export interface KeyLimiter {
  /** Counts one; 429 rate_limited with Retry-After when the key has none left in its window. */
  consume(key: string): Promise<void>;
  /** Counts one; whether the key still had one (no error: for answers that must not differ, as an email link's). */
  tryConsume(key: string): Promise<boolean>;
  /** Gives one back (a request counted before it could be told apart: the fediverse inbox's forged ones). */
  reward(key: string): Promise<void>;
  /** Whether the key has none left in its window, counting nothing. */
  exhausted(key: string): Promise<boolean>;
}

/**
 * The calls for one key group-committed (src/lib/batcher.ts): those that arrive while Redis answers
 * the key's last command go out as one `consume(key, n)` or one read, so a burst from one domain or
 * address (the fediverse inbox's) costs a few commands, not one each. Each call counts one as it
 * would alone: of n counted together, the first that fit in what the window had left are allowed.
 */
export function createKeyLimiter(opts: {
  redis?: RedisClient | undefined;
  keyPrefix: string;
  points: number;
  windowSeconds: number;
}): KeyLimiter {
  const limiter = windowLimiter(opts.redis, opts.keyPrefix, opts.points, opts.windowSeconds);
  const connected = firstConnection(opts.redis);
  /** per call: allowed, or the ms until the window ends */
  const take = keyedBatcher<null, number | true>(async (key, items) => {
    const n = items.length;
    let res: RateLimiterRes;
    try {
      res = await limiter.consume(key, n);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      res = err;
    }
    // what the window had left before these n
    const left = Math.max(0, opts.points - (res.consumedPoints - n));
    items.forEach((item, i) => item.resolve(i < left ? true : res.msBeforeNext));
  });
  const peek = keyedBatcher<null, boolean>(async (key, items) => {
    const res = await limiter.get(key);
    const none = res !== null && res.remainingPoints <= 0;
    for (const item of items) item.resolve(none);
  });
  return {
    async consume(key) {
      await connected();
      const got = await take(key, null);
      if (got !== true) throw errors.rateLimited(Math.max(1, Math.ceil(got / 1000)));
    },
    async tryConsume(key) {
      await connected();
      return (await take(key, null)) === true;
    },
    async reward(key) {
      await connected();
      await limiter.reward(key);
    },
    async exhausted(key) {
      await connected();
      return peek(key, null);
    },
  };
}
