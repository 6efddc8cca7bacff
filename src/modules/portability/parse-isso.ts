// An isso database (the SQLite file isso's `dbpath` names, copied while isso is stopped or with
// `sqlite3 comments.db ".backup copy.db"`), read with sql.js (SQLite compiled to WebAssembly: no
// native build, the same on every Node version we support) in a child process, bounded in time and
// memory (sqlite-reader.ts). SQLite reads a file whole, so the file is held in memory, up to
// MAX_DATABASE_BYTES. Before anything is read the file is checked (sqlite-reader.ts: readDatabaseFile,
// openImportedSqlite): the SQLite header, its size against the size the header gives (a cut file
// fails at the byte where it ends), its schema (no view, trigger but isso's own, virtual table,
// hidden or generated column) and `PRAGMA quick_check`; a file that fails any of them, or whose
// reading fails later (damaged pages, a bound reached), fails whole and writes nothing.
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
import { emailOf, htmlToText, outOfRangeDate, sha256Hex, SourceFailure, type SourceItem } from "./source.js";
import { countOf } from "./record-fields.js";
import { openImportedSqlite, readDatabaseFile, tableRows, type SqliteRow } from "./sqlite-reader.js";

/** the one trigger isso's schema has (isso/db/comments.py); it runs on a DELETE, never on a read */
export const ISSO_TRIGGER =
  "CREATE TRIGGER remove_stale_threads AFTER DELETE ON comments BEGIN DELETE FROM threads WHERE id NOT IN (SELECT tid FROM comments); END";

const MODES: Record<number, CommentStatus> = { 1: "approved", 2: "pending", 4: "deleted" };

export async function* parseIsso(input: AsyncIterable<Uint8Array | string>, signal?: AbortSignal): AsyncGenerator<SourceItem> {
  // the file is not kept here: the reader's process is given it and holds it
  const db = await openImportedSqlite(await readDatabaseFile(input, "isso's comments.db"), { allowedTriggers: [ISSO_TRIGGER], signal });
  try {
    if (!db.tables.has("threads") || !db.tables.has("comments"))
      throw new SourceFailure(
        "byte 0",
        db.tables.has("pages")
          ? "not an isso database: it is Cusdis's (pages and comments): --format cusdis"
          : "not an isso database: it has no threads and comments tables",
      );
    yield* tableRows(db, "SELECT id, uri, title FROM threads ORDER BY id", "threads", (r, position) => ({
      kind: "thread",
      key: String(r.id),
      identifier: typeof r.uri === "string" ? r.uri : null,
      url: typeof r.uri === "string" && /^https?:\/\//i.test(r.uri) ? r.uri : null,
      title: typeof r.title === "string" && r.title.trim() ? r.title.trim() : null,
      createdAt: null,
      position,
    }));
    yield* tableRows(
      db,
      "SELECT tid, id, parent, created, modified, mode, text, author, email, likes, dislikes FROM comments ORDER BY id",
      "comments",
      comment,
    );
  } finally {
    await db.close();
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
