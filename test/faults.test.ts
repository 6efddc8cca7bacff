// Dependencies that stall or die: the service answers 503 `unavailable` within 5 s on every route
// (never a hang or a 500) and recovers when they come back (contract section 9); the claim of an
// Idempotency-Key whose request failed meanwhile is let go within seconds of the return. The PostgreSQL
// here is the test's own process on a free port, paused with SIGSTOP and crashed like
// `pg_ctl stop -m immediate` — never the machine's own database.
import pg_ from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, type App } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { migratePostgres } from "../src/db/migrate.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startOwnPostgres, type OwnPostgres } from "./support/own-services.js";
import type { TestServer } from "./support/server.js";

/** how long PostgreSQL stays down after the keyed request's 503 (its claim's release fails meanwhile) */
const DOWN_AFTER_503_MS = 9_000;
/** a retry runs within this of the database's return (the claim's lease is 30 s) */
const RELEASED_WITHIN_MS = 4_000;

let pg: OwnPostgres;
let app: App;
let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  pg = await startOwnPostgres();
  await migratePostgres(pg.url);
  app = await buildApp(
    loadConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: pg.url,
      ADMIN_JWT_SECRET: "fault-test-admin-secret-0123456789abcdef012",
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
      RUN_WEBHOOK_WORKER: "0",
      DATABASE_TIMEOUT_MS: "1500",
    }),
    { migrate: false },
  );
  const url = await app.start();
  server = { url, app, stop: () => app.stop() };
  t = await createTestTenant(server);
}, 60_000);

afterAll(async () => {
  pg?.resume();
  await app?.stop().catch(() => undefined);
  await pg?.stop();
});

/** Every kind of route: REST read and write (plain SQL and Prisma paths), GraphQL, the stream. */
async function everyRoute(): Promise<{ what: string; status: number; ms: number; code: unknown }[]> {
  const id = await t.identity("fault");
  const as = t.as({ key: t.apiKey, identity: id });
  const calls: [string, () => Promise<{ status: number; body: any }>][] = [
    ["list comments", () => t.api.get("/api/v1/discussions/f1/comments")],
    ["post comment", () => as.post("/api/v1/discussions/f1/comments", { body: "hello" })],
    ["list discussions", () => t.api.get("/api/v1/discussions")],
    ["keys", () => t.api.get("/api/v1/keys")],
    [
      "graphql",
      async () => {
        const r = await fetch(`${server.url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": t.apiKey },
          body: JSON.stringify({ query: '{ comments(discussionId: "f1") { items { id } } }' }),
        });
        const body: any = await r.json();
        // GraphQL over HTTP (application/json): a failed field is HTTP 200 with the problem's code and
        // status in the error's extensions
        const ext = body.errors?.[0]?.extensions;
        return { status: ext?.http?.status ?? ext?.status ?? r.status, body: { code: ext?.code } };
      },
    ],
  ];
  return Promise.all(
    calls.map(async ([what, call]) => {
      const started = Date.now();
      const r = await call();
      return { what, status: r.status, ms: Date.now() - started, code: r.body?.code };
    }),
  );
}

describe("PostgreSQL", () => {
  it("stalled (SIGSTOP): every route answers 503 unavailable within 5 s, and all is well once it resumes", async () => {
    expect((await t.api.get("/api/v1/discussions")).status).toBe(200);
    pg.pause();
    try {
      const results = await everyRoute();
      for (const r of results) {
        expect(r.status, r.what).toBe(503);
        expect(r.code, r.what).toBe("unavailable");
        expect(r.ms, r.what).toBeLessThan(5_000);
      }
    } finally {
      pg.resume();
    }
    await expect.poll(async () => (await t.api.get("/api/v1/discussions")).status, { timeout: 10_000 }).toBe(200);
  });

  it("crashed (stop -m immediate) and restarted: 503 meanwhile, never 500; acknowledged writes survive", async () => {
    const as = t.as({ key: t.apiKey, identity: await t.identity("crash") });
    const before = await as.post("/api/v1/discussions/f2/comments", { body: "before the crash" });
    expect(before.status).toBe(201);
    await pg.crash();
    for (const r of await everyRoute()) {
      expect(r.status, r.what).toBe(503);
      expect(r.ms, r.what).toBeLessThan(5_000);
    }
    // /readyz says which dependency is down, quickly; /healthz (the process) stays 200
    const started = Date.now();
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks.database).toBe("down");
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await pg.start();
    await expect.poll(async () => (await t.api.get(`/api/v1/comments/${before.body.id}`)).status, { timeout: 15_000 }).toBe(200);
    expect((await as.post("/api/v1/discussions/f2/comments", { body: "after" })).status).toBe(201);
  });
});

describe("PostgreSQL lost while a request under an Idempotency-Key runs", () => {
  it("the 503's claim is let go within seconds of the database's return: a retry with the key runs, not 409", async () => {
    const as = t.as({ key: t.apiKey, identity: await t.identity("idem-outage") });
    expect((await as.post("/api/v1/discussions/f3/comments", { body: "opens the discussion" })).status).toBe(201);
    const key = `outage-${Date.now()}`;
    const post = () => as.post("/api/v1/discussions/f3/comments", { body: "posted once" }, { headers: { "idempotency-key": key } });
    // the keyed post claims its key, then waits for the discussion's lock, held here, when the
    // database goes: what was sent to it is lost (a stall that ends in a restart or failover)
    const holder = new pg_.Client({ connectionString: pg.url });
    holder.on("error", () => undefined);
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM discussions WHERE tenant_id = $1 AND id = 'f3' FOR UPDATE", [t.tenantId]);
    const holderPid = (await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const first = post();
    await expect
      .poll(
        async () => {
          await holder.query("SELECT pg_stat_clear_snapshot()"); // pg_stat_activity is otherwise read once per transaction
          const sql = "SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))";
          return (await holder.query<{ n: number }>(sql, [holderPid])).rows[0]!.n;
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe(1);
    await pg.crash();
    await holder.end().catch(() => undefined);
    expect((await first).status).toBe(503);
    // down long enough for the key's release to have failed again and again in the background
    await new Promise((r) => setTimeout(r, DOWN_AFTER_503_MS));
    await pg.start();
    const back = Date.now();
    // a client honouring Retry-After: 409 while the claim is held, until it is let go
    let retry = await post();
    while (retry.status !== 201 && Date.now() - back < 15_000) {
      expect([409, 503]).toContain(retry.status);
      await new Promise((r) => setTimeout(r, 250));
      retry = await post();
    }
    expect(retry.status).toBe(201);
    expect(Date.now() - back).toBeLessThan(RELEASED_WITHIN_MS);
    const mine = (await t.api.get("/api/v1/discussions/f3/comments")).body.items.filter((c: any) => c.body === "posted once");
    expect(mine).toHaveLength(1);
  }, 60_000);
});

describe("PostgreSQL terminates idle connections", () => {
  it("(a restart of a pooler, pg_terminate_backend): the process stays up and the next request is answered", async () => {
    // fill the pool with idle connections
    await Promise.all(Array.from({ length: 6 }, () => t.api.get("/api/v1/discussions")));
    const admin = new pg_.Client({ connectionString: pg.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ n: number }>(
        "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    // an unhandled idle-connection error would have ended this process before this line
    await expect.poll(async () => (await t.api.get("/api/v1/discussions")).status, { timeout: 10_000 }).toBe(200);
  });
});

describe("Redis", () => {
  it("stalled (SIGSTOP): reads and writes still answer quickly (rate limits in process), /readyz says so; all is well after", async () => {
    const { startOwnRedis } = await import("./support/own-services.js");
    const { startServer } = await import("./support/server.js");
    const redis = await startOwnRedis();
    const s = await startServer({ REDIS_URL: redis.url });
    try {
      const tt = await createTestTenant(s);
      const as = tt.as({ key: tt.apiKey, identity: await tt.identity("redis-stall") });
      expect((await as.post("/api/v1/discussions/r1/comments", { body: "before" })).status).toBe(201);
      const { openSse } = await import("./support/sse.js");
      const live = openSse(`${s.url}/api/v1/stream/r1`, { "x-api-key": tt.apiKey });
      await live.waitFor((f) => f.some((x) => x.event === "connected"));
      redis.pause();
      try {
        const started = Date.now();
        const [list, post, ready] = await Promise.all([
          tt.api.get("/api/v1/discussions/r1/comments"),
          as.post("/api/v1/discussions/r1/comments", { body: "while Redis is stalled" }),
          fetch(`${s.url}/readyz`).then(async (r) => ({ status: r.status, body: (await r.json()) as any })),
        ]);
        expect(list.status).toBe(200);
        expect(post.status).toBe(201);
        expect(Date.now() - started).toBeLessThan(4_000);
        expect(ready.status).toBe(503);
        expect(ready.body.checks.redis).toBe("down");
        // a new stream opens too: the cross-instance connection count degrades to this instance's
        const during = openSse(`${s.url}/api/v1/stream/r1`, { "x-api-key": tt.apiKey });
        await during.waitFor((f) => f.some((x) => x.event === "connected"), 5_000);
        during.es.close();
      } finally {
        redis.resume();
      }
      await expect.poll(async () => (await fetch(`${s.url}/readyz`)).status, { timeout: 10_000 }).toBe(200);
      // the stream that was open all along gets what was written while Redis stalled (from the log)
      await live.waitFor(
        (f) => f.some((x) => x.event === "comment_created" && x.data?.data?.comment?.body === "while Redis is stalled"),
        15_000,
      );
      live.es.close();
      const items = (await tt.api.get("/api/v1/discussions/r1/comments")).body.items.map((c: any) => c.body);
      expect(items).toEqual(expect.arrayContaining(["before", "while Redis is stalled"]));
    } finally {
      await s.stop();
      await redis.stop();
    }
  });
});
