// A database of a test file's own, for tests whose workers run on a far-future clock: on the
// shared run database such a worker would treat every other file's job leases as expired.
import pg from "pg";
import { inject } from "vitest";
import { migratePostgres } from "../../src/db/migrate.js";

/** A new migrated database; `drop` removes it (call it after the servers using it have stopped). */
export async function isolatedDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = inject("adminDatabaseUrl");
  const name = `eng_test_${label}_${Date.now()}_${process.pid}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  await migratePostgres(url.toString());
  return {
    url: url.toString(),
    async drop() {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}
