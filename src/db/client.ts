// One factory for the Prisma client: PostgreSQL through adapter-pg when DATABASE_URL is set, else
// the embedded PGlite database in DATA_DIR. Same schema, same migrations, same code paths.
// DATABASE_URL may be a transaction-mode pooler (`pooler: "transaction"`): then its connections use
// src/db/pooler.ts (no named statements, no startup parameters, the statement timeout per
// transaction), and what needs a session or the server itself — creating the database, migrations
// under their advisory lock — goes to `directUrl`.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PGlite } from "@electric-sql/pglite";
import { pgliteExtensions } from "./pglite-extensions.js";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../generated/prisma/client.js";
import { applyMigrationsWith, migratePostgres, type MigrationResult } from "./migrate.js";
import { acquireDataDirLockWaiting, type LockRole } from "./data-dir-lock.js";
import { ensureDatabase, probeDatabase } from "./ensure-database.js";
import { poolerClient } from "./pooler.js";
import { pgliteSql, pgSql, type Sql } from "./sql.js";
import { StartupError } from "../lib/startup-error.js";
import { fastPgTypes } from "./timestamps.js";
import { NO_REPLICAS, openReplicaSet, type ReplicaSet, type ReplicaSetOptions } from "./replicas/replica-set.js";

export type Prisma = PrismaClient;

/** how long a process waits for a CLI command holding the embedded data folder */
const CLI_LOCK_WAIT_MS = 60_000;

export interface Database {
  prisma: PrismaClient;
  /** plain SQL on the same connections (hot paths) */
  sql: Sql;
  kind: "postgres" | "embedded";
  /** Applies pending migrations. */
  migrate(): Promise<MigrationResult>;
  /** Connections of the pool (PostgreSQL only), for the metrics. */
  poolStats(): { total: number; idle: number; waiting: number } | null;
  /** the read replicas (DATABASE_REPLICA_URLS; none when embedded): src/db/replicas/replica-set.ts */
  replicas: ReplicaSet;
  /** Cheap liveness query for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** `transaction`: databaseUrl is a transaction-mode pooler (PgBouncer, RDS Proxy, Supavisor) */
  pooler?: "none" | "transaction";
  /** the database itself, for what needs a session (migrations, session advisory locks); required with a pooler */
  directUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** statement, connect and pool-acquire timeout (ms): a stalled database fails fast, never hangs */
  timeoutMs?: number;
  /** the planner's random_page_cost for the service's statements (undefined: the server's own) */
  randomPageCost?: number | undefined;
  /** an idle pooled connection failed (the database restarted, or terminated it): told, never thrown */
  onIdleError?: (err: Error) => void;
  /** embedded: who holds the data folder (a server waits for a CLI command holding it; see data-dir-lock.ts) */
  lockRole?: LockRole;
  /** DATABASE_URL named a database that did not exist, and it was created */
  onCreated?: (name: string) => void;
  /** streaming replicas of the primary for the read routes (DATABASE_REPLICA_URLS), their lag limit and what they report */
  replicas?: Pick<ReplicaSetOptions, "urls" | "maxLagMs" | "checkMs" | "onFallback" | "onStateChange">;
}

/**
 * A connection's URL and startup `options` with one more `-c name=value`, added to those the URL's
 * `options` parameter (or else PGOPTIONS) gives: pg lets the URL's parameter win over its own
 * `options`, so it moves out of the URL into the merged one.
 */
function withSettings(url: string, settings: [name: string, value: string | number][]): { connectionString: string; options: string } {
  const u = new URL(url);
  const given = u.searchParams.get("options") ?? process.env.PGOPTIONS ?? "";
  u.searchParams.delete("options");
  const added = settings.map(([name, value]) => `-c ${name}=${value}`);
  return { connectionString: u.toString(), options: [given.trim(), ...added].filter(Boolean).join(" ") };
}

/**
 * A named statement (src/db/sql.ts: the hot paths) is planned once per connection, as its name
 * promises: with PostgreSQL's default (`auto`) a list statement whose table had grown by a burst of
 * writes was re-planned on every execution (1.1–1.2 ms of planning each, three times its execution:
 * bench/README.md, "The lists after writes"). Unnamed statements are planned each time whatever this says.
 */
const PLAN_CACHE_MODE = "force_generic_plan";

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const url = opts.databaseUrl;
    const timeoutMs = opts.timeoutMs ?? 4_000;
    const pooled = opts.pooler === "transaction";
    if (pooled && !opts.directUrl) throw new StartupError("DATABASE_POOLER=transaction needs DATABASE_DIRECT_URL, the database itself.");
    const directUrl = pooled && opts.directUrl ? opts.directUrl : url;
    // a database that does not exist yet is created (or one line says how): src/db/ensure-database.ts
    const created = await ensureDatabase(directUrl, timeoutMs, pooled ? "DATABASE_DIRECT_URL" : "DATABASE_URL");
    if (created === "created") opts.onCreated?.(new URL(directUrl).pathname.slice(1));
    if (pooled) await probeDatabase(url, timeoutMs, "DATABASE_URL");
    // One pool for Prisma and the plain-SQL hot paths; each replica's is made alike (src/db/replicas/).
    const poolConfig = (connectionString: string, connectTimeoutMs = timeoutMs): pg.PoolConfig => ({
      connectionString,
      max: opts.poolSize ?? 10,
      // waiting for a connection (new or from the pool), then the server's and the client's limits:
      // the server's set at connect, or per transaction through a pooler (src/db/pooler.ts)
      connectionTimeoutMillis: connectTimeoutMs,
      ...(pooled
        ? { Client: poolerClient({ timeoutMs, randomPageCost: opts.randomPageCost }) }
        : {
            statement_timeout: timeoutMs,
            ...withSettings(connectionString, [
              ["plan_cache_mode", PLAN_CACHE_MODE],
              ...(opts.randomPageCost === undefined ? [] : [["random_page_cost", opts.randomPageCost] as [string, number]]),
            ]),
          }),
      query_timeout: timeoutMs + 500,
      keepAlive: true,
      // the plain-SQL hot paths (Prisma passes its own parsers with every query)
      types: fastPgTypes,
    });
    const pool = new pg.Pool(poolConfig(url));
    // Without a listener an idle connection's error (a restart, pg_terminate_backend) would be an
    // unhandled 'error' event and end the process; the pool drops that connection by itself.
    pool.on("error", (err) => opts.onIdleError?.(err));
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
    // a replica that does not answer is given up on quickly: the read then runs on the primary
    const replicas = await openReplicaSet({
      urls: [],
      maxLagMs: 1_000,
      ...opts.replicas,
      primary: pool,
      poolConfig: (replicaUrl) => poolConfig(replicaUrl, Math.min(timeoutMs, 1_000)),
      named: !pooled,
    });
    return {
      prisma,
      replicas,
      sql: pgSql(pool, { named: !pooled }),
      poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      kind: "postgres",
      migrate: () => migratePostgres(directUrl),
      ping: async () => {
        await prisma.$queryRaw`SELECT 1`;
      },
      close: async () => {
        await replicas.close();
        await prisma.$disconnect();
        await pool.end();
      },
    };
  }
  mkdirSync(opts.dataDir, { recursive: true });
  const releaseLock = await acquireDataDirLockWaiting(opts.dataDir, opts.lockRole ?? "server", CLI_LOCK_WAIT_MS);
  try {
    const pglite = new PGlite(join(opts.dataDir, "pgdata"), { extensions: pgliteExtensions });
    await pglite.waitReady;
    if (opts.randomPageCost !== undefined) await pglite.exec(`SET random_page_cost = ${opts.randomPageCost}`);
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
    return {
      prisma,
      replicas: NO_REPLICAS,
      sql: pgliteSql(pglite),
      poolStats: () => null,
      kind: "embedded",
      migrate: () => applyMigrationsWith(new PrismaPGlite(pglite)),
      ping: async () => {
        await prisma.$queryRaw`SELECT 1`;
      },
      close: async () => {
        await prisma.$disconnect();
        await pglite.close();
        releaseLock();
      },
    };
  } catch (err) {
    releaseLock();
    throw err;
  }
}
