// The one way an imported SQLite file is read (isso's database: parse-isso.ts; Cusdis's:
// parse-cusdis.ts). SQLite runs in sql.js (WebAssembly) in a child process of its own
// (sqlite-process.ts: `node -e`, an empty environment but what it is told), never on the thread
// that answers requests nor in its process, and every step it takes is bounded:
// - time: each step (opening and checking the file, each batch of rows) must end within
//   `stepMs`, else the process is killed and the file fails;
// - memory: the process's JavaScript heap (`--max-old-space-size`) and what SQLite may allocate
//   (`PRAGMA hard_heap_limit`); sql.js's WebAssembly memory cannot be given a smaller maximum
//   than its build's (2 GiB), so SQLite's own limit is what holds it. A process, not a worker
//   thread: V8 aborts the whole process when a heap reaches its bound in some allocation shapes
//   (Node's resourceLimits are best effort, nodejs/node issue 47224), and that process is then the
//   reader's alone;
// - what is computed: the file is read column by plain column. Before anything else is read, a
//   view, a trigger (but those the caller names, which never run on a read), a virtual table, or a
//   hidden or generated column (`PRAGMA table_xinfo`'s `hidden` other than 0) fails the file,
//   naming it: a generated column is an expression SQLite computes for every row read, on the
//   thread that reads it. CHECK constraints are not evaluated (`ignore_check_constraints`), so
//   `PRAGMA quick_check` reads the pages and computes nothing the file's author wrote.
// Before the process is started, the file is read whole (readDatabaseFile: at most
// MAX_DATABASE_BYTES) and its header checked: a cut file fails at the byte where it ends. Rows are
// handed on one at a time (tableRows), each with its position (`comments id 17`).
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { SQLITE_MAGIC } from "./sniff.js";
import { SourceFailure, type SourceItem } from "./source.js";
import {
  SQLITE_READER_CODE,
  type ReaderAnswer,
  type ReaderCall,
  type ReaderRequest,
  type ReaderSetup,
  type SqliteValue,
} from "./sqlite-process.js";

export type { SqliteValue };

export interface SqliteLimits {
  /** how long one step (opening and checking the file, one batch of rows) may take */
  stepMs: number;
  /** the reader process's JavaScript heap, in MiB (--max-old-space-size) */
  heapMb: number;
  /** what SQLite may allocate, in bytes (PRAGMA hard_heap_limit) */
  sqliteHeapBytes: number;
  /** rows sent from the reader at a time */
  batchRows: number;
}

export const SQLITE_LIMITS: SqliteLimits = {
  stepMs: 60_000,
  heapMb: 256,
  sqliteHeapBytes: 256 * 1024 * 1024,
  batchRows: 500,
};

/** A step that failed in the reader: SQLite's error, a bound reached, or the process gone. */
export class SqliteReadError extends Error {
  override name = "SqliteReadError";
}

const SQL_JS = createRequire(import.meta.url).resolve("sql.js");
const words = (sql: string) => sql.replace(/\s+/g, " ").trim();
const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
/** what V8 prints when a heap reaches its bound, before it aborts the process */
const HEAP_LIMIT = /Reached heap limit|JavaScript heap out of memory/;
const STDERR_KEPT = 4096;

export type SqliteRow = Record<string, SqliteValue>;

export interface ImportedSqlite {
  /** the file's tables */
  readonly tables: ReadonlySet<string>;
  /** the rows of one query, a batch at a time from the reader */
  rows(sql: string): AsyncGenerator<SqliteRow>;
  /** ends the reader's process */
  close(): Promise<void>;
}

/** One reader process, given the file on its standard input, and its requests, each answered within limits.stepMs. */
class SqliteProcess {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, { ok: (a: ReaderAnswer & { ok: true }) => void; fail: (e: Error) => void }>();
  private next = 1;
  private ended: Error | null = null;
  private readonly gone: Promise<void>;

  constructor(
    file: Uint8Array,
    private readonly limits: SqliteLimits,
    signal?: AbortSignal,
  ) {
    const setup: ReaderSetup = { sqlJs: SQL_JS, sqliteHeapBytes: limits.sqliteHeapBytes, fileBytes: file.byteLength };
    this.child = spawn(process.execPath, [`--max-old-space-size=${limits.heapMb}`, "-e", SQLITE_READER_CODE], {
      stdio: ["pipe", "ignore", "pipe", "ipc"],
      serialization: "advanced",
      // nothing of the server's environment (its secrets, its NODE_OPTIONS) reaches the reader
      env: { SQLITE_READER_SETUP: JSON.stringify(setup) },
    });
    let stderr = "";
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (text: string) => {
      if (stderr.length < STDERR_KEPT) stderr += text.slice(0, STDERR_KEPT - stderr.length);
    });
    this.child.on("message", (a: ReaderAnswer) => {
      const p = this.pending.get(a.id);
      if (!p) return;
      this.pending.delete(a.id);
      if (a.ok) p.ok(a);
      else p.fail(new SqliteReadError(a.message === "out of memory" ? this.memoryMessage("SQLite's") : a.message));
    });
    this.gone = new Promise((resolve) => {
      this.child.on("error", (err) => {
        this.end(new SqliteReadError(`the reader could not be started: ${err.message}`));
        resolve();
      });
      this.child.on("close", () => {
        this.end(new SqliteReadError(HEAP_LIMIT.test(stderr) ? this.memoryMessage("its JavaScript") : "the reader stopped"));
        resolve();
      });
    });
    // the reader's death is reported by "close"; a write it no longer reads is not an error here
    this.child.stdin?.on("error", () => undefined);
    this.child.stdin?.end(file);
    // a server shutting down does not wait for the step under way
    signal?.addEventListener(
      "abort",
      () => {
        this.end(new SqliteReadError("stopped: the server is shutting down"));
        this.child.kill("SIGKILL");
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

  request(req: ReaderCall): Promise<ReaderAnswer & { ok: true }> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.next++;
    return new Promise((ok, fail) => {
      const timer = setTimeout(() => {
        this.end(new SqliteReadError(`reading it took longer than ${this.limits.stepMs / 1000} s, the bound for one step of an import`));
        this.child.kill("SIGKILL");
      }, this.limits.stepMs);
      const done =
        <T>(f: (v: T) => void) =>
        (v: T) => {
          clearTimeout(timer);
          f(v);
        };
      this.pending.set(id, { ok: done(ok), fail: done(fail) });
      const message: ReaderRequest = { ...req, id };
      this.child.send(message, (err) => {
        if (!err || !this.pending.delete(id)) return;
        done(fail)(new SqliteReadError(`the reader stopped: ${err.message}`));
      });
    });
  }

  async close(): Promise<void> {
    if (!this.ended) await this.request({ op: "close" }).catch(() => undefined);
    this.end(new SqliteReadError("the reader is closed"));
    this.child.kill("SIGKILL");
    await this.gone;
  }
}

async function all(w: SqliteProcess, sql: string): Promise<SqliteRow[]> {
  const a = await w.request({ op: "all", sql });
  const columns = a.columns ?? [];
  return (a.rows ?? []).map((values) => Object.fromEntries(columns.map((c, i) => [c, values[i] ?? null])));
}

const REFUSED =
  "an imported database is read column by plain column: views, triggers, virtual tables, hidden and generated columns are refused";

/** Fails the file (SourceFailure, naming the object) on anything that would compute on a read. */
async function checkPlain(w: SqliteProcess, allowedTriggers: readonly string[]): Promise<Set<string>> {
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
 * Opens an imported SQLite file in a process of its own: its schema checked (checkPlain), then
 * `PRAGMA quick_check`. A damaged file fails at "byte 0" (SourceFailure); a bound reached, at any
 * step, is a SqliteReadError the caller gives its position.
 */
export async function openImportedSqlite(
  file: Uint8Array,
  opts: {
    /** triggers the caller's format has, by their SQL (they never run on a read) */
    allowedTriggers?: readonly string[];
    limits?: Partial<SqliteLimits>;
    /** ends the reader's process at once, whatever step it is in */
    signal?: AbortSignal;
  } = {},
): Promise<ImportedSqlite> {
  const limits = { ...SQLITE_LIMITS, ...opts.limits };
  const w = new SqliteProcess(file, limits, opts.signal);
  try {
    const damaged = (err: unknown) =>
      err instanceof SqliteReadError ? new SourceFailure("byte 0", `the database cannot be read: ${err.message}`) : err;
    const steps = async () => {
      await w.request({ op: "open" });
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

/** the largest database read (SQLite in WebAssembly holds it whole) */
export const MAX_DATABASE_BYTES = 1024 * 1024 * 1024;

/**
 * Reads an imported database file whole, refusing more than MAX_DATABASE_BYTES, and checks that it
 * is a whole SQLite database (`what` names the file one expects: "isso's comments.db").
 */
export async function readDatabaseFile(input: AsyncIterable<Uint8Array | string>, what: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of input) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    total += bytes.byteLength;
    if (total > MAX_DATABASE_BYTES)
      throw new SourceFailure(`byte ${MAX_DATABASE_BYTES}`, `not read: a database larger than ${MAX_DATABASE_BYTES} bytes`);
    parts.push(bytes);
  }
  const file = Buffer.concat(parts, total);
  checkHeader(file, what);
  return file;
}

/** Whether the file is a whole SQLite database, from its header (https://sqlite.org/fileformat.html 1.3). */
function checkHeader(file: Uint8Array, what: string): void {
  if (file.byteLength < 100 || Buffer.from(file.subarray(0, 16)).toString("latin1") !== SQLITE_MAGIC)
    throw new SourceFailure("byte 0", `not an SQLite database (${what})`);
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const raw = view.getUint16(16);
  const pageSize = raw === 1 ? 65536 : raw;
  const pages = view.getUint32(28);
  // the page count is valid when the change counter matches "version valid for"
  if (pages > 0 && view.getUint32(24) === view.getUint32(92) && pageSize * pages > file.byteLength)
    throw new SourceFailure(
      `byte ${file.byteLength}`,
      `the database file ends at byte ${file.byteLength}, but its header says it holds ${pageSize * pages} bytes: it is truncated`,
    );
}

/**
 * The rows of a query on `table`, one at a time (the reader sends them a batch at a time), each made
 * an item at its position (`comments id 17`: the row's `id`). A read that fails (damaged pages, a
 * bound reached) fails the file after the last row read.
 */
export async function* tableRows(
  db: ImportedSqlite,
  query: string,
  table: string,
  make: (r: SqliteRow, position: string) => SourceItem,
): AsyncGenerator<SourceItem> {
  let last = "its first row";
  const found = db.rows(query);
  try {
    for (;;) {
      let next: IteratorResult<SqliteRow>;
      try {
        next = await found.next();
      } catch (err) {
        if (!(err instanceof SqliteReadError)) throw err;
        throw new SourceFailure(
          last === "its first row" ? table : `${table}, after ${last}`,
          `the database cannot be read: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      if (next.done) break;
      const position = `${table} id ${String(next.value.id)}`;
      last = position;
      yield make(next.value, position);
    }
  } finally {
    await found.return(undefined);
  }
}
