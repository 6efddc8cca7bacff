// A Cusdis database (Cusdis has no export of any kind): the SQLite file its DB_URL names, or
// a plain-format pg_dump of its PostgreSQL database (told apart by their first bytes; its MySQL
// database is not read: see docs/import.md).
//
// The SQLite file is read as isso's is (sqlite-reader.ts: whole, checked, in a bounded child
// process, column by plain column; a cut or damaged file fails whole and writes nothing). A pg_dump
// is read as a stream (pg-dump.ts: its COPY rows or its INSERTs, everything else read past; a cut
// dump fails at its line and writes nothing). A comment needs its page's thread first, and a dump
// of the whole database writes its tables' rows in name order, comments before pages (one of the
// data only, `--data-only`, orders them by their foreign keys: pages first). The comments that come
// before the pages are held, as UTF-8 outside the JavaScript heap and at most MAX_HELD_BYTES of
// them (as much as an SQLite file may hold), and handed on once the pages' rows end; past that
// bound the dump fails, naming the data-only dump, whose comments are never held.
//
// pages (id, slug: the page id the site gave Cusdis, often its path; url: the page's URL, as the
// site gave it; title) are threads, in the order they were written. comments (id: a UUID, pageId,
// parentId, created_at, deletedAt, by_nickname, by_email, content: Markdown, approved) are posts
// in the order they were written: approved false is pending (a new comment waits for the site
// owner; the owner's replies are approved), deletedAt set is deleted (the importer skips and
// counts it, its replies hang from its parent). Cusdis keeps no votes and no edits. Its times are
// Prisma's: in SQLite epoch milliseconds, or text (`2024-01-02 03:04:05`, ISO 8601; without a
// zone, UTC); in PostgreSQL timestamp(3) without time zone, UTC. A thread's page is its url when
// that is an http(s) URL, else its slug when that is a path, on the import's site (`--site`).
// Authors become readers `cusdis:<hash of by_email>` (or `cusdis:name-<hash of by_nickname>`
// without one); the address is kept only with keepEmails. A database holding several projects
// (sites) is read whole. A dump's rows and an SQLite file's of the same comments are the same
// items, so either imports them under the same ids.
import { emailOf, isPagePath, outOfRangeDate, parseSourceDate, sha256Hex, SourceFailure, type SourceItem } from "./source.js";
import { isPgDump, readPgDump, type DumpEvent, type DumpValue } from "./pg-dump.js";
import { peekText } from "./sniff.js";
import { MAX_DATABASE_BYTES, openImportedSqlite, readDatabaseFile, tableRows, type SqliteRow, type SqliteValue } from "./sqlite-reader.js";

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
  const { text: head, stream } = await peekText(input, 256);
  if (isPgDump(head)) {
    yield* parseCusdisDump(stream, signal);
    return;
  }
  // the file is not kept here: the reader's process is given it and holds it
  const db = await openImportedSqlite(await readDatabaseFile(stream, "Cusdis's database"), { signal });
  try {
    if (!db.tables.has("pages") || !db.tables.has("comments"))
      throw new SourceFailure(
        "byte 0",
        db.tables.has("threads")
          ? "not a Cusdis database: it is isso's (threads and comments): --format isso"
          : "not a Cusdis database: it has no pages and comments tables",
      );
    yield* tableRows(db, `SELECT ${PAGE_FIELDS.map(quoted).join(", ")} FROM pages ORDER BY rowid`, "pages", page);
    yield* tableRows(db, `SELECT ${COMMENT_FIELDS.map(quoted).join(", ")} FROM comments ORDER BY rowid`, "comments", comment);
  } finally {
    await db.close();
  }
}

const quoted = (name: string) => `"${name}"`;

/** the columns read of each table */
const PAGE_FIELDS = ["id", "slug", "url", "title", "created_at"] as const;
const COMMENT_FIELDS = ["id", "pageId", "parentId", "created_at", "deletedAt", "by_nickname", "by_email", "content", "approved"] as const;

/**
 * Cusdis's columns in the order its Prisma migrations for PostgreSQL make them: an INSERT that
 * names none (`pg_dump --inserts --data-only`) is read in this order. Columns a later migration
 * added come after them.
 */
const CUSDIS_COLUMNS: Record<"pages" | "comments", readonly string[]> = {
  pages: ["id", "slug", "url", "title", "created_at", "updated_at", "projectId"],
  comments: [
    "id",
    "pageId",
    "created_at",
    "updated_at",
    "deletedAt",
    "moderatorId",
    "by_email",
    "by_nickname",
    "content",
    "approved",
    "parentId",
  ],
};

function page(r: SqliteRow, position: string): SourceItem {
  const url = text(r.url);
  const slug = text(r.slug);
  const at = /^https?:\/\//i.test(url) ? url : null;
  const path = isPagePath(slug) ? slug : isPagePath(url) ? url : null;
  return {
    kind: "thread",
    key: String(r.id),
    identifier: slug || path,
    url: at,
    pathNeedsSite: !at && path !== null,
    title: text(r.title) || null,
    createdAt: timeOf(r.created_at),
    position,
  };
}

/** the comments a dump holds before its pages, at most (UTF-8 bytes) */
export const MAX_HELD_BYTES = MAX_DATABASE_BYTES;

/** the dump that writes pages before comments (docs/import.md) */
const DATA_ONLY = 'pg_dump --data-only -t pages -t comments "$DB_URL" > cusdis.sql';

/**
 * Comments held until the pages are read: each as a JSON line of its fields, gathered in blocks of
 * about a MiB kept as UTF-8 Buffers (outside the JavaScript heap), at most `max` bytes in all.
 */
class HeldComments {
  private blocks: Buffer[] = [];
  private lines: string[] = [];
  private chars = 0;
  private bytes = 0;
  constructor(private readonly max: number) {}

  add(line: number, r: SqliteRow) {
    const json = JSON.stringify([line, ...COMMENT_FIELDS.map((f) => r[f] ?? null)]);
    this.lines.push(json);
    this.chars += json.length;
    if (this.chars >= 1024 * 1024) this.seal();
    if (this.bytes + this.chars > this.max)
      throw new SourceFailure(
        `line ${line}`,
        `more than ${this.max} bytes of comments came before this dump's pages (a whole database's dump writes comments first): dump the data only, which writes pages first: ${DATA_ONLY}`,
      );
  }

  private seal() {
    if (!this.lines.length) return;
    const block = Buffer.from(this.lines.join("\n"), "utf8");
    this.blocks.push(block);
    this.bytes += block.byteLength;
    this.lines = [];
    this.chars = 0;
  }

  /** the held comments, in the dump's order, each let go once handed on */
  *drain(): Generator<SourceItem> {
    this.seal();
    const blocks = this.blocks;
    this.blocks = [];
    this.bytes = 0;
    while (blocks.length) {
      const block = blocks.shift()!.toString("utf8");
      for (const json of block.split("\n")) {
        const [line, ...values] = JSON.parse(json) as [number, ...(string | number | null)[]];
        yield comment(Object.fromEntries(COMMENT_FIELDS.map((f, i) => [f, values[i] ?? null])), `line ${line}`);
      }
    }
  }
}

/** A PostgreSQL timestamp as pg_dump writes it (`2024-03-01 10:00:00.123`, a zone as `+00` or `+05:30`) in the form parseSourceDate reads. */
function pgTime(v: DumpValue): DumpValue {
  if (v === null) return null;
  const m = /^(\d{4}-\d\d-\d\d [\d:.]+)([+-]\d\d)(?::?(\d\d))?(?::\d\d)?$/.exec(v.trim());
  return m ? `${m[1]}${m[2]}:${m[3] ?? "00"}` : v;
}

/** PostgreSQL's boolean as COPY (t, f) or an INSERT (true, false) writes it, as SQLite keeps it (1, 0). */
const pgBoolean = (v: DumpValue): number | null => (v === null ? null : /^\s*(t|true|y|yes|on|1)\s*$/i.test(v) ? 1 : 0);

/** A dump row's fields as the SQLite file's row has them: times as text, approved as 1 or 0. */
function dumpRow(e: Extract<DumpEvent, { kind: "row" }>, fields: readonly string[]): SqliteRow {
  const row: SqliteRow = {};
  for (const f of fields) {
    const v = e.values[e.columns.indexOf(f)] ?? null;
    row[f] = f === "approved" ? pgBoolean(v) : f === "created_at" || f === "deletedAt" ? pgTime(v) : v;
  }
  return row;
}

/** A pg_dump of Cusdis's database; `maxHeld`: the comments held before its pages, at most (bytes). */
export async function* parseCusdisDump(
  input: AsyncIterable<Uint8Array | string>,
  signal?: AbortSignal,
  maxHeld = MAX_HELD_BYTES,
): AsyncGenerator<SourceItem> {
  const held = new HeldComments(maxHeld);
  let schema: string | null = null;
  let named = false;
  let pagesRead = false;
  let pagesEnded = false;
  let commentsRead = false;
  let checked: readonly string[] | null = null;
  let last = 0;
  for await (const e of readPgDump(input, { tables: new Set(["pages", "comments"]), defaultColumns: CUSDIS_COLUMNS, signal })) {
    last = e.line;
    const position = `line ${e.line}`;
    if (e.kind === "table") {
      named = true;
      // Cusdis's two tables of one schema: a dump of two Cusdis databases (or of another pages table) is not one site's
      if (e.schema !== null && schema !== null && e.schema !== schema)
        throw new SourceFailure(
          position,
          `the dump holds ${e.table} of schema ${e.schema} besides Cusdis's tables of schema ${schema}: dump one schema (pg_dump -n <schema>)`,
        );
      schema ??= e.schema;
      continue;
    }
    if (e.kind === "end") {
      if (e.table === "pages") {
        pagesEnded = true;
        yield* held.drain();
      }
      continue;
    }
    const fields = e.table === "pages" ? PAGE_FIELDS : COMMENT_FIELDS;
    if (checked !== e.columns) {
      const missing = fields.find((f) => !e.columns.includes(f));
      if (missing)
        throw new SourceFailure(
          position,
          `not Cusdis's ${e.table} table: it has no column ${missing} (its columns: ${e.columns.join(", ")})`,
        );
      checked = e.columns;
    }
    if (e.guessed && e.table === "comments" && !/^(true|false|t|f)$/i.test(e.values[e.columns.indexOf("approved")] ?? ""))
      throw new SourceFailure(
        position,
        "an INSERT naming no columns, in another order than Cusdis's, and the dump has no CREATE TABLE of it: dump with --column-inserts",
      );
    const r = dumpRow(e, fields);
    if (e.table === "pages") {
      pagesRead = true;
      yield page(r, position);
    } else {
      commentsRead = true;
      if (pagesEnded) yield comment(r, position);
      else held.add(e.line, r);
    }
  }
  if (!named) throw new SourceFailure("line 1", "not a dump of Cusdis's tables: it holds no pages or comments table");
  if (commentsRead && !pagesRead)
    throw new SourceFailure(
      `line ${last}`,
      `the dump holds comments but no pages: dump both tables (pg_dump --data-only -t pages -t comments)`,
    );
  yield* held.drain();
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
