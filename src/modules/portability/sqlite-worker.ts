// The code of the worker thread that runs sql.js for sqlite-reader.ts, as the text Node runs
// (`new Worker(code, { eval: true })`): the same under the server built to dist/, under tsx and
// under the tests, which run the TypeScript sources. It knows nothing of any format: it opens the
// file it is given with SQLite's own bounds set (hard_heap_limit: what SQLite may allocate in
// WebAssembly memory; query_only; CHECK constraints not evaluated, so quick_check cannot be made
// to compute them), runs one statement to its end or steps one prepared statement a batch of rows
// at a time, and answers each request with plain values. sqlite-reader.ts holds the rules and the
// time cap.

/** What the worker is asked to do. */
export type WorkerCall =
  | { op: "open"; file: Uint8Array }
  | { op: "all"; sql: string }
  | { op: "prepare"; sql: string }
  | { op: "step"; rows: number }
  | { op: "close" };

/** A request to the worker; each is answered by a WorkerAnswer with the same id. */
export type WorkerRequest = WorkerCall & { id: number };

export type SqliteValue = number | string | Uint8Array | null;

export type WorkerAnswer =
  { id: number; ok: true; columns?: string[]; rows?: SqliteValue[][]; done?: boolean } | { id: number; ok: false; message: string };

/** What the worker is started with (workerData). */
export interface WorkerSetup {
  /** the absolute path of sql.js's Node build */
  sqlJs: string;
  /** SQLite's hard heap limit in bytes */
  sqliteHeapBytes: number;
}

export const SQLITE_WORKER_CODE = `
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const ready = require(workerData.sqlJs)();
let db = null;
let stmt = null;
const rowsOf = (s, n) => {
  const rows = [];
  while (rows.length < n) {
    if (!s.step()) return { rows, done: true };
    rows.push(s.get());
  }
  return { rows, done: false };
};
parentPort.on("message", async (m) => {
  try {
    const SQL = await ready;
    let answer = {};
    if (m.op === "open") {
      db = new SQL.Database(m.file);
      db.exec("PRAGMA hard_heap_limit = " + Math.floor(Number(workerData.sqliteHeapBytes)) +
        "; PRAGMA query_only = 1; PRAGMA trusted_schema = 0; PRAGMA ignore_check_constraints = 1");
    } else if (m.op === "all") {
      const s = db.prepare(m.sql);
      try {
        answer = { columns: s.getColumnNames(), rows: rowsOf(s, Infinity).rows };
      } finally {
        s.free();
      }
    } else if (m.op === "prepare") {
      if (stmt) stmt.free();
      stmt = null;
      stmt = db.prepare(m.sql);
      answer = { columns: stmt.getColumnNames() };
    } else if (m.op === "step") {
      answer = rowsOf(stmt, m.rows);
    } else if (m.op === "close") {
      if (stmt) stmt.free();
      if (db) db.close();
      stmt = null;
      db = null;
    }
    parentPort.postMessage({ id: m.id, ok: true, ...answer });
  } catch (err) {
    parentPort.postMessage({ id: m.id, ok: false, message: String((err && err.message) || err) });
  }
});
`;
