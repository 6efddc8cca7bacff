// npm run migration:create -- <name>
// Replays the committed migrations into an in-memory PGlite (the shadow database), diffs it against
// prisma/schema.prisma with the WASM schema engine and writes the next migration folder.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pgliteExtensions } from "../src/db/pglite-extensions.js";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { emptySchemaFilter, readMigrationList, readSchemaFiles, withSchemaEngine } from "../src/db/schema-engine.js";
import { migrationsDir, repoRoot, schemaPath } from "../src/db/paths.js";

const name = (process.argv[2] ?? "change").replace(/[^a-z0-9_]+/gi, "_").toLowerCase();
const shadow = new PGlite({ extensions: pgliteExtensions });
const migrations = await readMigrationList(migrationsDir);
const files = await readSchemaFiles(schemaPath);
const sql = await withSchemaEngine(new PrismaPGlite(shadow), async (engine) => {
  if (migrations.migrationDirectories.length) {
    await engine.applyMigrations({ migrationsList: migrations, filters: emptySchemaFilter });
  }
  const diff = await engine.diff({
    from: { tag: "schemaDatasource", files, configDir: repoRoot },
    to: { tag: "schemaDatamodel", files },
    script: true,
    exitCode: true,
    filters: emptySchemaFilter,
  });
  return diff.exitCode === 0 ? undefined : diff.stdout;
});
await shadow.close();
if (!sql) {
  console.log("No schema changes.");
} else {
  const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  const dir = join(migrationsDir, `${stamp}_${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "migration.sql"), sql);
  await writeFile(join(migrationsDir, "migration_lock.toml"), 'provider = "postgresql"\n');
  console.log(`Wrote ${dir}/migration.sql`);
}
