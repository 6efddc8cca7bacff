// The pooler project's global setup (vitest.config.ts): the run's database as the default project
// makes it (test/support/global-setup.ts: created and migrated directly, dropped at the end), then a
// transaction-mode PgBouncer of the run's own in front of it (test/support/pgbouncer.ts). Tests get
// the pooler as `databaseUrl` and the database itself as `databaseDirectUrl`, so startServer's
// testEnv runs every server with DATABASE_POOLER=transaction through it. Tests that freeze a pooler
// start their own: this one is shared by the files running at once. Runs in vitest's main process.
import type { TestProject } from "vitest/node";
import databaseSetup from "./global-setup.js";
import { startPgBouncer, type PgBouncer } from "./pgbouncer.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** the pooler project's PgBouncer admin console (SHOW POOLS, SHOW SERVERS) */
    poolerAdminUrl?: string;
  }
}

export default async function setup(project: TestProject) {
  const dropDatabase = await databaseSetup(project);
  const { databaseUrl, adminDatabaseUrl } = project.getProvidedContext();
  let pooler: PgBouncer;
  try {
    pooler = await startPgBouncer({ serverUrl: adminDatabaseUrl });
  } catch (e) {
    await dropDatabase();
    throw e;
  }
  project.provide("databaseDirectUrl", databaseUrl);
  project.provide("databaseUrl", pooler.urlFor(databaseUrl));
  project.provide("poolerAdminUrl", pooler.adminUrl);
  return async () => {
    await pooler.stop();
    await dropDatabase();
  };
}
