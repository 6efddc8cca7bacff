// One PostgreSQL database per test run, migrated once, dropped at the end. Tests share it and
// isolate themselves by tenant (every test makes its own tenants). The server is built once
// (`npm run build`, what `npm start` runs first) for the tests that start it as a process.
import { spawn } from "node:child_process";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migratePostgres } from "../../src/db/migrate.js";

const ADMIN_URL = process.env.TEST_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    adminDatabaseUrl: string;
    /** set by the pooler project (test/support/pooler-setup.ts): databaseUrl is then a transaction-mode PgBouncer, this the database itself */
    databaseDirectUrl?: string;
    /** set by the cluster project (test/support/cluster-setup.ts): REDIS_CLUSTER_NODES of a 3-master cluster */
    redisClusterNodes?: string;
  }
}

/** `npm run build` in a child process, so it runs while the database is made. */
function build(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "-s", "build"], { stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`npm run build exited with ${code}`))));
  });
}

export default async function setup(project: TestProject) {
  const built = build();
  built.catch(() => undefined); // awaited below; not unhandled if making the database fails first
  const name = `eng_test_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  await migratePostgres(url.toString());
  await built;
  project.provide("databaseUrl", url.toString());
  project.provide("adminDatabaseUrl", ADMIN_URL);
  project.provide("redisUrl", process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379");

  return async () => {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
}
