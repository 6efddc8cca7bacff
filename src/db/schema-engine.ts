// Prisma's schema engine as WASM, driven through a driver adapter. Prisma 7's CLI spawns a native
// engine that cannot be downloaded here; this serves PostgreSQL and the embedded PGlite alike.
import { readFile, readdir, stat } from "node:fs/promises";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { bindMigrationAwareSqlAdapterFactory, type SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import type { MigrationList, SchemaEngine } from "@prisma/schema-engine-wasm/schema_engine_bg";

type EngineModule = typeof import("@prisma/schema-engine-wasm/schema_engine_bg");

const require = createRequire(import.meta.url);
// Node's WebAssembly global, typed minimally (lib "DOM" is not loaded in a server project).
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, unknown>) => { exports: Record<string, unknown> };
}
const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/**
 * The loaded engine and the last engine use begun, kept once per process on globalThis: the engine's
 * JavaScript glue is one module for the process, and a second copy of this file (a test runner loads
 * one per project) that loaded a second WASM instance into it, or drove an engine while another ran,
 * made it panic ("Cannot read properties of undefined (reading 'set_message')", the process gone).
 */
interface EngineState {
  module?: Promise<EngineModule>;
  turn: Promise<unknown>;
}
const STATE_KEY = Symbol.for("engagement.schema-engine");
const state: EngineState = ((globalThis as Record<symbol, unknown>)[STATE_KEY] ??= { turn: Promise.resolve() }) as EngineState;

export const emptySchemaFilter = { externalTables: [], externalEnums: [] };

async function loadEngineModule(): Promise<EngineModule> {
  state.module ??= (async () => {
    const runtime = await import("@prisma/schema-engine-wasm/schema_engine_bg");
    const wasmPath = join(dirname(require.resolve("@prisma/schema-engine-wasm/schema_engine_bg")), "schema_engine_bg.wasm");
    const instance = new WA.Instance(new WA.Module(await readFile(wasmPath)), {
      "./schema_engine_bg.js": runtime,
    });
    (runtime as unknown as { __wbg_set_wasm(w: unknown): void }).__wbg_set_wasm(instance.exports);
    (instance.exports as unknown as { __wbindgen_start(): void }).__wbindgen_start();
    return runtime;
  })();
  return state.module;
}

/** Runs `fn` with a schema engine of its own, one at a time per process (see EngineState). */
export async function withSchemaEngine<T>(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  fn: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const turn = state.turn.then(async () => {
    const runtime = await loadEngineModule();
    const engine = await runtime.SchemaEngine.new({ datamodels: undefined }, () => {}, bindMigrationAwareSqlAdapterFactory(adapterFactory));
    try {
      return await fn(engine);
    } finally {
      engine.free();
    }
  });
  state.turn = turn.catch(() => undefined);
  return turn;
}

/** The committed migrations (prisma/migrations/<name>/migration.sql) as the engine expects them. */
export async function readMigrationList(dir: string): Promise<MigrationList> {
  const names = existsSync(dir)
    ? (await readdir(dir, { withFileTypes: true }))
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort()
    : [];
  const migrationDirectories = await Promise.all(
    names.map(async (name) => ({
      path: name,
      migrationFile: {
        path: "migration.sql",
        content: { tag: "ok" as const, value: await readFile(join(dir, name, "migration.sql"), "utf8") },
      },
    })),
  );
  const lockPath = join(dir, "migration_lock.toml");
  return {
    baseDir: dir,
    lockfile: { path: "migration_lock.toml", content: existsSync(lockPath) ? await readFile(lockPath, "utf8") : null },
    shadowDbInitScript: "",
    migrationDirectories,
  };
}

export async function readSchemaFiles(schemaPath: string) {
  const isDir = (await stat(schemaPath)).isDirectory();
  const paths = isDir
    ? (await readdir(schemaPath))
        .filter((f) => f.endsWith(".prisma"))
        .sort()
        .map((f) => join(schemaPath, f))
    : [schemaPath];
  return Promise.all(paths.map(async (path) => ({ path, content: await readFile(path, "utf8") })));
}
