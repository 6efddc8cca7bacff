// A Cusdis database for the tests (contract section 25: Cusdis has no export, a site owner has its
// database): its own empty SQLite database, made by its SQLite migrations
// (../shared/fixtures/import-more/cusdis/, SOURCES.txt), with rows added through its schema; and the
// same rows in a scratch PostgreSQL database of Cusdis's PostgreSQL schema, for pg_dump to dump.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import initSqlJs from "sql.js";
import { MORE } from "./import-readings.js";

export const SQL = await initSqlJs();

export const USER = "5c1f0a52-0000-4000-8000-000000000001";
export const PROJECT = "5c1f0a52-0000-4000-8000-000000000002";
export const PAGES = {
  hello: "5c1f0a52-0000-4000-8000-0000000000a1",
  second: "5c1f0a52-0000-4000-8000-0000000000a2",
  about: "5c1f0a52-0000-4000-8000-0000000000a3",
};
export const uuid = (n: number) => `9b2e6c10-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** The empty database with `sql` run on it (a copy in memory: the fixture is never written). */
export function cusdisFile(sql: string): Uint8Array {
  const db = new SQL.Database(readFileSync(`${MORE}cusdis/cusdis-pr302-dev.db`));
  db.run(sql);
  const bytes = db.export();
  db.close();
  return bytes;
}

/**
 * A site owner, a project, three pages (one whose url Cusdis was never given) and comments as
 * comment.service.ts writes them: a new one waits (approved 0), the owner's reply is approved with
 * moderatorId, delete() sets deletedAt; times as Prisma keeps them (epoch ms) or as text (SQLite's
 * CURRENT_TIMESTAMP, ISO 8601).
 */
export const CUSDIS_ROWS = `
  INSERT INTO users (id, name, email, created_at, updated_at) VALUES ('${USER}', 'Owner', 'owner@blog.example', 1709280000000, 1709280000000);
  INSERT INTO projects (id, title, "ownerId", created_at, updated_at) VALUES ('${PROJECT}', 'My blog', '${USER}', 1709280000000, 1709280000000);
  INSERT INTO pages (id, slug, url, title, "projectId", created_at, updated_at) VALUES
    ('${PAGES.hello}', '/posts/hello/', 'https://blog.example/posts/hello/', 'Hello', '${PROJECT}', 1709290000000, 1709290000000),
    ('${PAGES.second}', 'second-post', 'https://blog.example/2024/second/', 'Second', '${PROJECT}', 1709290000000, 1709290000000),
    ('${PAGES.about}', '/about/', NULL, NULL, '${PROJECT}', 1709290000000, 1709290000000);
  INSERT INTO comments (id, "pageId", "parentId", created_at, updated_at, "deletedAt", "moderatorId", by_email, by_nickname, content, approved) VALUES
    ('${uuid(1)}', '${PAGES.hello}', NULL, 1709300000000, 1709300000000, NULL, NULL, 'Ann@Example.org', 'Ann', 'First, with **Markdown**', 1),
    ('${uuid(2)}', '${PAGES.hello}', '${uuid(1)}', 1709300600000, 1709300600000, NULL, '${USER}', 'owner@blog.example', 'Owner', 'Thanks!', 1),
    ('${uuid(3)}', '${PAGES.hello}', NULL, 1709301200000, 1709301200000, 1709400000000, NULL, 'bo@example.org', 'Bo', 'Deleted later', 1),
    ('${uuid(4)}', '${PAGES.hello}', '${uuid(3)}', 1709301800000, 1709301800000, NULL, NULL, NULL, 'Cy', 'A reply to the deleted one', 1),
    ('${uuid(5)}', '${PAGES.hello}', '${uuid(4)}', 1709302400000, 1709302400000, NULL, NULL, 'ann@example.org', 'Ann again', 'And its reply', 1),
    ('${uuid(6)}', '${PAGES.hello}', NULL, 1709303000000, 1709303000000, NULL, NULL, 'dee@example.org', 'Dee', 'Waiting for the owner', 0),
    ('${uuid(7)}', '${PAGES.second}', NULL, '2024-03-01 10:00:00', '2024-03-01 10:00:00', NULL, NULL, NULL, 'Eve', 'On the second page', 1),
    ('${uuid(8)}', '${PAGES.about}', NULL, '2024-03-02T11:00:00.000Z', '2024-03-02T11:00:00.000Z', NULL, NULL, NULL, 'Fay', 'About you', 1);
`;

/**
 * A comment whose text COPY and SQL literals both have to escape: a tab, a newline, a line that
 * starts `\.` (COPY's end), `;` and `--` (SQL's statement end and comment), a backslash, `\N`
 * (COPY's NULL), quotes, and characters past ASCII.
 */
export const ODD_BODY = "Tab\there, a new line:\n\\. not the end; -- nor a comment\na back\\slash, \\N, 'quotes' and \"doubles\", café ☕";
export const CUSDIS_ODD_ROW = `
  INSERT INTO comments (id, "pageId", "parentId", created_at, updated_at, "deletedAt", "moderatorId", by_email, by_nickname, content, approved) VALUES
    ('${uuid(9)}', '${PAGES.second}', NULL, 1709304000000, 1709304000000, NULL, NULL, 'gus@example.org', 'Gus', '${ODD_BODY.replaceAll("'", "''")}', 1);
`;

/**
 * Cusdis's tables on PostgreSQL (DB_TYPE=pgsql) as its Prisma migrations make them: Prisma's
 * PostgreSQL types (String text, DateTime timestamp(3) without time zone, Boolean boolean), each
 * table's primary key and foreign keys as Prisma names them, and the column `postById` a later
 * migration (add_posted_by) appends to comments.
 */
const CUSDIS_PG_SCHEMA = `
  CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "name" TEXT,
    "email" TEXT,
    "email_verified" TIMESTAMP(3),
    "image" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "enable_new_comment_notification" BOOLEAN DEFAULT true,
    "notification_email" TEXT,
    "displayName" TEXT,
    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
  );
  CREATE TABLE "projects" (
    "id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMP(3),
    "ownerId" TEXT NOT NULL,
    "token" TEXT,
    "fetch_latest_comments_at" TIMESTAMP(3),
    "enable_notification" BOOLEAN DEFAULT true,
    "webhook" TEXT,
    "enableWebhook" BOOLEAN,
    CONSTRAINT "projects_pkey" PRIMARY KEY ("id")
  );
  CREATE TABLE "pages" (
    "id" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "url" TEXT,
    "title" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "projectId" TEXT NOT NULL,
    CONSTRAINT "pages_pkey" PRIMARY KEY ("id")
  );
  CREATE TABLE "comments" (
    "id" TEXT NOT NULL,
    "pageId" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deletedAt" TIMESTAMP(3),
    "moderatorId" TEXT,
    "by_email" TEXT,
    "by_nickname" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "approved" BOOLEAN NOT NULL DEFAULT false,
    "parentId" TEXT,
    CONSTRAINT "comments_pkey" PRIMARY KEY ("id")
  );
  ALTER TABLE "comments" ADD COLUMN "postById" TEXT;
  CREATE UNIQUE INDEX "users_email_key" ON "users"("email");
  CREATE INDEX "projectId" ON "pages"("projectId");
  ALTER TABLE "projects" ADD CONSTRAINT "projects_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
  ALTER TABLE "pages" ADD CONSTRAINT "pages_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
  ALTER TABLE "comments" ADD CONSTRAINT "comments_pageId_fkey" FOREIGN KEY ("pageId") REFERENCES "pages"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
  ALTER TABLE "comments" ADD CONSTRAINT "comments_moderatorId_fkey" FOREIGN KEY ("moderatorId") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
  ALTER TABLE "comments" ADD CONSTRAINT "comments_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "comments"("id") ON DELETE SET NULL ON UPDATE CASCADE;
  ALTER TABLE "comments" ADD CONSTRAINT "comments_postById_fkey" FOREIGN KEY ("postById") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
`;

/** the SQLite file's columns that are times and booleans on PostgreSQL */
const PG_TIMES = new Set(["created_at", "updated_at", "deletedAt", "deleted_at", "email_verified", "fetch_latest_comments_at"]);
const PG_BOOLEANS = new Set(["approved", "enable_notification", "enableWebhook", "enable_new_comment_notification"]);

/** A time as Prisma keeps it in SQLite (epoch ms, or text: UTC without a zone) as its timestamp(3) on PostgreSQL (UTC). */
function pgTimestamp(v: number | string): string {
  const d = typeof v === "number" ? new Date(v) : new Date(/Z$|[+-]\d\d:?\d\d$/.test(v) ? v : `${v.replace(" ", "T")}Z`);
  return d.toISOString().replace("T", " ").replace("Z", "");
}

export interface CusdisPostgres {
  url: string;
  /** `pg_dump <args> <the database>`'s output */
  dump(...args: string[]): string;
  /** runs SQL on the database */
  run(sql: string): Promise<void>;
  drop(): Promise<void>;
}

/**
 * A scratch database on the tests' PostgreSQL (`cusdis_dump_<random>`) with Cusdis's tables and
 * the rows of the SQLite file `bytes` (users, projects, pages, comments, in its order), as
 * Cusdis on PostgreSQL would hold them.
 */
export async function cusdisPostgres(adminUrl: string, bytes: Uint8Array): Promise<CusdisPostgres> {
  const name = `cusdis_dump_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const run = async (sql: string, params?: unknown[]) => {
    const c = new pg.Client({ connectionString: url.toString() });
    await c.connect();
    try {
      await c.query(sql, params);
    } finally {
      await c.end();
    }
  };
  await run(CUSDIS_PG_SCHEMA);
  const db = new SQL.Database(bytes);
  try {
    for (const table of ["users", "projects", "pages", "comments"]) {
      const [res] = db.exec(`SELECT * FROM ${table} ORDER BY rowid`);
      for (const values of res?.values ?? []) {
        const row = values.map((v, i) => {
          const column = res!.columns[i]!;
          if (v === null) return null;
          if (PG_TIMES.has(column)) return pgTimestamp(v as number | string);
          if (PG_BOOLEANS.has(column)) return v === 1 || v === "true";
          return v;
        });
        const columns = res!.columns.map((c) => `"${c}"`).join(", ");
        await run(`INSERT INTO "${table}" (${columns}) VALUES (${row.map((_, i) => `$${i + 1}`).join(", ")})`, row);
      }
    }
  } finally {
    db.close();
  }
  return {
    url: url.toString(),
    dump: (...args) =>
      // its warning that comments' parentId makes a --data-only dump hard to restore is not this test's
      execFileSync("pg_dump", [...args, url.toString()], {
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
        stdio: ["ignore", "pipe", "pipe"],
      }),
    run: (sql) => run(sql),
    async drop() {
      const d = new pg.Client({ connectionString: adminUrl });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}
