// A database of a test file's own, for tests whose workers or retention passes run on a far-future
// clock: on the shared run database such a worker would treat every other file's job leases as
// expired, and such a retention pass would delete every other file's events.
//
// Each is a file copy of the run's template, and all of a run's are dropped together when the run
// ends (test/support/global-setup.ts), not one by one as their files finish: a database is some 780
// files, and on a file system without a journal (this machine's ext4) the kernel skips every inode
// deleted in the last minutes each time it makes a new one, so each copy made after a drop scanned
// the drops' thousands of inodes — a quarter of PostgreSQL's CPU in a run of `npm test`, read with
// `perf record -a` (docs/CONVENTIONS.md, Tests). `drop()` closes the database to new connections and ends any
// left open; the files go at the end of the run.
import { createHash } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/** The prefix of the isolated databases copied from one run's template: the run's teardown drops them by it. */
export function isolatedPrefix(templateDatabase: string): string {
  return `eng_iso_${createHash("sha256").update(templateDatabase).digest("hex").slice(0, 8)}_`;
}

let made = 0;

/**
 * A new migrated database: PostgreSQL's file copy of the run's template (test/support/global-setup.ts:
 * the run's database as migrated, never connected to), not a run of every migration; `drop` ends its
 * use (call it after the servers using it have stopped). `env` points a server at it as testEnv points
 * one at the run's: through the project's pooler when it has one (the pooler serves every database
 * of the server), the database itself otherwise.
 */
export async function isolatedDatabase(label: string): Promise<{ url: string; env: Record<string, string>; drop(): Promise<void> }> {
  const admin = inject("adminDatabaseUrl");
  const template = inject("templateDatabase");
  // at most 63 characters (PostgreSQL would cut a longer name): 17 + the label + the worker's pid and count
  const name = `${isolatedPrefix(template)}${label.slice(0, 24)}_${process.pid}_${++made}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
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
      await d.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      await d.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]);
      await d.end();
    },
  };
}

/** Drops every database made by isolatedDatabase from this template (the run's teardown). */
export async function dropIsolatedDatabases(c: pg.Client, templateDatabase: string): Promise<void> {
  const { rows } = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, [
    isolatedPrefix(templateDatabase),
  ]);
  for (const { datname } of rows) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
}
