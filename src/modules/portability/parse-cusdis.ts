// A Cusdis database: the SQLite file its DATABASE_URL names (Cusdis has no export of any kind; its
// PostgreSQL and MySQL databases are not read: see docs/import.md), read as isso's is
// (sqlite-reader.ts: whole, checked, in a bounded worker thread, column by plain column; a cut or
// damaged file fails whole and writes nothing).
//
// pages (id, slug: the page id the site gave Cusdis, often its path; url: the page's URL, as the
// site gave it; title) are threads, in the order they were written. comments (id: a UUID, pageId,
// parentId, created_at, deletedAt, by_nickname, by_email, content: Markdown, approved) are posts
// in the order they were written: approved false is pending (a new comment waits for the site
// owner; the owner's replies are approved), deletedAt set is deleted (the importer skips and
// counts it, its replies hang from its parent). Cusdis keeps no votes and no edits. Its times are
// Prisma's: epoch milliseconds, or text (`2024-01-02 03:04:05`, ISO 8601; without a zone, UTC).
// A thread's page is its url when that is an http(s) URL, else its slug when that is a path, on
// the import's site (`--site`). Authors become readers `cusdis:<hash of by_email>` (or
// `cusdis:name-<hash of by_nickname>` without one); the address is kept only with keepEmails.
// A database holding several projects (sites) is read whole.
import { emailOf, isPagePath, outOfRangeDate, parseSourceDate, sha256Hex, SourceFailure, type SourceItem } from "./source.js";
import { openImportedSqlite, readDatabaseFile, tableRows, type SqliteRow, type SqliteValue } from "./sqlite-reader.js";

/** A time Prisma keeps in SQLite: epoch ms (its own engine), or text (its adapters, SQLite's CURRENT_TIMESTAMP). */
function timeOf(v: SqliteValue | undefined): Date | null {
  if (typeof v === "number") return Number.isFinite(v) ? new Date(Math.round(v)) : null;
  if (typeof v !== "string") return null;
  return /^-?\d{1,16}$/.test(v.trim()) ? new Date(Number(v)) : parseSourceDate(v);
}

/** Prisma's booleans in SQLite: 1 or 0 (text "true" or "1" read as true too). */
const isTrue = (v: SqliteValue | undefined) => v === 1 || (typeof v === "string" && ["true", "1"].includes(v.trim().toLowerCase()));

const text = (v: SqliteValue | undefined) => (typeof v === "string" ? v.trim() : "");

export async function* parseCusdis(input: AsyncIterable<Uint8Array | string>, signal?: AbortSignal): AsyncGenerator<SourceItem> {
  const file = await readDatabaseFile(input, "Cusdis's database");
  const db = await openImportedSqlite(file, { transfer: true, signal });
  try {
    if (!db.tables.has("pages") || !db.tables.has("comments"))
      throw new SourceFailure(
        "byte 0",
        db.tables.has("threads")
          ? "not a Cusdis database: it is isso's (threads and comments): --format isso"
          : "not a Cusdis database: it has no pages and comments tables",
      );
    yield* tableRows(db, "SELECT id, slug, url, title, created_at FROM pages ORDER BY rowid", "pages", (r, position) => {
      const url = text(r.url);
      const slug = text(r.slug);
      const page = /^https?:\/\//i.test(url) ? url : null;
      const path = isPagePath(slug) ? slug : isPagePath(url) ? url : null;
      return {
        kind: "thread",
        key: String(r.id),
        identifier: slug || path,
        url: page,
        pathNeedsSite: !page && path !== null,
        title: text(r.title) || null,
        createdAt: timeOf(r.created_at),
        position,
      };
    });
    yield* tableRows(
      db,
      'SELECT id, "pageId", "parentId", created_at, "deletedAt", by_nickname, by_email, content, approved FROM comments ORDER BY rowid',
      "comments",
      comment,
    );
  } finally {
    await db.close();
  }
}

function comment(r: SqliteRow, position: string): SourceItem {
  const key = text(r.id);
  const bad = (message: string): SourceItem => ({ kind: "error", position, message });
  if (!key || !text(r.pageId)) return bad("a comment without an id or a page");
  const createdAt = timeOf(r.created_at);
  if (!createdAt) return bad("created_at is not a time");
  const deletedAt = r.deletedAt === null ? null : timeOf(r.deletedAt);
  const late = outOfRangeDate({ created_at: createdAt, deletedAt }, { created_at: String(r.created_at), deletedAt: String(r.deletedAt) });
  if (late) return bad(late);
  const deleted = r.deletedAt !== null;
  const body = deleted ? "" : text(r.content);
  if (!deleted && !body) return bad("its content is empty");
  const name = text(r.by_nickname);
  const email = text(r.by_email).toLowerCase();
  return {
    kind: "post",
    key,
    threadKey: text(r.pageId),
    parentKey: text(r.parentId) || null,
    author: {
      id: email ? `cusdis:${sha256Hex(email).slice(0, 16)}` : `cusdis:name-${sha256Hex(name || "anonymous").slice(0, 16)}`,
      name: (name || "Anonymous").slice(0, 200),
      email: emailOf(email),
    },
    body,
    status: deleted ? "deleted" : isTrue(r.approved) ? "approved" : "pending",
    pinned: false,
    createdAt,
    editedAt: null,
    deletedAt: deleted ? (deletedAt ?? createdAt) : null,
    position,
  };
}
