// The service through a transaction-mode PgBouncer (contract section 17; src/db/pooler.ts), in the
// pooler project (test/support/pooler-setup.ts: `databaseUrl` is the run's PgBouncer, and
// `databaseDirectUrl` the database itself). Concurrent mixed traffic without an error; what reaches
// the pooler (no named statement, no startup parameter) and what stays in its sessions (nothing);
// the statement timeout applied by the server per transaction; a frozen pooler answered 503 within
// 5 s and recovered from; migrations and their advisory lock on the direct connection, the
// retention job's transaction-scoped lock through the pooler; a connection given back inside a
// transaction closed, not lent again. The tests that freeze a pooler or narrow its pool start
// PgBouncers of their own (test/support/pgbouncer.ts).
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { poolerClient } from "../../src/db/pooler.js";
import { createTestTenant, type TestTenant } from "../support/fixtures.js";
import { startServer, testEnv, type TestServer } from "../support/server.js";
import { startPgBouncer, type PgBouncer } from "../support/pgbouncer.js";
import { startWireTap, type WireTap } from "../support/pg-wire-tap.js";
import { rawSse } from "../support/sse.js";

const MIGRATION_LOCK_ID = 4_207_311_877; // src/db/migrate.ts
const RETENTION_LOCK_ID = 4_207_311_878; // src/modules/retention/engine/retention.ts

const direct = () => inject("databaseDirectUrl")!;
/** only the pooler project has one (the default project's include matches this file too: skipped there) */
const behindPooler = inject("databaseDirectUrl") !== undefined;

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const POST_COMMENT = `mutation P($d: String!, $body: String) { postComment(discussionId: $d, input: { body: $body }) { id body } }`;
const LIST = `query L($d: String!) { comments(discussionId: $d, first: 10) { edges { node { id body author { id } reactions { kind count } } } } }`;

describe.skipIf(!behindPooler)("through the run's PgBouncer", () => {
  let server: TestServer;
  let t: TestTenant;
  beforeAll(async () => {
    expect(new URL(inject("databaseUrl")).port).not.toBe(new URL(direct()).port); // the pooler, not the database
    server = await startServer();
    t = await createTestTenant(server);
  });
  afterAll(() => server?.stop());

  it("answers 500 concurrent mixed requests — posts, lists, reactions, edits, GraphQL, keyed retries — without an error", async () => {
    const readers = await Promise.all(Array.from({ length: 20 }, (_, i) => t.reader(`r${i}`)));
    const discussions = ["p0", "p1", "p2", "p3", "p4"];
    // comments to react to, edit (by their authors) and read
    const seeded = await Promise.all(
      readers.map(async (r, i) => {
        const res = await r.post(`/api/v1/discussions/${discussions[i % 5]}/comments`, { body: `seed ${i}` });
        expect(res.status).toBe(201);
        return { id: res.body.id as string, author: r };
      }),
    );
    const outcomes: { kind: string; ok: boolean; detail: string }[] = [];
    const check = (kind: string, ok: boolean, detail: unknown) => outcomes.push({ kind, ok, detail: JSON.stringify(detail).slice(0, 300) });
    const request = async (i: number) => {
      const reader = readers[i % readers.length]!;
      const d = discussions[i % discussions.length]!;
      const own = seeded[i % seeded.length]!;
      switch (i % 8) {
        case 0: {
          const r = await reader.post(`/api/v1/discussions/${d}/comments`, { body: `post ${i}` });
          return check("post", r.status === 201, r.body);
        }
        case 1: {
          const r = await t.api.get(`/api/v1/discussions/${d}/comments?limit=20`);
          return check("list", r.status === 200 && Array.isArray(r.body.items), r.body);
        }
        case 2: {
          const r = await reader.post(`/api/v1/comments/${own.id}/reactions`, { kind: "like" });
          return check("reaction", r.status === 200, r.body);
        }
        case 3: {
          const r = await own.author.patch(`/api/v1/comments/${own.id}`, { body: `edited ${i}` });
          return check("edit", r.status === 200, r.body);
        }
        case 4: {
          const r = await reader.raw("POST", "/graphql", { query: POST_COMMENT, variables: { d, body: `gql ${i}` } });
          return check("graphql post", r.status === 200 && !r.body.errors && !!r.body.data.postComment.id, r.body);
        }
        case 5: {
          const r = await t.api.raw("POST", "/graphql", { query: LIST, variables: { d } });
          return check("graphql list", r.status === 200 && !r.body.errors, r.body);
        }
        case 6: {
          // a keyed write and its retry: the retry answers the first outcome
          const headers = { "idempotency-key": randomUUID() };
          const first = await reader.post(`/api/v1/discussions/${d}/comments`, { body: `keyed ${i}` }, { headers });
          const again = await reader.post(`/api/v1/discussions/${d}/comments`, { body: `keyed ${i}` }, { headers });
          check("keyed", first.status === 201, first.body);
          return check(
            "keyed retry",
            again.status === 201 && again.headers.get("idempotent-replayed") === "true" && again.body.id === first.body.id,
            again.body,
          );
        }
        default: {
          const r = await t.api.get(`/api/v1/comments/${own.id}`);
          return check("get", r.status === 200 && r.body.id === own.id, r.body);
        }
      }
    };
    // 448 cases at once, 56 of them a keyed write and its retry: 504 requests
    const cases = Array.from({ length: 448 }, (_, i) => i);
    await Promise.all(cases.map((i) => request(i).catch((e: unknown) => check("thrown", false, String(e)))));
    const failed = outcomes.filter((o) => !o.ok);
    expect(failed.slice(0, 5)).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(500);
    // every write landed once: the posts of one discussion are all there
    const posts = outcomes.filter((o) => o.kind === "post" || o.kind === "graphql post" || o.kind === "keyed").length;
    let listed = 0;
    for (const d of discussions) {
      let cursor: string | null = null;
      do {
        const page: { status: number; body: any } = await t.api.get(
          `/api/v1/discussions/${d}/comments?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
        );
        listed += page.body.items.length;
        cursor = page.body.nextCursor;
      } while (cursor);
    }
    expect(listed).toBe(posts + seeded.length);
  }, 120_000); // seconds on an idle machine; minutes when the machine is loaded

  it("runs the retention job one instance at a time: its transaction-scoped advisory lock works through the pooler", async () => {
    const retention = server.app.runtime.retention;
    await withClient(direct(), async (holder) => {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock($1)", [RETENTION_LOCK_ID]);
      expect(await retention.runOnce()).toBeNull(); // held by another session
      await holder.query("COMMIT");
    });
    expect(await retention.runOnce()).toMatchObject({ events: expect.any(Number) });
    // and it let go of it with its transaction: nothing stays in the pooler's session
    await withClient(direct(), async (c) => {
      expect((await c.query("SELECT pg_try_advisory_lock($1) AS ok", [RETENTION_LOCK_ID])).rows[0].ok).toBe(true);
    });
  });

  it("closes a connection given back inside a transaction instead of lending it again (its transaction ends with it)", async () => {
    const pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 1, Client: poolerClient({ timeoutMs: 2000 }) });
    try {
      const c = await pool.connect();
      await c.query("BEGIN");
      await c.query("SELECT pg_current_xact_id()");
      c.release(); // what adapter-pg does when a COMMIT or ROLLBACK timed out on the client side
      expect(pool.totalCount).toBe(0);
      const { rows } = await pool.query<{ xid: string | null }>("SELECT pg_current_xact_id_if_assigned()::text AS xid");
      expect(rows[0]!.xid).toBeNull(); // a transaction of its own, not the one left open
    } finally {
      await pool.end();
    }
  });

  it("migrates at start-up through DATABASE_DIRECT_URL: a new database behind the pooler is created, migrated and served", async () => {
    const name = `eng_pooler_new_${randomBytes(5).toString("hex")}`;
    const viaPooler = new URL(inject("databaseUrl"));
    viaPooler.pathname = `/${name}`;
    const itself = new URL(direct());
    itself.pathname = `/${name}`;
    const app = await buildApp(loadConfig(testEnv({ DATABASE_URL: viaPooler.toString(), DATABASE_DIRECT_URL: itself.toString() })), {
      migrate: true,
    });
    try {
      expect(app.runtime.migrated.length).toBeGreaterThan(0);
      await app.start();
      const fresh = await createTestTenant({ url: app.url, app, stop: () => app.stop() });
      expect((await (await fresh.reader("ada")).post("/api/v1/discussions/new/comments", { body: "hello" })).status).toBe(201);
    } finally {
      await app.stop();
      await withClient(inject("adminDatabaseUrl"), (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
  });

  it("takes the migration lock on the direct connection, never on one of the pooler's server sessions", async () => {
    await withClient(direct(), async (holder) => {
      await holder.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_ID]);
      const starting = buildApp(loadConfig(testEnv()), { migrate: true });
      try {
        // the starting server waits for the lock: its session is the direct one
        let waiting: number | undefined;
        for (let i = 0; i < 200 && waiting === undefined; i++) {
          const { rows } = await holder.query<{ pid: number }>(
            `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid::bigint = $1::bigint % 4294967296 AND database =
               (SELECT oid FROM pg_database WHERE datname = current_database())`,
            [MIGRATION_LOCK_ID],
          );
          waiting = rows[0]?.pid;
          if (waiting === undefined) await new Promise((r) => setTimeout(r, 50));
        }
        expect(waiting).toBeDefined();
        const servers = await withClient(inject("poolerAdminUrl")!, async (admin) => (await admin.query("SHOW SERVERS")).rows);
        expect(servers.length).toBeGreaterThan(0);
        expect(servers.map((s: { remote_pid: number }) => s.remote_pid)).not.toContain(waiting);
      } finally {
        await holder.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_ID]);
        await (await starting).stop();
      }
    });
  });
});

describe.skipIf(!behindPooler)("a pooler with one server connection for every transaction", () => {
  let bouncer: PgBouncer;
  let tap: WireTap;
  let server: TestServer;
  let t: TestTenant;
  beforeAll(async () => {
    bouncer = await startPgBouncer({ serverUrl: inject("adminDatabaseUrl"), settings: { default_pool_size: "1" } });
    tap = await startWireTap(bouncer.urlFor(direct()));
    server = await startServer({ DATABASE_URL: tap.url, DATABASE_TIMEOUT_MS: "1500", RUN_WEBHOOK_WORKER: "1" });
    t = await createTestTenant(server);
  });
  afterAll(async () => {
    await server?.stop();
    await tap?.close();
    await bouncer?.stop();
  });

  it("receives no named statement and no startup parameter it would refuse, from every path", async () => {
    const ada = await t.reader("ada");
    const hook = await t.api.post("/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["*"] });
    expect(hook.status).toBe(201);
    const posted = await ada.post("/api/v1/discussions/tap/comments", { body: "one" });
    expect(posted.status).toBe(201);
    const id = posted.body.id as string;
    const keyed = { headers: { "idempotency-key": randomUUID() } };
    const results = await Promise.all([
      ada.post("/api/v1/discussions/tap/comments", { body: "two" }, keyed),
      ada.post(`/api/v1/comments/${id}/reactions`, { kind: "like" }),
      ada.patch(`/api/v1/comments/${id}`, { body: "one, edited" }),
      t.api.get("/api/v1/discussions/tap/comments"),
      t.api.get(`/api/v1/comments/${id}`),
      t.api.raw("POST", "/graphql", { query: LIST, variables: { d: "tap" } }),
      t.api.get("/api/v1/settings"),
    ]);
    expect(results.map((r) => r.status)).toEqual([201, 200, 200, 200, 200, 200, 200]);
    // a stream: a ticket redeemed, and a replay from the log
    const ticket = await t.api.post("/api/v1/stream/ticket", { discussionId: "tap" });
    expect(ticket.status).toBe(201);
    const sse = await rawSse(`${server.url}/api/v1/stream/tap?ticket=${ticket.body.ticket}&lastEventId=0`);
    await sse.waitForText((x) => x.includes('"replayed":'));
    await sse.close();

    expect(tap.startups.length).toBeGreaterThan(0);
    // what PgBouncer 1.18 takes without `ignore_startup_parameters` (statement_timeout, options: refused)
    const understood = ["user", "database", "application_name", "client_encoding", "DateStyle", "TimeZone", "standard_conforming_strings"];
    for (const params of tap.startups) expect(Object.keys(params).filter((k) => !understood.includes(k))).toEqual([]);
    expect(tap.parses.length).toBeGreaterThan(20);
    expect(tap.parses.filter((p) => p.name !== "")).toEqual([]);
    // the hot paths' statements are there, unnamed
    expect(tap.parses.some((p) => p.text.includes("eng_post_comment"))).toBe(true);
    expect(tap.parses.some((p) => p.text.includes("set_config('statement_timeout', '1500', true)"))).toBe(true);
  });

  it("has the server apply DATABASE_TIMEOUT_MS to each transaction, and leaves nothing in the session", async () => {
    const { db, prisma } = server.app.runtime.services;
    expect(await db.sql.query("SELECT current_setting('statement_timeout') AS st, current_setting('random_page_cost') AS rpc", [])).toEqual(
      [{ st: "1500ms", rpc: "1.1" }],
    );
    const inTx = await prisma.$transaction(
      async (tx) =>
        tx.$queryRaw<
          { st: string; rpc: string }[]
        >`SELECT current_setting('statement_timeout') AS st, current_setting('random_page_cost') AS rpc`,
    );
    expect(inTx).toEqual([{ st: "1500ms", rpc: "1.1" }]);
    // cancelled by the server (57014), before the client's own limit (query_timeout, 2 s) would end the connection
    const started = Date.now();
    const err = await db.sql.query("SELECT pg_sleep(5)", []).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("57014");
    expect(Date.now() - started).toBeLessThan(2000);
    // one server session serves every transaction: another client of the pooler finds its defaults
    await withClient(bouncer.urlFor(direct()), async (c) => {
      expect((await c.query("SHOW statement_timeout")).rows[0].statement_timeout).toBe("0");
      expect((await c.query("SHOW random_page_cost")).rows[0].random_page_cost).not.toBe("1.1");
      expect((await c.query("SELECT count(*)::int AS n FROM pg_prepared_statements")).rows[0].n).toBe(0);
    });
  });
});

describe.skipIf(!behindPooler)("a frozen pooler", () => {
  let bouncer: PgBouncer;
  let server: TestServer;
  let t: TestTenant;
  beforeAll(async () => {
    bouncer = await startPgBouncer({ serverUrl: inject("adminDatabaseUrl") });
    server = await startServer({ DATABASE_URL: bouncer.urlFor(direct()), DATABASE_TIMEOUT_MS: "3000" });
    t = await createTestTenant(server);
  });
  afterAll(async () => {
    bouncer?.resume();
    await server?.stop();
    await bouncer?.stop();
  });

  it("answers 503 within 5 s on a write and a read (SIGSTOP), and serves again after SIGCONT", async () => {
    const ada = await t.reader("ada");
    const seeded = await ada.post("/api/v1/discussions/frozen/comments", { body: "before" });
    expect(seeded.status).toBe(201);
    expect((await t.api.get(`/api/v1/comments/${seeded.body.id}`)).status).toBe(200);

    bouncer.pause();
    const timed = async (f: () => Promise<{ status: number; body: any }>) => {
      const started = Date.now();
      const r = await f();
      return { status: r.status, code: r.body?.code, ms: Date.now() - started };
    };
    const [write, read] = await Promise.all([
      timed(() => ada.post("/api/v1/discussions/frozen/comments", { body: "during" })),
      timed(() => t.api.get(`/api/v1/comments/${seeded.body.id}`)),
    ]);
    expect(write).toMatchObject({ status: 503, code: "unavailable" });
    expect(read).toMatchObject({ status: 503, code: "unavailable" });
    expect(write.ms).toBeLessThan(5000);
    expect(read.ms).toBeLessThan(5000);

    bouncer.resume();
    const until = Date.now() + 15_000;
    let statuses: number[] = [];
    while (Date.now() < until) {
      const [w, r] = await Promise.all([
        ada.post("/api/v1/discussions/frozen/comments", { body: "after" }),
        t.api.get(`/api/v1/comments/${seeded.body.id}`),
      ]);
      statuses = [w.status, r.status];
      if (w.status === 201 && r.status === 200) break;
      await new Promise((ok) => setTimeout(ok, 200));
    }
    expect(statuses).toEqual([201, 200]);
  });
});
