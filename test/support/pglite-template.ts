// A DATA_DIR whose embedded database PGlite has already made: a copy of a database folder that PGlite
// made (its initdb) once, kept in the system's temp folder for each PGlite version. PGlite on an empty
// folder runs initdb inside WebAssembly, about 7 s of CPU; the copy takes a fraction of a second. The
// server still opens it and applies every migration itself. For tests of what runs on the embedded
// database, not of making it: test/embedded.test.ts starts from an empty DATA_DIR, as an install does.
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PGlite } from "@electric-sql/pglite";

/** the installed PGlite's version (its package.json is not exported, so found from its entry) */
function pgliteVersion(): string {
  let dir = dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
  while (!existsSync(join(dir, "package.json"))) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
}

/** A new temp folder (`prefix`…) holding `pgdata`, a database PGlite made; remove it when done. */
export async function pgliteDataDir(prefix: string): Promise<string> {
  const template = join(tmpdir(), `engagement-test-pglite-${pgliteVersion()}`);
  if (!existsSync(join(template, "pgdata", "PG_VERSION"))) {
    const making = mkdtempSync(`${template}-making-`);
    const pglite = new PGlite(join(making, "pgdata"));
    await pglite.waitReady;
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
