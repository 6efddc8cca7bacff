// An isso database (the SQLite file isso's `dbpath` names, copied while isso is stopped or with
// `sqlite3 comments.db ".backup copy.db"`), read with sql.js (SQLite compiled to WebAssembly: no
// native build, the same on every Node version we support). SQLite reads a file whole, so the file
// is held in memory, up to MAX_DATABASE_BYTES. Before anything is read the file is checked: the
// SQLite header, its size against the size the header gives (a cut file fails at the byte where it
// ends) and `PRAGMA quick_check`; a file that fails any of them, or whose reading fails later
// (damaged pages), fails whole and writes nothing.
//
// threads (id, uri: the page's path, title) are threads, by their path; comments (tid, id, parent,
// created and modified as Unix seconds, mode 1 accepted, 2 waiting for moderation: pending, 4
// deleted, text, author, email, likes, dislikes) are posts, in id order. isso keeps a reply's
// parent as the top comment of its thread (one level), and a deleted comment with replies as mode
// 4 with its text and author cleared: it comes as status deleted (the importer skips and counts
// it, its replies hang from its parent). Text is isso's Markdown with the HTML it allows (imports
// into isso hold HTML): tags are stripped as for Disqus (htmlToText). Authors become readers
// `isso:<hash of the email>` (or `isso:name-<hash of the name>` without one, as WordPress's); the
// address is kept only with keepEmails. likes and dislikes are counted as votes.
import initSqlJs, { type Database } from "sql.js";
import type { CommentStatus } from "../../generated/prisma/enums.js";
import { SQLITE_MAGIC } from "./sniff.js";
import { emailOf, htmlToText, sha256Hex, SourceFailure, type SourceItem } from "./source.js";
import { countOf } from "./record-fields.js";

/** the largest database read (SQLite in WebAssembly holds it whole) */
export const MAX_DATABASE_BYTES = 1024 * 1024 * 1024;

const MODES: Record<number, CommentStatus> = { 1: "approved", 2: "pending", 4: "deleted" };

/** Reads the whole input, refusing more than MAX_DATABASE_BYTES. */
async function readAll(input: AsyncIterable<Uint8Array | string>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of input) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    total += bytes.byteLength;
    if (total > MAX_DATABASE_BYTES)
      throw new SourceFailure(`byte ${MAX_DATABASE_BYTES}`, `not read: an isso database larger than ${MAX_DATABASE_BYTES} bytes`);
    parts.push(bytes);
  }
  return Buffer.concat(parts, total);
}

/** Whether the file is a whole SQLite database, from its header (https://sqlite.org/fileformat.html 1.3). */
function checkHeader(file: Uint8Array): void {
  if (file.byteLength < 100 || Buffer.from(file.subarray(0, 16)).toString("latin1") !== SQLITE_MAGIC)
    throw new SourceFailure("byte 0", "not an SQLite database (isso's comments.db)");
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

const damaged = (position: string, err: unknown) =>
  new SourceFailure(position, `the database cannot be read: ${err instanceof Error ? err.message : String(err)}`);

export async function* parseIsso(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<SourceItem> {
  const file = await readAll(input);
  checkHeader(file);
  const SQL = await initSqlJs();
  let db: Database;
  try {
    db = new SQL.Database(file);
  } catch (err) {
    throw damaged("byte 0", err);
  }
  try {
    let check: unknown;
    try {
      check = db.exec("PRAGMA quick_check(1)")[0]?.values[0]?.[0];
    } catch (err) {
      throw damaged("byte 0", err);
    }
    if (check !== "ok") throw new SourceFailure("byte 0", `the database is damaged: ${String(check)}`);
    const tables = new Set((db.exec("SELECT name FROM sqlite_master WHERE type = 'table'")[0]?.values ?? []).map((v) => String(v[0])));
    if (!tables.has("threads") || !tables.has("comments"))
      throw new SourceFailure("byte 0", "not an isso database: it has no threads and comments tables");
    yield* rows(db, "SELECT id, uri, title FROM threads ORDER BY id", "threads", (r, position) => ({
      kind: "thread",
      key: String(r.id),
      identifier: typeof r.uri === "string" ? r.uri : null,
      url: typeof r.uri === "string" && /^https?:\/\//i.test(r.uri) ? r.uri : null,
      title: typeof r.title === "string" && r.title.trim() ? r.title.trim() : null,
      createdAt: null,
      position,
    }));
    yield* rows(
      db,
      "SELECT tid, id, parent, created, modified, mode, text, author, email, likes, dislikes FROM comments ORDER BY id",
      "comments",
      comment,
    );
  } finally {
    db.close();
  }
}

type Row = Record<string, number | string | Uint8Array | null>;

/** The rows of a query, one at a time (sql.js steps a prepared statement), each made an item. */
function* rows(db: Database, query: string, table: string, make: (r: Row, position: string) => SourceItem): Generator<SourceItem> {
  let last = "its first row";
  let stmt;
  try {
    stmt = db.prepare(query);
  } catch (err) {
    throw damaged(`${table}`, err);
  }
  try {
    for (;;) {
      let row: Row;
      try {
        if (!stmt.step()) break;
        row = stmt.getAsObject() as Row;
      } catch (err) {
        throw damaged(`${table}, after ${last}`, err);
      }
      const position = `${table} id ${String(row.id)}`;
      last = position;
      yield make(row, position);
    }
  } finally {
    stmt.free();
  }
}

function comment(r: Row, position: string): SourceItem {
  const key = typeof r.id === "number" ? String(r.id) : null;
  const bad = (message: string): SourceItem => ({ kind: "error", position, message });
  if (!key || typeof r.tid !== "number") return bad("a comment without an id or a thread");
  const status = MODES[typeof r.mode === "number" ? r.mode : 1];
  if (!status) return bad(`mode is ${String(r.mode)} (1 accepted, 2 pending, 4 deleted)`);
  if (typeof r.created !== "number" || !Number.isFinite(r.created)) return bad("created is not a time");
  const createdAt = new Date(Math.round(r.created * 1000));
  const modified = typeof r.modified === "number" && Number.isFinite(r.modified) ? new Date(Math.round(r.modified * 1000)) : null;
  const body = status === "deleted" ? "" : htmlToText(typeof r.text === "string" ? r.text : "");
  if (status !== "deleted" && !body) return bad("its text is empty");
  const name = typeof r.author === "string" ? r.author.trim() : "";
  const email = typeof r.email === "string" ? r.email.trim().toLowerCase() : "";
  return {
    kind: "post",
    key,
    threadKey: String(r.tid),
    parentKey: typeof r.parent === "number" ? String(r.parent) : null,
    author: {
      id: email ? `isso:${sha256Hex(email).slice(0, 16)}` : `isso:name-${sha256Hex(name || "anonymous").slice(0, 16)}`,
      name: (name || "Anonymous").slice(0, 200),
      email: emailOf(email),
    },
    body,
    status,
    pinned: false,
    createdAt,
    editedAt: modified && modified.getTime() > createdAt.getTime() ? modified : null,
    deletedAt: status === "deleted" ? (modified ?? createdAt) : null,
    upvotes: countOf(r.likes),
    downvotes: countOf(r.dislikes),
    position,
  };
}
