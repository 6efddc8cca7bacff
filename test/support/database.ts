// A database of a test file's own, for tests whose workers or retention passes run on a far-future
// clock: on the shared run database such a worker would treat every other file's job leases as
// expired, and such a retention pass would delete every other file's events.
import pg from "pg";
import { inject } from "vitest";

/**
 * A new migrated database: PostgreSQL's file copy of the run's template (test/support/global-setup.ts:
 * the run's database as migrated, never connected to), not a run of every migration; `drop` removes
 * it (call it after the servers using it have stopped). `env` points a server at it as testEnv points
 * one at the run's: through the project's pooler when it has one (the pooler serves every database
 * of the server), the database itself otherwise.
 */
export async function isolatedDatabase(label: string): Promise<{ url: string; env: Record<string, string>; drop(): Promise<void> }> {
  const admin = inject("adminDatabaseUrl");
  const name = `eng_test_${label}_${Date.now()}_${process.pid}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name} TEMPLATE ${inject("templateDatabase")}`);
  await c.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const viaPooler = inject("databaseDirectUrl") !== undefined ? new URL(inject("databaseUrl")) : undefined;
  if (viaPooler) viaPooler.pathname = `/${name}`;
  return {
    url: url.toString(),
    env: viaPooler ? { DATABASE_URL: viaPooler.toString(), DATABASE_DIRECT_URL: url.toString() } : { DATABASE_URL: url.toString() },
    async drop() {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}
