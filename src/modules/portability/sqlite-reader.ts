// The one way an imported SQLite file is read (isso's database: parse-isso.ts). SQLite runs in
// sql.js (WebAssembly) in a worker thread of its own (sqlite-worker.ts), never on the thread that
// answers requests, and every step it takes is bounded:
// - time: each step (opening and checking the file, each batch of rows) must end within
//   `stepMs`, else the worker is terminated and the file fails;
// - memory: the worker's JavaScript heap (`resourceLimits`) and what SQLite may allocate
//   (`PRAGMA hard_heap_limit`); sql.js's WebAssembly memory cannot be given a smaller maximum
//   than its build's (2 GiB), so SQLite's own limit is what holds it;
// - what is computed: the file is read column by plain column. Before anything else is read, a
//   view, a trigger (but those the caller names, which never run on a read), a virtual table, or a
//   hidden or generated column (`PRAGMA table_xinfo`'s `hidden` other than 0) fails the file,
//   naming it: a generated column is an expression SQLite computes for every row read, on the
//   thread that reads it. CHECK constraints are not evaluated (`ignore_check_constraints`), so
//   `PRAGMA quick_check` reads the pages and computes nothing the file's author wrote.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { SourceFailure } from "./source.js";
import {
  SQLITE_WORKER_CODE,
  type SqliteValue,
  type WorkerAnswer,
  type WorkerCall,
  type WorkerRequest,
  type WorkerSetup,
} from "./sqlite-worker.js";

export type { SqliteValue };

export interface SqliteLimits {
  /** how long one step (opening and checking the file, one batch of rows) may take */
  stepMs: number;
  /** the worker's JavaScript heap, in MiB (resourceLimits.maxOldGenerationSizeMb) */
  heapMb: number;
  /** what SQLite may allocate, in bytes (PRAGMA hard_heap_limit) */
  sqliteHeapBytes: number;
  /** rows sent from the worker at a time */
  batchRows: number;
}

export const SQLITE_LIMITS: SqliteLimits = {
  stepMs: 60_000,
  heapMb: 256,
  sqliteHeapBytes: 256 * 1024 * 1024,
  batchRows: 500,
};

/** A step that failed in the worker: SQLite's error, a bound reached, or the worker gone. */
export class SqliteReadError extends Error {
  override name = "SqliteReadError";
}

const SQL_JS = createRequire(import.meta.url).resolve("sql.js");
const words = (sql: string) => sql.replace(/\s+/g, " ").trim();
const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

export type SqliteRow = Record<string, SqliteValue>;

export interface ImportedSqlite {
  /** the file's tables */
  readonly tables: ReadonlySet<string>;
  /** the rows of one query, a batch at a time from the worker */
  rows(sql: string): AsyncGenerator<SqliteRow>;
  /** ends the worker */
  close(): Promise<void>;
}

/** One worker and its requests, each answered within limits.stepMs. */
class SqliteWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { ok: (a: WorkerAnswer & { ok: true }) => void; fail: (e: Error) => void }>();
  private next = 1;
  private ended: Error | null = null;

  constructor(
    private readonly limits: SqliteLimits,
    signal?: AbortSignal,
  ) {
    const setup: WorkerSetup = { sqlJs: SQL_JS, sqliteHeapBytes: limits.sqliteHeapBytes };
    this.worker = new Worker(SQLITE_WORKER_CODE, {
      eval: true,
      workerData: setup,
      resourceLimits: { maxOldGenerationSizeMb: limits.heapMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    });
    this.worker.on("message", (a: WorkerAnswer) => {
      const p = this.pending.get(a.id);
      if (!p) return;
      this.pending.delete(a.id);
      if (a.ok) p.ok(a);
      else p.fail(new SqliteReadError(a.message === "out of memory" ? this.memoryMessage("SQLite's") : a.message));
    });
    this.worker.on("error", (err: Error & { code?: string }) =>
      this.end(new SqliteReadError(err.code === "ERR_WORKER_OUT_OF_MEMORY" ? this.memoryMessage("its JavaScript") : err.message)),
    );
    this.worker.on("exit", () => this.end(new SqliteReadError("the reader stopped")));
    // a server shutting down does not wait for the step under way
    signal?.addEventListener(
      "abort",
      () => {
        this.end(new SqliteReadError("stopped: the server is shutting down"));
        void this.worker.terminate();
      },
      { once: true },
    );
  }

  private memoryMessage(which: string) {
    return `reading it needs more than ${which} memory bound for an import (${this.limits.sqliteHeapBytes / 1048576} MiB for SQLite, ${this.limits.heapMb} MiB for JavaScript)`;
  }

  private end(err: Error) {
    this.ended ??= err;
    for (const p of this.pending.values()) p.fail(this.ended);
    this.pending.clear();
  }

  request(req: WorkerCall, transfer: ArrayBuffer[] = []): Promise<WorkerAnswer & { ok: true }> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.next++;
    return new Promise((ok, fail) => {
      const timer = setTimeout(() => {
        this.end(new SqliteReadError(`reading it took longer than ${this.limits.stepMs / 1000} s, the bound for one step of an import`));
        void this.worker.terminate();
      }, this.limits.stepMs);
      const done =
        <T>(f: (v: T) => void) =>
        (v: T) => {
          clearTimeout(timer);
          f(v);
        };
      this.pending.set(id, { ok: done(ok), fail: done(fail) });
      const message: WorkerRequest = { ...req, id };
      try {
        this.worker.postMessage(message, transfer);
      } catch (err) {
        this.pending.delete(id);
        done(fail)(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  async close(): Promise<void> {
    if (!this.ended) await this.request({ op: "close" }).catch(() => undefined);
    this.end(new SqliteReadError("the reader is closed"));
    await this.worker.terminate();
  }
}

async function all(w: SqliteWorker, sql: string): Promise<SqliteRow[]> {
  const a = await w.request({ op: "all", sql });
  const columns = a.columns ?? [];
  return (a.rows ?? []).map((values) => Object.fromEntries(columns.map((c, i) => [c, values[i] ?? null])));
}

const REFUSED =
  "an imported database is read column by plain column: views, triggers, virtual tables, hidden and generated columns are refused";

/** Fails the file (SourceFailure, naming the object) on anything that would compute on a read. */
async function checkPlain(w: SqliteWorker, allowedTriggers: readonly string[]): Promise<Set<string>> {
  const allowed = new Set(allowedTriggers.map(words));
  const tables = new Set<string>();
  for (const o of await all(w, "SELECT type, name, sql AS definition FROM sqlite_schema ORDER BY rowid")) {
    const name = String(o.name);
    const definition = typeof o.definition === "string" ? o.definition : "";
    if (o.type === "view") throw new SourceFailure(`view ${name}`, `a view: ${REFUSED}`);
    if (o.type === "trigger" && !allowed.has(words(definition))) throw new SourceFailure(`trigger ${name}`, `a trigger: ${REFUSED}`);
    if (o.type !== "table") continue;
    if (/^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(definition)) throw new SourceFailure(`table ${name}`, `a virtual table: ${REFUSED}`);
    tables.add(name);
  }
  for (const table of tables) {
    for (const c of await all(w, `PRAGMA table_xinfo(${quoted(table)})`)) {
      if (c.hidden === 0) continue;
      const what = c.hidden === 2 || c.hidden === 3 ? "a generated column (GENERATED ALWAYS AS …)" : "a hidden column";
      throw new SourceFailure(`table ${table}, column ${String(c.name)}`, `${what}: ${REFUSED}`);
    }
  }
  return tables;
}

/**
 * Opens an imported SQLite file in a worker of its own: its schema checked (checkPlain), then
 * `PRAGMA quick_check`. A damaged file fails at "byte 0" (SourceFailure); a bound reached, at any
 * step, is a SqliteReadError the caller gives its position.
 */
export async function openImportedSqlite(
  file: Uint8Array,
  opts: {
    /** triggers the caller's format has, by their SQL (they never run on a read) */
    allowedTriggers?: readonly string[];
    limits?: Partial<SqliteLimits>;
    /** the bytes are handed to the worker (their buffer is detached here) instead of copied */
    transfer?: boolean;
    /** ends the worker at once, whatever step it is in */
    signal?: AbortSignal;
  } = {},
): Promise<ImportedSqlite> {
  const limits = { ...SQLITE_LIMITS, ...opts.limits };
  const w = new SqliteWorker(limits, opts.signal);
  try {
    // the worker takes the bytes: the caller's own when it gives them up (`transfer`) and they are
    // a whole buffer, else a copy
    const whole = file.byteOffset === 0 && file.byteLength === file.buffer.byteLength && file.buffer instanceof ArrayBuffer;
    const own = opts.transfer && whole ? file : new Uint8Array(file);
    const damaged = (err: unknown) =>
      err instanceof SqliteReadError ? new SourceFailure("byte 0", `the database cannot be read: ${err.message}`) : err;
    const steps = async () => {
      await w.request({ op: "open", file: own }, [own.buffer as ArrayBuffer]);
      const tables = await checkPlain(w, opts.allowedTriggers ?? []);
      return { tables, check: await all(w, "PRAGMA quick_check(1)") };
    };
    const { tables, check } = await steps().catch((err: unknown) => {
      throw damaged(err);
    });
    const verdict = check[0] ? Object.values(check[0])[0] : undefined;
    if (verdict !== "ok") throw new SourceFailure("byte 0", `the database is damaged: ${String(verdict)}`);
    return {
      tables,
      async *rows(sql: string) {
        const { columns = [] } = await w.request({ op: "prepare", sql });
        for (;;) {
          const batch = await w.request({ op: "step", rows: limits.batchRows });
          for (const values of batch.rows ?? []) yield Object.fromEntries(columns.map((c, i) => [c, values[i] ?? null]));
          if (batch.done) return;
        }
      },
      close: () => w.close(),
    };
  } catch (err) {
    await w.close();
    throw err;
  }
}
