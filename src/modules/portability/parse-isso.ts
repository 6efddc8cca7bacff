// An isso database (the SQLite file isso's `dbpath` names, copied while isso is stopped or with
// `sqlite3 comments.db ".backup copy.db"`), read with sql.js (SQLite compiled to WebAssembly: no
// native build, the same on every Node version we support) in a worker thread, bounded in time and
// memory (sqlite-reader.ts). SQLite reads a file whole, so the file is held in memory, up to
// MAX_DATABASE_BYTES. Before anything is read the file is checked: the SQLite header, its size
// against the size the header gives (a cut file fails at the byte where it ends), its schema (no
// view, trigger but isso's own, virtual table, hidden or generated column: sqlite-reader.ts) and
// `PRAGMA quick_check`; a file that fails any of them, or whose reading fails later (damaged
// pages, a bound reached), fails whole and writes nothing.
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
import type { CommentStatus } from "../../generated/prisma/enums.js";
import { SQLITE_MAGIC } from "./sniff.js";
import { emailOf, htmlToText, outOfRangeDate, sha256Hex, SourceFailure, type SourceItem } from "./source.js";
import { countOf } from "./record-fields.js";
import { openImportedSqlite, SqliteReadError, type ImportedSqlite, type SqliteRow } from "./sqlite-reader.js";

/** the largest database read (SQLite in WebAssembly holds it whole) */
export const MAX_DATABASE_BYTES = 1024 * 1024 * 1024;

/** the one trigger isso's schema has (isso/db/comments.py); it runs on a DELETE, never on a read */
export const ISSO_TRIGGER =
  "CREATE TRIGGER remove_stale_threads AFTER DELETE ON comments BEGIN DELETE FROM threads WHERE id NOT IN (SELECT tid FROM comments); END";

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

export async function* parseIsso(input: AsyncIterable<Uint8Array | string>, signal?: AbortSignal): AsyncGenerator<SourceItem> {
  const file = await readAll(input);
  checkHeader(file);
  const db = await openImportedSqlite(file, { allowedTriggers: [ISSO_TRIGGER], transfer: true, signal });
  try {
    if (!db.tables.has("threads") || !db.tables.has("comments"))
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
    await db.close();
  }
}

/** The rows of a query, one at a time (the worker sends them a batch at a time), each made an item. */
async function* rows(
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
        throw damaged(last === "its first row" ? table : `${table}, after ${last}`, err);
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

function comment(r: SqliteRow, position: string): SourceItem {
  const key = typeof r.id === "number" ? String(r.id) : null;
  const bad = (message: string): SourceItem => ({ kind: "error", position, message });
  if (!key || typeof r.tid !== "number") return bad("a comment without an id or a thread");
  const status = MODES[typeof r.mode === "number" ? r.mode : 1];
  if (!status) return bad(`mode is ${String(r.mode)} (1 accepted, 2 pending, 4 deleted)`);
  if (typeof r.created !== "number" || !Number.isFinite(r.created)) return bad("created is not a time");
  const createdAt = new Date(Math.round(r.created * 1000));
  const modified = typeof r.modified === "number" && Number.isFinite(r.modified) ? new Date(Math.round(r.modified * 1000)) : null;
  const late = outOfRangeDate(
    { created: createdAt, modified },
    { created: `${r.created} seconds`, modified: `${String(r.modified)} seconds` },
  );
  if (late) return bad(late);
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
