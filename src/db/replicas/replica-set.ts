// The read replicas (DATABASE_REPLICA_URLS, contract section 26): PostgreSQL streaming standbys of the
// primary, or poolers in front of them. Each has its own pool, plain SQL and Prisma client, whose
// statements fall back to the primary when the replica fails them (./failover-pool.ts); a health
// check every `checkMs` says which replicas serve:
// - the primary's WAL position is sampled (`pg_current_wal_lsn()`), and kept for a while with the time;
// - each replica is asked whether it is a standby and how far it has replayed (`pg_last_wal_replay_lsn()`);
// - its lag is the age of the oldest sampled primary position it has not replayed yet (0 when it has
//   replayed everything sampled: an idle primary does not make an idle standby look late);
// - `serving` when it answered and lags at most `maxLagMs`, `lagging` beyond that, `down` when it
//   did not answer within the check's limit, is not a standby, or failed a request's statement
//   (the next check that passes takes it back).
// `pick(after)` chooses a serving replica (in turn) known to have replayed past `after`: positions are
// those of the last check, so a replica is only ever chosen once it is known to have a write.
// `positionAfterWrite()` is the primary's position read after the caller's commit (for the
// consistency token): concurrent callers share one read that started after each of them asked.
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../generated/prisma/client.js";
import type { Sql } from "../sql.js";
import { pgSql } from "../sql.js";
import { parseLsn } from "./consistency-token.js";
import { failoverPool } from "./failover-pool.js";

export type ReplicaState = "serving" | "lagging" | "down";

/** One replica as /readyz and the metrics show it. */
export interface ReplicaStatus {
  /** `replica-<n>`, its place in DATABASE_REPLICA_URLS from 1 (URLs hold credentials: never shown) */
  name: string;
  state: ReplicaState;
  /** replay lag in ms at the last check (null when it did not answer) */
  lagMs: number | null;
}

/** A replica a request reads from: its own plain SQL and Prisma client. */
export interface Replica {
  readonly name: string;
  readonly sql: Sql;
  readonly prisma: PrismaClient;
}

export interface ReplicaSet {
  /** how many replicas are configured (0: every read goes to the primary) */
  readonly size: number;
  /** a serving replica that has replayed past `after` (null: any serving one); null when none */
  pick(after: bigint | null): Replica | null;
  status(): ReplicaStatus[];
  /** the primary's WAL position, read after the caller's commit */
  positionAfterWrite(): Promise<bigint>;
  /** runs one health check now (also what the timer runs) */
  check(): Promise<void>;
  close(): Promise<void>;
}

export interface ReplicaSetOptions {
  urls: string[];
  primary: pg.Pool;
  /** the pool options of the primary's pool, for each replica's (their connection string aside) */
  poolConfig: (url: string) => pg.PoolConfig;
  /** the pooler's connections use unnamed statements (src/db/pooler.ts) */
  named: boolean;
  maxLagMs: number;
  /** default 1000 */
  checkMs?: number;
  /** a check's answer must come within this (default 2000) */
  checkTimeoutMs?: number;
  /** a statement a replica failed ran again on the primary */
  onFallback?: (replica: string, reason: "unreachable" | "refused", err: unknown) => void;
  onStateChange?: (replica: string, from: ReplicaState, to: ReplicaState, lagMs: number | null) => void;
}

interface Member extends Replica {
  pool: pg.Pool;
  /** the replica's own pool, without the fallback: what the checks ask */
  raw: pg.Pool;
  state: ReplicaState;
  lagMs: number | null;
  replayed: bigint | null;
}

/** No replicas: every read on the primary (and no consistency tokens). */
export const NO_REPLICAS: ReplicaSet = {
  size: 0,
  pick: () => null,
  status: () => [],
  positionAfterWrite: async () => 0n,
  check: async () => undefined,
  close: async () => undefined,
};

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error("replica check timed out")), ms).unref())]);

export async function openReplicaSet(opts: ReplicaSetOptions): Promise<ReplicaSet> {
  if (opts.urls.length === 0) return NO_REPLICAS;
  const checkMs = opts.checkMs ?? 1_000;
  const checkTimeoutMs = opts.checkTimeoutMs ?? 2_000;
  const members: Member[] = opts.urls.map((url, i) => {
    const name = `replica-${i + 1}`;
    const raw = new pg.Pool({ ...opts.poolConfig(url), max: 2 });
    raw.on("error", () => undefined);
    const pool = failoverPool(opts.poolConfig(url), opts.primary, (reason, err) => {
      if (reason === "unreachable") setState(member, "down", null);
      opts.onFallback?.(name, reason, err);
    });
    pool.on("error", () => undefined);
    const member: Member = {
      name,
      pool,
      raw,
      sql: pgSql(pool, { named: opts.named }),
      prisma: new PrismaClient({ adapter: new PrismaPg(pool) }),
      state: "down",
      lagMs: null,
      replayed: null,
    };
    return member;
  });
  const setState = (m: Member, state: ReplicaState, lagMs: number | null) => {
    const from = m.state;
    m.state = state;
    m.lagMs = lagMs;
    if (from !== state) opts.onStateChange?.(m.name, from, state, lagMs);
  };

  /** the primary's sampled positions, oldest first (kept for the longer of 10 s and 4 × maxLagMs) */
  const samples: { at: number; lsn: bigint }[] = [];
  const keepMs = Math.max(10_000, 4 * opts.maxLagMs);
  const lagOf = (replayed: bigint, now: number): number => {
    const behind = samples.find((s) => s.lsn > replayed);
    return behind ? Math.max(0, now - behind.at) : 0;
  };

  const readPrimaryLsn = async (): Promise<bigint> => {
    const res = await opts.primary.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn");
    const lsn = parseLsn(res.rows[0]?.lsn);
    if (lsn === null) throw new Error("the primary gave no WAL position");
    return lsn;
  };

  const checkOne = async (m: Member, now: number) => {
    try {
      const res = await withTimeout(
        m.raw.query<{ standby: boolean; lsn: string | null }>(
          "SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn",
        ),
        checkTimeoutMs,
      );
      const row = res.rows[0];
      const replayed = row?.standby ? parseLsn(row.lsn) : null;
      if (replayed === null) return setState(m, "down", null);
      m.replayed = replayed;
      const lag = lagOf(replayed, now);
      setState(m, lag > opts.maxLagMs ? "lagging" : "serving", lag);
    } catch {
      setState(m, "down", null);
    }
  };

  let checking: Promise<void> | null = null;
  const check = () =>
    (checking ??= (async () => {
      try {
        const now = Date.now();
        try {
          samples.push({ at: now, lsn: await withTimeout(readPrimaryLsn(), checkTimeoutMs) });
        } catch {
          // the primary did not answer: the replicas' lag is judged on what was sampled before
        }
        while (samples.length > 1 && samples[0]!.at < now - keepMs) samples.shift();
        await Promise.all(members.map((m) => checkOne(m, Date.now())));
      } finally {
        checking = null;
      }
    })());

  let turn = 0;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    timer = setTimeout(() => void check().finally(() => timer && schedule()), checkMs);
    timer.unref();
  };

  // positions read after a caller's commit: one read in flight, and one queued for those who asked after it started
  let inFlight: Promise<bigint> | null = null;
  let queued: Promise<bigint> | null = null;
  const readNow = (): Promise<bigint> => {
    const p: Promise<bigint> = readPrimaryLsn().finally(() => {
      if (inFlight === p) inFlight = null;
    });
    inFlight = p;
    return p;
  };

  await check();
  schedule();
  return {
    size: members.length,
    pick(after) {
      for (let i = 0; i < members.length; i++) {
        const m = members[(turn + i) % members.length]!;
        if (m.state === "serving" && (after === null || (m.replayed !== null && m.replayed >= after))) {
          turn = (turn + i + 1) % members.length;
          return m;
        }
      }
      return null;
    },
    status: () => members.map((m) => ({ name: m.name, state: m.state, lagMs: m.lagMs })),
    positionAfterWrite() {
      if (!inFlight) return readNow();
      queued ??= inFlight
        .then(
          () => undefined,
          () => undefined,
        )
        .then(() => {
          queued = null;
          return readNow();
        });
      return queued;
    },
    check,
    async close() {
      clearTimeout(timer);
      timer = undefined;
      await checking?.catch(() => undefined);
      for (const m of members) {
        await m.prisma.$disconnect().catch(() => undefined);
        await m.pool.end().catch(() => undefined);
        await m.raw.end().catch(() => undefined);
      }
    },
  };
}
