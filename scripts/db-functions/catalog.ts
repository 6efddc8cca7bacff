// The database functions as PostgreSQL holds them: what the migrations define (replayed into an
// in-memory PGlite) and what the sources in prisma/sql define (run into the same database after
// dropping every function the migrations made). Both are read from the catalog the same way, so
// comparing them compares PostgreSQL's own normalised text (pg_get_functiondef), not formatting.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pgliteExtensions } from "../../src/db/pglite-extensions.js";
import { PrismaPGlite } from "pglite-prisma-adapter";
import type { MigrationList } from "@prisma/schema-engine-wasm/schema_engine_bg";
import { emptySchemaFilter, withSchemaEngine } from "../../src/db/schema-engine.js";
import { repoRoot } from "../../src/db/paths.js";
import { splitStatements } from "./split.js";

export const sourcesDir = join(repoRoot, "prisma", "sql");

/** One function as the catalog describes it. */
export interface DbFunction {
  /** name(identity arguments): what tells two functions apart */
  key: string;
  name: string;
  identity: string;
  /** pg_get_function_arguments: the names, types and defaults CREATE OR REPLACE may not change */
  arguments: string;
  result: string;
  /** pg_get_functiondef: the whole definition, CREATE OR REPLACE FUNCTION … */
  def: string;
  language: string;
  body: string;
  argNames: string[];
  argTypes: string[];
  /** per argument: a table's row type (such a function is called only from SQL) */
  argIsRow: boolean[];
}

const CATALOG = `
  SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS identity,
         pg_get_function_arguments(p.oid) AS arguments, pg_get_function_result(p.oid) AS result,
         pg_get_functiondef(p.oid) AS def, l.lanname AS language, p.prosrc AS body, p.prokind AS kind,
         p.proargmodes IS NOT NULL AS "hasModes", COALESCE(p.proargnames, ARRAY[]::text[]) AS "argNames",
         ARRAY(SELECT format_type(a.t, NULL) FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, i) ORDER BY a.i) AS "argTypes",
         ARRAY(SELECT y.typrelid <> 0 FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, i) JOIN pg_type y ON y.oid = a.t
                ORDER BY a.i) AS "argIsRow"
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
   WHERE n.nspname = 'public'
     -- not an extension's own functions (unaccent: src/db/pglite-extensions.ts)
     AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e')
   ORDER BY p.oid`;

/** The functions of the database, in the order they were created. */
export async function readFunctions(db: PGlite): Promise<DbFunction[]> {
  const { rows } = await db.query<Omit<DbFunction, "key" | "def"> & { def: string; kind: string; hasModes: boolean }>(CATALOG);
  return rows.map(({ kind, hasModes, ...f }) => {
    if (kind !== "f" || hasModes) throw new Error(`${f.name}: only plain functions with input arguments are supported`);
    return { ...f, key: `${f.name}(${f.identity})`, def: `${f.def.trim()};` };
  });
}

/** A new in-memory database with every migration of `migrations` applied. */
export async function migratedDatabase(migrations: MigrationList): Promise<PGlite> {
  const db = new PGlite({ extensions: pgliteExtensions });
  await withSchemaEngine(new PrismaPGlite(db), (engine) =>
    engine.applyMigrations({ migrationsList: migrations, filters: emptySchemaFilter }),
  );
  return db;
}

/** The source files, in their order (their names), each split into its statements. */
export async function readSources(dir = sourcesDir): Promise<{ file: string; statements: string[] }[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
  return Promise.all(
    files.map(async (file) => {
      const statements = splitStatements(await readFile(join(dir, file), "utf8"));
      for (const s of statements) {
        if (!/^CREATE\s+(OR\s+REPLACE\s+)?FUNCTION\s/i.test(s)) {
          throw new Error(`prisma/sql/${file}: only CREATE FUNCTION statements belong here, not: ${s.slice(0, 80)}`);
        }
      }
      return { file, statements };
    }),
  );
}

/**
 * Replaces the database's functions with the sources'. Bodies are not checked against each other
 * while loading (a file is in the order a write flows, not in the order the functions need each other).
 */
export async function loadSources(db: PGlite, existing: DbFunction[], sources: { file: string; statements: string[] }[]): Promise<void> {
  for (const f of existing) {
    try {
      await db.exec(`DROP FUNCTION public.${f.name}(${f.identity})`);
    } catch (err) {
      // a function a generated column or an index uses cannot be dropped without them; the source's
      // CREATE OR REPLACE replaces it (so removing such a function from prisma/sql goes unnoticed here:
      // its migration drops the column first, by hand)
      if ((err as { code?: string }).code !== "2BP01") throw err;
    }
  }
  await db.exec("SET check_function_bodies = off");
  for (const { file, statements } of sources) {
    for (const s of statements) {
      try {
        await db.exec(s);
      } catch (err) {
        const name = /FUNCTION\s+([\w.]+)/i.exec(s)?.[1] ?? "?";
        throw new Error(`prisma/sql/${file}, ${name}: ${(err as Error).message}`);
      }
    }
  }
  await db.exec("RESET check_function_bodies");
}
