// The reader of imported SQLite files (src/modules/portability/sqlite-reader.ts) holds its own
// bounds whatever it is asked to run: a statement running past the step's time is stopped (its
// process killed) without holding this thread; SQLite's memory and the reader's JavaScript heap past
// theirs end in a clear failure, and the reader's process alone. It is the only code of src/ that opens SQLite. (The files it
// refuses: test/import-sqlite-bounds.test.ts.)
import { spawnSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import initSqlJs from "sql.js";
import { openImportedSqlite, SqliteReadError } from "../../src/modules/portability/sqlite-reader.js";

/** a query whose rows, a million in one batch, need more than a 48 MiB heap */
const PAST_THE_HEAP = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2000000) SELECT x, 'row ' || x AS t FROM n";

async function plainFile(): Promise<Uint8Array> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two');");
  const bytes = db.export();
  db.close();
  return bytes;
}

describe("the reader's own bounds", () => {
  /** the longest the event loop waited for a 10 ms timer while `work` ran */
  async function lagDuring(work: Promise<unknown>): Promise<number> {
    let worst = 0;
    let last = Date.now();
    const timer = setInterval(() => {
      const now = Date.now();
      worst = Math.max(worst, now - last - 10);
      last = now;
    }, 10);
    try {
      await work.catch(() => undefined);
    } finally {
      clearInterval(timer);
    }
    return worst;
  }

  it("a plain file is read row by row", async () => {
    const db = await openImportedSqlite(await plainFile());
    const rows = [];
    for await (const r of db.rows("SELECT id, x FROM t ORDER BY id")) rows.push(r);
    expect(rows).toEqual([
      { id: 1, x: "one" },
      { id: 2, x: "two" },
    ]);
    expect([...db.tables]).toEqual(["t"]);
    await db.close();
  });

  it("a statement running past the step's time is stopped: the reader's process is killed, the thread never held", async () => {
    // the bound long enough for the reader's start and the file's opening on a loaded machine
    const db = await openImportedSqlite(await plainFile(), { limits: { stepMs: 2_000 } });
    const started = Date.now();
    const endless = db.rows("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) AS c FROM n").next();
    const lag = await lagDuring(endless);
    await expect(endless).rejects.toThrow(new SqliteReadError("reading it took longer than 2 s, the bound for one step of an import"));
    expect(Date.now() - started).toBeLessThan(10_000);
    // a statement run on this thread would hold it for the whole step (2 s) before anything could stop
    // it; a loaded machine's own stalls stay well below that (a run of the whole suite on a busy 2-core
    // machine saw one of 1,006 ms with the reader in its own process)
    expect(lag).toBeLessThan(1_500);
    await db.close();
  });

  it("a signal ends the reader at once, whatever step it is in", async () => {
    const stop = new AbortController();
    const db = await openImportedSqlite(await plainFile(), { signal: stop.signal });
    const endless = db.rows("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) AS c FROM n").next();
    setTimeout(() => stop.abort(), 200);
    const started = Date.now();
    await expect(endless).rejects.toThrow(new SqliteReadError("stopped: the server is shutting down"));
    expect(Date.now() - started).toBeLessThan(2_000);
    await db.close();
  });

  it("SQLite's memory and the reader's JavaScript heap are bounded: past either, a clear failure", async () => {
    const file = await plainFile();
    const small = await openImportedSqlite(file, { limits: { sqliteHeapBytes: 32 * 1048576 } });
    await expect(small.rows("SELECT length(hex(zeroblob(100000000))) AS n").next()).rejects.toThrow(
      /^reading it needs more than SQLite's memory bound for an import \(32 MiB for SQLite/,
    );
    await small.close();
    const heap = await openImportedSqlite(file, { limits: { heapMb: 48, batchRows: 1_000_000 } });
    await expect(heap.rows(PAST_THE_HEAP).next()).rejects.toThrow(/^reading it needs more than its JavaScript memory bound for an import/);
    await heap.close();
  });

  it("a reader at its heap bound ends alone, never the process that reads (whatever V8's options there)", async () => {
    // four reads past a 48 MiB heap in one process whose young generation is larger: with the reader
    // on a worker thread, V8 aborted that process at its first to fourth read in each of 6 such runs
    const script = fileURLToPath(new URL("../support/sqlite-heap-child.mjs", import.meta.url));
    const { stdout, status, stderr } = spawnSync(process.execPath, [script], {
      env: { ...process.env, NODE_OPTIONS: "--max-semi-space-size=128", READS: "4" },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(stderr).not.toMatch(/FATAL ERROR/);
    expect(status).toBe(0);
    expect(stdout.trim().split("\n")).toEqual(
      Array.from(
        { length: 4 },
        () => "reading it needs more than its JavaScript memory bound for an import (256 MiB for SQLite, 48 MiB for JavaScript)",
      ),
    );
  });
});

describe("one way in", () => {
  it("no code of src/ but the reader loads sql.js", async () => {
    const found: string[] = [];
    for (const entry of await readdir("src", { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
      const path = join(entry.parentPath, entry.name);
      if (/["']sql\.js["']|initSqlJs|sql-wasm/.test(await readFile(path, "utf8"))) found.push(path);
    }
    expect(found.sort()).toEqual(["src/modules/portability/sqlite-reader.ts"]);
  });
});
