// A DATA_DIR whose embedded database PGlite has already made and migrated: a copy of a database folder
// that PGlite made (its initdb) and the migrations were applied to once, kept in the system's temp
// folder for each PGlite version and set of migrations. PGlite on an empty folder runs initdb inside
// WebAssembly, about 7 s of CPU, and the migrations several more; the copy takes a fraction of a
// second. The server still opens it and checks its migrations (finding none pending). For tests of
// what runs on the embedded database, not of making it: test/embedded.test.ts starts from an empty
// DATA_DIR, as an install does. When the template is missing (a new migration, a fresh machine), the
// run's global setup makes it in a child process while the first files run
// (test/support/pglite-template-make.mjs) and pgliteDataDir waits for it.
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pgliteExtensions } from "../../src/db/pglite-extensions.js";
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

/** Where this PGlite version's template for the committed migrations is (or will be). */
export const pgliteTemplatePath = (): string => join(tmpdir(), `engagement-test-pglite-${pgliteVersion()}-${migrationsDigest()}`);

const hasTemplate = (template: string) => existsSync(join(template, "pgdata", "PG_VERSION"));

/**
 * Whether a live process is making `template` now: its maker's folder, `<template>-making-<pid>-…`
 * (test/support/pglite-template-make.mjs, started by the global setup, or pgliteDataDir below).
 */
function beingMade(template: string): boolean {
  const prefix = `${basename(template)}-making-`;
  return readdirSync(tmpdir()).some((name) => {
    const pid = name.startsWith(prefix) ? Number(name.slice(prefix.length).split("-")[0]) : NaN;
    if (!Number.isInteger(pid) || pid <= 0) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false; // a maker that died: its folder is left over
    }
  });
}

/** A new temp folder (`prefix`…) holding `pgdata`, a migrated database PGlite made; remove it when done. */
export async function pgliteDataDir(prefix: string): Promise<string> {
  const template = pgliteTemplatePath();
  // the global setup's maker (or another worker) is at it: wait for its template rather than make a second
  const deadline = Date.now() + 120_000;
  while (!hasTemplate(template) && beingMade(template) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  if (!hasTemplate(template)) {
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
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(join(template, "pgdata"), join(dataDir, "pgdata"), { recursive: true });
  return dataDir;
}
