// A DATA_DIR whose embedded database PGlite has already made and migrated: a copy of a database folder
// that PGlite made (its initdb) and the migrations were applied to once, kept in the system's temp
// folder for each PGlite version and set of migrations. PGlite on an empty folder runs initdb inside
// WebAssembly, about 7 s of CPU, and the migrations several more; the copy takes a fraction of a
// second. The server still opens it and checks its migrations (finding none pending). For tests of
// what runs on the embedded database, not of making it: test/embedded.test.ts starts from an empty
// DATA_DIR, as an install does.
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { applyMigrationsWith } from "../../src/db/migrate.js";
import { migrationsDir } from "../../src/db/paths.js";

/** the installed PGlite's version (its package.json is not exported, so found from its entry) */
function pgliteVersion(): string {
  let dir = dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
  while (!existsSync(join(dir, "package.json"))) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
}

/** a digest of the committed migrations (each folder's name and script): a new migration, a new template */
function migrationsDigest(): string {
  const hash = createHash("sha256");
  for (const name of readdirSync(migrationsDir).sort()) {
    const script = join(migrationsDir, name, "migration.sql");
    if (existsSync(script)) hash.update(name).update("\0").update(readFileSync(script)).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/** A new temp folder (`prefix`…) holding `pgdata`, a migrated database PGlite made; remove it when done. */
export async function pgliteDataDir(prefix: string): Promise<string> {
  const template = join(tmpdir(), `engagement-test-pglite-${pgliteVersion()}-${migrationsDigest()}`);
  if (!existsSync(join(template, "pgdata", "PG_VERSION"))) {
    const making = mkdtempSync(`${template}-making-`);
    const pglite = new PGlite(join(making, "pgdata"));
    await pglite.waitReady;
    await applyMigrationsWith(new PrismaPGlite(pglite));
    await pglite.close();
    try {
      renameSync(making, template); // whole or not at all
    } catch {
      rmSync(making, { recursive: true, force: true }); // another run made it meanwhile
    }
  }
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(join(template, "pgdata"), join(dataDir, "pgdata"), { recursive: true });
  return dataDir;
}
