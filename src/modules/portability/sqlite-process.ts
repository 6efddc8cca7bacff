// The code of the child process that runs sql.js for sqlite-reader.ts, as the text Node runs
// (`node -e <code>`): the same under the server built to dist/, under tsx and under the tests, which
// run the TypeScript sources. It knows nothing of any format: it reads the file from its standard
// input (exactly the size it was told), opens it with SQLite's own bounds set (hard_heap_limit: what
// SQLite may allocate in WebAssembly memory; query_only; CHECK constraints not evaluated, so
// quick_check cannot be made to compute them), runs one statement to its end or steps one prepared
// statement a batch of rows at a time, and answers each request (over the IPC channel, Node's
// "advanced" serialization, so blobs stay bytes) with plain values. It ends when its parent goes.
// sqlite-reader.ts holds the rules, the time cap and the process's heap bound.

/** What the reader is asked to do. */
export type ReaderCall =
  { op: "open" } | { op: "all"; sql: string } | { op: "prepare"; sql: string } | { op: "step"; rows: number } | { op: "close" };

/** A request to the reader; each is answered by a ReaderAnswer with the same id. */
export type ReaderRequest = ReaderCall & { id: number };

export type SqliteValue = number | string | Uint8Array | null;

export type ReaderAnswer =
  { id: number; ok: true; columns?: string[]; rows?: SqliteValue[][]; done?: boolean } | { id: number; ok: false; message: string };

/** What the reader is started with (JSON in its environment's SQLITE_READER_SETUP). */
export interface ReaderSetup {
  /** the absolute path of sql.js's Node build */
  sqlJs: string;
  /** SQLite's hard heap limit in bytes */
  sqliteHeapBytes: number;
  /** the file's size in bytes: what is read from standard input */
  fileBytes: number;
}

export const SQLITE_READER_CODE = `
"use strict";
const setup = JSON.parse(process.env.SQLITE_READER_SETUP);
const ready = require(setup.sqlJs)();
process.on("disconnect", () => process.exit(0));
const file = new Uint8Array(setup.fileBytes);
const received = new Promise((resolve, reject) => {
  let at = 0;
  process.stdin.on("data", (chunk) => {
    if (at + chunk.length > file.length) return reject(new Error("the file is longer than announced"));
    file.set(chunk, at);
    at += chunk.length;
  });
  process.stdin.on("end", () => (at === file.length ? resolve(file) : reject(new Error("the file ended at byte " + at))));
  process.stdin.on("error", reject);
});
received.catch(() => undefined);
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
process.on("message", async (m) => {
  try {
    const SQL = await ready;
    let answer = {};
    if (m.op === "open") {
      db = new SQL.Database(await received);
      db.exec("PRAGMA hard_heap_limit = " + Math.floor(Number(setup.sqliteHeapBytes)) +
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
    process.send({ id: m.id, ok: true, ...answer });
  } catch (err) {
    process.send({ id: m.id, ok: false, message: String((err && err.message) || err) });
  }
});
`;
