// An imported SQLite file (isso's database) read column by plain column, in a child process
// bounded in time and memory (src/modules/portability/sqlite-reader.ts), through the real server: a
// generated column whose expression costs milliseconds a row, a view, a trigger, a virtual table
// are refused, naming what they are, while the server's other requests are answered. The reader's
// own bounds: test/unit/import-sqlite-reader.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import initSqlJs from "sql.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { importFinished, postImport } from "./support/imports.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** the trigger isso's schema has (isso/db/comments.py) */
const ISSO_TRIGGER =
  "CREATE TRIGGER remove_stale_threads AFTER DELETE ON comments BEGIN DELETE FROM threads WHERE id NOT IN (SELECT tid FROM comments); END";

// an expression of milliseconds a row, without memory to speak of (30 replaces of 40,000
// characters), naming the row's id so that SQLite cannot compute it once for all rows
const HEAVY = `length(${"replace(".repeat(30)}hex(zeroblob(20000 + (id & 1)))${",'0','0')".repeat(30)})`;

/**
 * isso's schema (isso/db) with `extra` statements and 400 comments; `generated` adds that column
 * (likes or text) afterwards as GENERATED ALWAYS AS HEAVY (inserting would compute it).
 */
async function issoFile(opts: { generated?: "likes" | "text"; extra?: string } = {}): Promise<Uint8Array> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  const column = (name: string, plain: string) => (opts.generated === name ? "" : `${plain},`);
  db.run(`CREATE TABLE preferences (key VARCHAR PRIMARY KEY, value VARCHAR);
    CREATE TABLE threads (id INTEGER PRIMARY KEY, uri VARCHAR(256) UNIQUE, title VARCHAR(256));
    CREATE TABLE comments (tid REFERENCES threads(id), id INTEGER PRIMARY KEY, parent INTEGER, created FLOAT NOT NULL,
      modified FLOAT, mode INTEGER, remote_addr VARCHAR, ${column("text", "text VARCHAR NOT NULL")} author VARCHAR, email VARCHAR,
      website VARCHAR, ${column("likes", "likes INTEGER DEFAULT 0")} dislikes INTEGER DEFAULT 0, voters BLOB NOT NULL, notification INTEGER DEFAULT 0);
    ${ISSO_TRIGGER};
    INSERT INTO threads VALUES (1, '/gen/', 'Generated');
    ${opts.extra ?? ""}`);
  const [textColumn, textValue] = opts.generated === "text" ? ["", ""] : [", text", ", 'hello'"];
  for (let i = 1; i <= 400; i++)
    db.run(`INSERT INTO comments (tid, id, created, mode, voters${textColumn}) VALUES (1, ?, 1700000000, 1, x'00'${textValue})`, [i]);
  if (opts.generated === "likes") db.run(`ALTER TABLE comments ADD COLUMN likes INTEGER GENERATED ALWAYS AS (${HEAVY}) VIRTUAL`);
  if (opts.generated === "text")
    db.run(`ALTER TABLE comments ADD COLUMN text TEXT GENERATED ALWAYS AS (substr(${HEAVY} || 'x', 1, 9)) VIRTUAL`);
  const bytes = db.export();
  db.close();
  return bytes;
}

const post = (t: TestTenant, body: Uint8Array) => postImport(server, t, "isso", body);
const finished = importFinished;

describe("isso files that would compute on a read", () => {
  it("a generated likes or text column is refused, naming it, while /healthz answers within a second", async () => {
    const t = await createTestTenant(server);
    const likes = await issoFile({ generated: "likes" });
    const text = await issoFile({ generated: "text" });
    expect(likes.byteLength).toBeLessThan(64 * 1024);

    const slowest: number[] = [];
    let running = true;
    const loop = (async () => {
      while (running) {
        const started = Date.now();
        const health = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
        expect(health.status).toBe(200);
        slowest.push(Date.now() - started);
        await new Promise((ok) => setTimeout(ok, 20));
      }
    })();
    try {
      const [a, b] = await Promise.all([post(t, likes), post(t, text)]);
      const [likesDone, textDone] = await Promise.all([finished(t, a), finished(t, b)]);
      const refused =
        "a generated column (GENERATED ALWAYS AS …): an imported database is read column by plain column: views, triggers, virtual tables, hidden and generated columns are refused";
      expect(likesDone).toMatchObject({ state: "failed", comments: 0, failure: `table comments, column likes: ${refused}` });
      expect(textDone).toMatchObject({ state: "failed", comments: 0, failure: `table comments, column text: ${refused}` });
    } finally {
      running = false;
      await loop;
    }
    expect(slowest.length).toBeGreaterThan(0);
    expect(Math.max(...slowest), JSON.stringify(slowest)).toBeLessThan(1_000);
    const holdings = await t.api.get("/api/v1/discussions");
    expect(holdings.body.items).toEqual([]);
  });

  it("a view, a trigger other than isso's own and a virtual table are refused, each named; isso's own trigger is not", async () => {
    const t = await createTestTenant(server);
    const cases: [string, string][] = [
      ["CREATE VIEW hot AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n", "view hot: a view"],
      ["CREATE TRIGGER touch AFTER INSERT ON threads BEGIN UPDATE threads SET title = 'x'; END", "trigger touch: a trigger"],
      ["CREATE VIRTUAL TABLE search USING fts3(body)", "table search: a virtual table"],
    ];
    for (const [extra, failure] of cases) {
      const done = await finished(t, await post(t, await issoFile({ extra })));
      expect(done, extra).toMatchObject({ state: "failed", comments: 0 });
      expect(done.failure).toMatch(
        new RegExp(`^${failure.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: an imported database is read column by plain column`),
      );
    }
    const plain = await finished(t, await post(t, await issoFile()));
    expect(plain).toMatchObject({ state: "succeeded", comments: 400, errors: [] });
  });
});
