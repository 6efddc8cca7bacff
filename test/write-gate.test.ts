// The writes to one row wait in the process, not in PostgreSQL (src/lib/key-gate.ts, used by
// src/events/statement.ts): with the discussion's row held, ten posts to it put at most
// WRITES_IN_FLIGHT_PER_ROW statements on the lock; another discussion's post is not held up; when
// the row is let go every post is written, each once.
import pg from "pg";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { WRITES_IN_FLIGHT_PER_ROW, writesWaitingForRow } from "../src/events/statement.js";

let server: TestServer;
let t: TestTenant;
let db: pg.Client;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  db = new pg.Client({ connectionString: inject("databaseUrl") });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await server?.stop();
});

const waitingPosts = async () =>
  Number(
    (
      await db.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%eng_post_comment%' AND datname = current_database()",
      )
    ).rows[0]!.n,
  );

it("puts at most WRITES_IN_FLIGHT_PER_ROW posts of one discussion on its row's lock", async () => {
  const reader = await t.reader("gated");
  await t.api.put("/api/v1/discussions/gate-hot", {});
  await t.api.put("/api/v1/discussions/gate-other", {});
  const locker = new pg.Client({ connectionString: inject("databaseUrl") });
  await locker.connect();
  await locker.query("BEGIN");
  await locker.query("SELECT 1 FROM discussions WHERE tenant_id = $1 AND id = 'gate-hot' FOR UPDATE", [t.tenantId]);
  let posts: Promise<{ status: number }>[] = [];
  try {
    posts = Array.from({ length: 10 }, (_, i) => reader.post("/api/v1/discussions/gate-hot/comments", { body: `post ${i}` }));
    // every post has reached its write: two on the row's lock, the other eight waiting in the server
    await expect.poll(writesWaitingForRow).toBe(10 - WRITES_IN_FLIGHT_PER_ROW);
    await expect.poll(waitingPosts).toBe(WRITES_IN_FLIGHT_PER_ROW);
    // another discussion's post goes through meanwhile
    expect((await reader.post("/api/v1/discussions/gate-other/comments", { body: "elsewhere" })).status).toBe(201);
  } finally {
    await locker.query("ROLLBACK");
    await locker.end();
  }
  expect((await Promise.all(posts)).map((r) => r.status)).toEqual(Array(10).fill(201));
  const { rows } = await db.query<{ n: string }>("SELECT count(*) AS n FROM comments WHERE tenant_id = $1 AND discussion_id = 'gate-hot'", [
    t.tenantId,
  ]);
  expect(Number(rows[0]!.n)).toBe(10);
});
