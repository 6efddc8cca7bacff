// The schema engine runs as WebAssembly behind one JavaScript glue module per process. Two copies of
// src/db/schema-engine.ts in one process (the test runner's projects each load their own global setup
// and what it imports) each loaded an instance into that glue and drove engines at once: the engine
// panicked and took the process with it (CI's Node 24 step, two projects). Both copies now share one
// loaded engine and take turns.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, beforeAll, expect, inject, it } from "vitest";

type EngineFile = typeof import("../src/db/schema-engine.js");

const names = [0, 1].map((i) => `eng_test_engine_${i}_${Date.now()}_${process.pid}`);
const dir = mkdtempSync(join(tmpdir(), "engine-migrations-"));
const admin = () => new pg.Client({ connectionString: inject("adminDatabaseUrl") });
const urlOf = (name: string) => Object.assign(new URL(inject("adminDatabaseUrl")), { pathname: `/${name}` }).toString();

beforeAll(async () => {
  mkdirSync(join(dir, "20260101000000_one"));
  writeFileSync(join(dir, "20260101000000_one", "migration.sql"), "CREATE TABLE engine_check (id integer PRIMARY KEY)");
  writeFileSync(join(dir, "migration_lock.toml"), 'provider = "postgresql"\n');
  const c = admin();
  await c.connect();
  for (const name of names) await c.query(`CREATE DATABASE ${name}`);
  await c.end();
});

afterAll(async () => {
  const c = admin();
  await c.connect();
  for (const name of names) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.end();
  rmSync(dir, { recursive: true, force: true });
});

it("two copies of the engine's file migrate two databases at once in one process", async () => {
  const first = (await import("../src/db/schema-engine.js")) as EngineFile;
  // @ts-expect-error: a query makes the module loader evaluate the file a second time (a second copy)
  const second = (await import("../src/db/schema-engine.js?second-copy")) as EngineFile;
  expect(second.withSchemaEngine).not.toBe(first.withSchemaEngine); // two copies indeed
  const applied = await Promise.all(
    [first, second].map(async (copy, i) => {
      const list = await copy.readMigrationList(dir);
      const out = await copy.withSchemaEngine(new PrismaPg({ connectionString: urlOf(names[i]!) }), (engine) =>
        engine.applyMigrations({ migrationsList: list, filters: copy.emptySchemaFilter }),
      );
      return out.appliedMigrationNames;
    }),
  );
  expect(applied).toEqual([["20260101000000_one"], ["20260101000000_one"]]);
  for (const name of names) {
    const c = new pg.Client({ connectionString: urlOf(name) });
    await c.connect();
    expect((await c.query("SELECT count(*)::int AS n FROM engine_check")).rows[0].n).toBe(0);
    await c.end();
  }
});
