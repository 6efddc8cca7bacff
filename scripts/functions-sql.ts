// The database functions' one source is prisma/sql/*.sql (CREATE OR REPLACE FUNCTION, each file in
// the order a write flows). The migrations replay it: this script compares the two as PostgreSQL
// prints them (pg_get_functiondef, after replaying every migration into an in-memory PGlite and
// after loading the sources into it; scripts/db-functions/catalog.ts).
//
//   npm run functions:migrate -- <name>   writes prisma/migrations/<UTC yyyymmddhhmmss>_<name>/migration.sql
//                                         with exactly the functions the sources changed, added or dropped
//                                         (checked by replaying it), then src/generated/db-functions.ts
//   npm run functions:print               writes src/generated/db-functions.ts (the signatures TypeScript
//                                         calls the functions with) and says what still needs a migration
//   npm run functions:check               (in `npm run check`) fails when the sources and the migrations
//                                         disagree, or the generated signatures are stale
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readMigrationList } from "../src/db/schema-engine.js";
import { migrationsDir, repoRoot } from "../src/db/paths.js";
import { loadSources, migratedDatabase, readFunctions, readSources } from "./db-functions/catalog.js";
import { planMigration, type Change } from "./db-functions/plan.js";
import { GENERATED_PATH, typescriptOf } from "./db-functions/typescript.js";

const argv = process.argv.slice(2);
const mode = argv.includes("--check") ? "check" : argv.includes("--migrate") ? "migrate" : "print";
const generatedFile = join(repoRoot, GENERATED_PATH);

const sources = await readSources();
const migrations = await readMigrationList(migrationsDir);
const db = await migratedDatabase(migrations);
const live = await readFunctions(db);
await loadSources(db, live, sources);
const wanted = await readFunctions(db);
await db.close();
const defined = sources.flatMap((s) => s.statements).length;
if (wanted.length !== defined) fail(`prisma/sql defines ${defined - wanted.length} function(s) twice: one definition each.`);

const plan = planMigration(live, wanted);
const typescript = typescriptOf(wanted);
const describe = (c: Change) =>
  `  ${c.key}: ${c.kind === "new" ? "only in prisma/sql" : c.kind === "dropped" ? "only in the migrations" : "not the same"}`;

if (mode === "check") {
  if (plan.changes.length) {
    fail(
      `prisma/sql and the migrations disagree on:\n${plan.changes.map(describe).join("\n")}\n` +
        "A source edited: `npm run functions:migrate -- <name>` writes its migration. " +
        "A migration changing a function: the same definition belongs in prisma/sql.",
    );
  }
  if ((await readFile(generatedFile, "utf8").catch(() => "")) !== typescript) {
    fail(`${GENERATED_PATH} is not what prisma/sql defines: run \`npm run functions:print\` and commit it.`);
  }
  console.log(`prisma/sql and the migrations agree (${wanted.length} functions); ${GENERATED_PATH} is up to date.`);
} else if (mode === "migrate") {
  const name = (argv[argv.indexOf("--migrate") + 1] ?? "").replace(/[^a-z0-9_]+/gi, "_").toLowerCase();
  if (!name) fail("Usage: npm run functions:migrate -- <name>");
  if (!plan.changes.length) {
    console.log("The migrations already define what prisma/sql does: nothing to migrate.");
  } else {
    const dir = join(migrationsDir, `${nextStamp(migrations.migrationDirectories.map((d) => d.path))}_${name}`);
    await mkdir(dir, { recursive: true });
    const header = `-- Database functions, written by \`npm run functions:migrate\` from prisma/sql (their source):\n${plan.changes
      .map((c) => `-- ${c.key}: ${c.kind}\n`)
      .join("")}`;
    await writeFile(join(dir, "migration.sql"), `${header}\n${plan.statements.join("\n\n")}\n`);
    const replayed = await migratedDatabase(await readMigrationList(migrationsDir)).catch(async (err: Error) => {
      await rm(dir, { recursive: true });
      return fail(`The migration did not apply (removed): ${err.message}`);
    });
    const after = await readFunctions(replayed);
    await replayed.close();
    const left = planMigration(after, wanted).changes;
    if (left.length) {
      await rm(dir, { recursive: true });
      fail(`After the migration the functions still differ (removed):\n${left.map(describe).join("\n")}`);
    }
    console.log(`Wrote ${dir}/migration.sql:\n${plan.changes.map((c) => `  ${c.key}: ${c.kind}`).join("\n")}`);
  }
  await writeFile(generatedFile, typescript);
  console.log(`Wrote ${GENERATED_PATH}.`);
} else {
  await writeFile(generatedFile, typescript);
  console.log(`Wrote ${GENERATED_PATH} (${wanted.length} functions in prisma/sql).`);
  if (plan.changes.length) {
    console.log(`Not yet in a migration:\n${plan.changes.map(describe).join("\n")}\nRun \`npm run functions:migrate -- <name>\`.`);
  }
}

/** Now as yyyymmddhhmmss (UTC), or a second after the last migration's when that is later. */
function nextStamp(existing: string[]): string {
  const last = existing
    .map((p) => /^(\d{14})_/.exec(p)?.[1])
    .filter((s): s is string => !!s)
    .sort()
    .at(-1);
  const lastTime = last
    ? Date.UTC(+last.slice(0, 4), +last.slice(4, 6) - 1, +last.slice(6, 8), +last.slice(8, 10), +last.slice(10, 12), +last.slice(12, 14))
    : 0;
  return new Date(Math.max(Date.now(), lastTime + 1000)).toISOString().replace(/\D/g, "").slice(0, 14);
}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}
