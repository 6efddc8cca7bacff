// A Cusdis database for the tests (contract section 25: Cusdis has no export, a site owner has its
// SQLite file): its own empty database, made by its SQLite migrations
// (../shared/fixtures/import-more/cusdis/, SOURCES.txt), with rows added through its schema.
import { readFileSync } from "node:fs";
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
