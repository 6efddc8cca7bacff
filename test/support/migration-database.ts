// A database of a test file's own, migrated as the release before a migration left it: the tests of
// what a migration does to the rows an installation has (test/index-diet-migration.test.ts,
// test/post-flags.test.ts). Made before the file's tests, dropped after them.
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import { migratePostgres } from "../../src/db/migrate.js";

export interface MigrationDatabase {
  /** its URL (straight to PostgreSQL), for migratePostgres(url) to take it to this release */
  url: string;
  /** a client connected to it, from the file's first test on */
  db(): pg.Client;
}

/** Registers the file's hooks: the database named after `tag`, migrated up to (not including) `migration`. */
export function databaseBefore(tag: string, migration: string): MigrationDatabase {
  const admin = inject("adminDatabaseUrl");
  const name = `eng_test_${tag}_${Date.now()}_${process.pid}`;
  const url = Object.assign(new URL(admin), { pathname: `/${name}` }).toString();
  const adminQuery = async (sql: string) => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  let client: pg.Client | undefined;
  beforeAll(async () => {
    await adminQuery(`CREATE DATABASE ${name}`);
    await migratePostgres(url, { before: migration });
    client = new pg.Client({ connectionString: url });
    await client.connect();
  }, 120_000);
  afterAll(async () => {
    await client?.end();
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
  return {
    url,
    db: () => {
      if (!client) throw new Error("the migration database is connected in beforeAll");
      return client;
    },
  };
}
