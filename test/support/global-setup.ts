// One PostgreSQL database per test run, migrated once, dropped at the end. Tests share it and
// isolate themselves by tenant (every test makes its own tenants). A copy of it as migrated, never
// connected to, is the template of the databases test files make for themselves
// (test/support/database.ts). The server is built once (`npm run build`, what `npm start` runs
// first) for the tests that start it as a process. Every process the run starts carries the run's
// mark; at the end, one still running (a test's own PostgreSQL left paused, a server a failed test
// never stopped) is listed loudly, ended, and fails the run (test/support/leftover-processes.ts).
import { spawn } from "node:child_process";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migratePostgres } from "../../src/db/migrate.js";
import { NODE_FLAGS } from "./process.js";
import { pgliteTemplatePath } from "./pglite-template.js";
import { endLeftovers, RUN_MARK } from "./leftover-processes.js";
import { dropIsolatedDatabases } from "./database.js";
import { prepareAtprotoNative } from "./atproto-native.js";

const ADMIN_URL = process.env.TEST_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    adminDatabaseUrl: string;
    /** set by the pooler project (test/support/pooler-setup.ts): databaseUrl is then a transaction-mode PgBouncer, this the database itself */
    databaseDirectUrl?: string;
    /** a migrated database nobody connects to: `CREATE DATABASE … TEMPLATE` it for a migrated database of one's own */
    templateDatabase: string;
    /** set by the cluster project (test/support/cluster-setup.ts): REDIS_CLUSTER_NODES of a 3-master cluster */
    redisClusterNodes?: string;
  }
}

/** `npm run <script>` in a child process, so it runs while the database is made. */
function npmRun(script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "-s", script], { stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`npm run ${script} exited with ${code}`))));
  });
}

/** The newest modification time of the files under `dir` (0 for none). */
function newestUnder(dir: string): number {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * The server (`npm run build`, what `npm start` runs first), the console when its sources changed
 * after its last build (`npm install` builds it; an edit of console/src or of the settings' words it
 * is generated from would otherwise be tested against the old build), and the Bluesky network's
 * native module when it does not load (test/support/atproto-native.ts).
 */
function build(): Promise<void> {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const consoleBuilt = join(root, "dist", "console", "index.html");
  const stale =
    !existsSync(consoleBuilt) ||
    Math.max(newestUnder(join(root, "console", "src")), newestUnder(join(root, "src", "tenancy", "settings"))) >
      statSync(consoleBuilt).mtimeMs;
  // the native module after the builds, not beside them: `npm rebuild` links package binaries again,
  // and a build that runs one (esbuild, vite) at that moment fails
  return Promise.all([npmRun("build"), stale ? npmRun("build:console") : undefined])
    .then(() => prepareAtprotoNative().catch(() => prepareAtprotoNative())) // once more: npm's download may have failed
    .catch((err: unknown) => {
      // said here in full: vitest's own report of a set-up's failure can fail to print it
      console.error("the tests' set-up failed:", err);
      throw err;
    });
}

export default async function setup(project: TestProject) {
  // inherited by every process started from here on: the workers and all they start
  const runId = `${process.pid}-${Date.now()}`;
  process.env[RUN_MARK] = runId;
  // once per run: projects that share this setup (npm run test:engines, CI's Node 24 files) share one build
  const key = Symbol.for("engagement.test-build");
  const built = ((globalThis as Record<symbol, unknown>)[key] ??= build()) as Promise<void>;
  built.catch(() => undefined); // awaited below; not unhandled if making the database fails first
  const name = `eng_test_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  await migratePostgres(url.toString());
  // a file copy of the migrated database, for test/support/database.ts: no migrations run per copy
  const template = `${name}_template`;
  const copier = new pg.Client({ connectionString: ADMIN_URL });
  await copier.connect();
  await copier.query(`CREATE DATABASE ${template} TEMPLATE ${name}`);
  await copier.end();
  await built;
  // a missing PGlite template is made in the background (test/support/pglite-template-make.mjs)
  const pgliteTemplate = pgliteTemplatePath();
  const maker = existsSync(join(pgliteTemplate, "pgdata", "PG_VERSION"))
    ? undefined
    : spawn(process.execPath, [...NODE_FLAGS, fileURLToPath(new URL("pglite-template-make.mjs", import.meta.url)), pgliteTemplate], {
        stdio: "inherit",
      });
  project.provide("databaseUrl", url.toString());
  project.provide("adminDatabaseUrl", ADMIN_URL);
  project.provide("templateDatabase", template);
  project.provide("redisUrl", process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379");

  return async () => {
    // a run that ended before its template was made (one file, say): the half-made folder goes
    if (maker && maker.exitCode === null && maker.signalCode === null) {
      const exited = new Promise((resolve) => maker.once("exit", resolve));
      maker.kill("SIGKILL");
      await exited;
      const making = `${basename(pgliteTemplate)}-making-${maker.pid}-`;
      for (const name of readdirSync(tmpdir())) if (name.startsWith(making)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    await dropIsolatedDatabases(c, template);
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await c.end();
    const left = await endLeftovers(runId, 5_000);
    if (left.length) {
      const list = left.map((p) => `  pid ${p.pid} (${p.state === "T" ? "stopped" : p.state}): ${p.command}`).join("\n");
      console.error(`\n!!! The test run left ${left.length} process(es) running; they are killed now:\n${list}\n`);
      process.exitCode = 1; // vitest reports an error thrown here but would still exit 0
      throw new Error(`the test run left ${left.length} process(es) running (listed above)`);
    }
  };
}
