// A child process of the run's global setup (test/support/global-setup.ts): makes the PGlite template
// folder that test/support/pglite-template.ts copies, at the path it is given, when there is none.
// PGlite's initdb and the migrations run under the tests' NODE_FLAGS (test/support/process.ts), in
// the background while the first test files run, once per run rather than in the first worker that
// needs it (whose file waits meanwhile). The migrations as built by the global setup (dist/).
//   argv: <template folder>
import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import process from "node:process";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { applyMigrationsWith } from "../../dist/db/migrate.js";
import { pgliteExtensions } from "../../dist/db/pglite-extensions.js";

const template = process.argv[2];
if (!existsSync(join(template, "pgdata", "PG_VERSION"))) {
  const making = mkdtempSync(`${template}-making-${process.pid}-`);
  const pglite = new PGlite(join(making, "pgdata"), { extensions: pgliteExtensions });
  await pglite.waitReady;
  await applyMigrationsWith(new PrismaPGlite(pglite));
  await pglite.close();
  try {
    renameSync(making, template); // whole or not at all
  } catch {
    rmSync(making, { recursive: true, force: true }); // another run made it meanwhile
  }
}
// done: nothing left to wait for (the process would otherwise linger some seconds)
process.exit(0);
