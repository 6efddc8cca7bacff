// Applies the committed migrations (prisma/migrations) with the WASM schema engine. Used at start-up,
// by `engagement migrate` and by the test setup. Keeps Prisma's own _prisma_migrations table, so
// `prisma migrate status/deploy` stay compatible wherever the native binary exists.
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { emptySchemaFilter, readMigrationList, withSchemaEngine } from "./schema-engine.js";
import { migrationsDir } from "./paths.js";
import {
  EVENT_LOG_PARTITION_MIGRATION,
  needsOnlinePartitioning,
  partitionEventLogOnline,
  type OnlinePartitioningOptions,
} from "./event-log-partitioning.js";

/** Our own advisory lock (not the engine's) so concurrently starting instances migrate one at a time. */
const MIGRATION_LOCK_ID = 4_207_311_877;

export interface MigrationResult {
  applied: string[];
}

export async function applyMigrationsWith(
  adapter: SqlMigrationAwareDriverAdapterFactory,
  /** only the migrations before this one (src/db/event-log-partitioning.ts runs between) */
  before?: string,
): Promise<MigrationResult> {
  const all = await readMigrationList(migrationsDir);
  const migrationsList = before
    ? {
        ...all,
        migrationDirectories: all.migrationDirectories.filter(
          (d) => d.path < before || (before.startsWith("!") && d.path !== before.slice(1)),
        ),
      }
    : all;
  const out = await withSchemaEngine(adapter, (engine) => engine.applyMigrations({ migrationsList, filters: emptySchemaFilter }));
  return { applied: out.appliedMigrationNames };
}

/**
 * adapter-pg runs a migration script by splitting it on every ";", which breaks function bodies
 * ($$ … $$) and comments. Send each script whole instead: PostgreSQL's simple query protocol runs
 * a multi-statement script as it is (PGlite's adapter already does).
 */
function wholeScripts(factory: PrismaPg): SqlMigrationAwareDriverAdapterFactory {
  type Adapter = Awaited<ReturnType<PrismaPg["connect"]>>;
  type Internals = { client: pg.Pool; onError(err: unknown): never };
  const patch = (adapter: Adapter): Adapter => {
    const internals = adapter as unknown as Internals;
    adapter.executeScript = async (script: string) => {
      try {
        await internals.client.query(script);
      } catch (err) {
        internals.onError(err);
      }
    };
    return adapter;
  };
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => patch(await factory.connect()),
    connectToShadowDb: async () => patch(await factory.connectToShadowDb()),
  };
}

/**
 * Applies the pending migrations. A populated event log that is still one table is partitioned online
 * first (src/db/event-log-partitioning.ts): the migrations before the one that partitions it, then the
 * online steps, then the rest.
 */
export async function migratePostgres(
  databaseUrl: string,
  opts: OnlinePartitioningOptions & {
    /** only the migrations before this one (a database as an older release left it: the tests); `!name`: all but that one */
    before?: string;
  } = {},
): Promise<MigrationResult> {
  const lockClient = new pg.Client({ connectionString: databaseUrl });
  await lockClient.connect();
  try {
    await lockClient.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_ID]);
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    try {
      if (opts.before) return await applyMigrationsWith(wholeScripts(new PrismaPg(pool)), opts.before);
      const applied: string[] = [];
      if (await needsOnlinePartitioning(lockClient)) {
        applied.push(...(await applyMigrationsWith(wholeScripts(new PrismaPg(pool)), EVENT_LOG_PARTITION_MIGRATION)).applied);
        await partitionEventLogOnline(lockClient, opts);
      }
      applied.push(...(await applyMigrationsWith(wholeScripts(new PrismaPg(pool)))).applied);
      return { applied };
    } finally {
      await pool.end();
    }
  } finally {
    await lockClient.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_ID]).catch(() => undefined);
    await lockClient.end();
  }
}
