// Idempotency-Key on writes (contract section 11), against the real server, database and Redis:
// repeats answer the first outcome without writing twice, a key is bound to one request, a repeat
// while the first runs is 409, refusals are not kept, keys expire, two instances share them, and a
// post whose answer was lost to a database that answered too late (it committed, the client got a
// 503) answers the original 201 on retry.
import { createServer, type Server, type Socket, connect } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { manualClock } from "../src/lib/clock.js";
import { writeTx } from "../src/events/write-tx.js";
import { startReceiver } from "./support/receiver.js";
import type { Res } from "./support/client.js";

const POST_COMMENT = `mutation IdemPostComment($discussionId: String!, $body: String!) {
  postComment(discussionId: $discussionId, input: { body: $body }) { id body }
}`;

let a: TestServer;
let b: TestServer;
let db: pg.Client;

beforeAll(async () => {
  [a, b] = await Promise.all([startServer(), startServer()]);
  db = new pg.Client({ connectionString: inject("databaseUrl") });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await Promise.all([a?.stop(), b?.stop()]);
});

const key = () => `k-${crypto.randomUUID()}`;
const withKey = (k: string) => ({ headers: { "idempotency-key": k } });

async function commentCount(tenantId: string, discussionId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>("SELECT count(*) AS n FROM comments WHERE tenant_id = $1 AND discussion_id = $2", [
    tenantId,
    discussionId,
  ]);
  return Number(rows[0]!.n);
}

describe("REST writes with Idempotency-Key", () => {
  let t: TestTenant;
  beforeAll(async () => {
    t = await createTestTenant(a);
  });

  it("answers a repeat with the first outcome, without writing twice", async () => {
    const reader = await t.reader("ada");
    const k = key();
    const first = await reader.post("/api/v1/discussions/idem-1/comments", { body: "Hello once" }, withKey(k));
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await reader.post("/api/v1/discussions/idem-1/comments", { body: "Hello once" }, withKey(k));
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await commentCount(t.tenantId, "idem-1")).toBe(1);
    // a plain retry without a key writes again: what the key is for
    expect((await reader.post("/api/v1/discussions/idem-1/comments", { body: "Hello once" })).status).toBe(201);
    expect(await commentCount(t.tenantId, "idem-1")).toBe(2);
  });

  it("keeps a post's outcome in the post's own statement: its result, the key unlocked; a repeat rebuilds the same answer at once", async () => {
    const reader = await t.reader("otto");
    const k = key();
    const first = await reader.post("/api/v1/discussions/idem-outcome/comments", { body: "Kept once" }, withKey(k));
    expect(first.status).toBe(201);
    const row = async () =>
      (
        await db.query<{ status: number | null; response: string | null; results: unknown[]; unlocked: boolean }>(
          "SELECT status, response, results, locked_until <= created_at AS unlocked FROM idempotency_keys WHERE tenant_id = $1 AND key = $2",
          [t.tenantId, k],
        )
      ).rows[0]!;
    // no second statement kept an answer: the write's recorded result is the outcome, and nothing holds the key
    const kept = await row();
    expect(kept.status).toBeNull();
    expect(kept.response).toBeNull();
    expect(kept.results).toHaveLength(1);
    expect((kept.results[0] as { row: { comment: { id: string } } }).row.comment.id).toBe(first.body.id);
    expect(kept.unlocked).toBe(true);
    // a repeat right away is the same answer (status, body, Location), rebuilt from that result, not 409
    const again = await reader.post("/api/v1/discussions/idem-outcome/comments", { body: "Kept once" }, withKey(k));
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(again.body).toEqual(first.body);
    // the repeat kept its answer; later repeats answer it
    expect((await row()).status).toBe(201);
    const third = await reader.post("/api/v1/discussions/idem-outcome/comments", { body: "Kept once" }, withKey(k));
    expect(third.body).toEqual(first.body);
    expect(await commentCount(t.tenantId, "idem-outcome")).toBe(1);
  });

  it("refuses the same key for a different request: body, path, credential or reader", async () => {
    const ada = await t.reader("ada");
    const k = key();
    expect((await ada.post("/api/v1/discussions/idem-2/comments", { body: "one" }, withKey(k))).status).toBe(201);
    const tries = [
      await ada.post("/api/v1/discussions/idem-2/comments", { body: "two" }, withKey(k)),
      await ada.post("/api/v1/discussions/idem-2b/comments", { body: "one" }, withKey(k)),
      await (await t.reader("bob")).post("/api/v1/discussions/idem-2/comments", { body: "one" }, withKey(k)),
      await ada.raw("PATCH", "/api/v1/discussions/idem-2/comments", { body: "one" }, withKey(k)),
    ];
    for (const r of tries.slice(0, 3)) {
      expect(r.status).toBe(422);
      expect(r.body.code).toBe("idempotency_key_reused");
    }
    expect(await commentCount(t.tenantId, "idem-2")).toBe(1);
    expect(await commentCount(t.tenantId, "idem-2b")).toBe(0);
  });

  it("does not keep refusals: a failed validation can be corrected under the same key", async () => {
    const reader = await t.reader("cy");
    const k = key();
    const bad = await reader.post("/api/v1/discussions/idem-3/comments", { body: "   " }, withKey(k));
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe("validation_failed");
    const good = await reader.post("/api/v1/discussions/idem-3/comments", { body: "fixed" }, withKey(k));
    expect(good.status).toBe(201);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
  });

  it("refuses a malformed key with 400 and never touches the write", async () => {
    const reader = await t.reader("dee");
    for (const bad of ["x".repeat(256), "has space", "é"]) {
      const r = await reader.raw("POST", "/api/v1/discussions/idem-4/comments", { body: "x" }, { headers: { "idempotency-key": bad } });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("invalid_parameter");
    }
    expect(await commentCount(t.tenantId, "idem-4")).toBe(0);
  });

  it("replays answers that hold a secret shown once, and stores them sealed", async () => {
    const k = key();
    const first = await t.api.post("/api/v1/keys", { label: "bot", capabilities: [] }, withKey(k));
    expect(first.status).toBe(201);
    const again = await t.api.post("/api/v1/keys", { label: "bot", capabilities: [] }, withKey(k));
    expect(again.status).toBe(201);
    expect(again.body.key).toBe(first.body.key);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const keys = await t.api.get("/api/v1/keys?limit=100");
    expect(keys.body.items.filter((i: { label: string }) => i.label === "bot")).toHaveLength(1);
    const { rows } = await db.query<{ response: string; results: unknown }>(
      "SELECT response, results::text AS results FROM idempotency_keys WHERE tenant_id = $1 AND key = $2",
      [t.tenantId, k],
    );
    expect(rows[0]!.response).not.toContain(first.body.key);
    expect(String(rows[0]!.results)).not.toContain(first.body.key);
  });

  it("answers a repeated DELETE with its 204, where a plain repeat is 404", async () => {
    const created = await t.api.post("/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["*"] });
    expect(created.status).toBe(201);
    const path = `/api/v1/webhooks/${created.body.webhookId}`;
    const k = key();
    expect((await t.api.del(path, withKey(k))).status).toBe(204);
    const again = await t.api.del(path, withKey(k));
    expect(again.status).toBe(204);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await t.api.del(path)).status).toBe(404);
  });

  it("answers 409 while the first request still runs (its moderation hook answers slowly), on either instance, then the first outcome", async () => {
    // with a moderation hook the key is claimed before the hook is asked, so a repeat meanwhile is told 409
    const tt = await createTestTenant(a);
    const hook = await startReceiver(() => ({ status: 200, body: { decision: "approve" }, delayMs: 1_500 }));
    try {
      expect((await tt.api.patch("/api/v1/settings", { safety: { hook: { url: hook.url, timeoutMs: 5_000 } } })).status).toBe(200);
      await tt.api.put("/api/v1/discussions/idem-5", { title: "busy" });
      const reader = await tt.reader("eve");
      const readerOnB = (await createReaderOn(b, tt, "eve"))!;
      const k = key();
      const first = reader.post("/api/v1/discussions/idem-5/comments", { body: "slow" }, withKey(k));
      await until(async () => {
        const { rows } = await db.query("SELECT 1 FROM idempotency_keys WHERE tenant_id = $1 AND key = $2", [tt.tenantId, k]);
        return rows.length === 1;
      });
      for (const c of [reader, readerOnB]) {
        const busy = await c.post("/api/v1/discussions/idem-5/comments", { body: "slow" }, withKey(k));
        expect(busy.status).toBe(409);
        expect(busy.body.code).toBe("idempotency_in_progress");
        expect(Number(busy.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }
      const done = await first;
      expect(done.status).toBe(201);
      const replay = await readerOnB.post("/api/v1/discussions/idem-5/comments", { body: "slow" }, withKey(k));
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body.id).toBe(done.body.id);
      expect(await commentCount(tt.tenantId, "idem-5")).toBe(1);
    } finally {
      await hook.close();
    }
  });

  it("claims the key in the post's own statement: one statement, and a repeat that meets it mid-write writes nothing", async () => {
    const reader = await t.reader("ivy");
    await t.api.put("/api/v1/discussions/idem-7", { title: "held" });
    const k = key();
    // the post's statement is the one that makes the key: while it waits for the discussion's row, no key exists
    const locker = new pg.Client({ connectionString: inject("databaseUrl") });
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query("SELECT 1 FROM discussions WHERE tenant_id = $1 AND id = 'idem-7' FOR UPDATE", [t.tenantId]);
    let first: Promise<Res>;
    let second: Promise<Res>;
    try {
      first = reader.post("/api/v1/discussions/idem-7/comments", { body: "once" }, withKey(k));
      await until(async () => (await waitingOnLock(t.tenantId)) >= 1);
      second = reader.post("/api/v1/discussions/idem-7/comments", { body: "once" }, withKey(k));
      await until(async () => (await waitingOnLock(t.tenantId)) >= 2);
      const { rows } = await db.query("SELECT 1 FROM idempotency_keys WHERE tenant_id = $1 AND key = $2", [t.tenantId, k]);
      expect(rows).toHaveLength(0);
    } finally {
      await locker.query("ROLLBACK");
      await locker.end();
    }
    const answers = await Promise.all([first!, second!]);
    const created = answers.find((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null)!;
    expect(created).toBeDefined();
    // the other one found the key taken when its statement tried to make it: the first's answer, or 409 until it is kept
    const other = answers.find((r) => r !== created)!;
    if (other.status === 201) expect(other.body).toEqual(created.body);
    else expect(other.body.code).toBe("idempotency_in_progress");
    expect(await commentCount(t.tenantId, "idem-7")).toBe(1);
    const again = await reader.post("/api/v1/discussions/idem-7/comments", { body: "once" }, withKey(k));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(created.body);
  });

  it("rolls back a transaction write whose key another request took over (fenced in eng_idempotency_record)", async () => {
    const services = a.app.runtime.services;
    const k = key();
    const claim = await services.idempotency.claim({ tenantId: t.tenantId, key: k, fingerprint: "f", now: new Date(), ttlHours: 24 });
    expect(claim.kind).toBe("run");
    if (claim.kind !== "run") return;
    const write = (owner: string) =>
      writeTx({ app: services, idempotency: { ...claim.scope, owner, replay: [], writes: 0 } }, t.tenantId, async (tx) => {
        await tx.$executeRaw`INSERT INTO discussions (tenant_id, id, updated_at) VALUES (${t.tenantId}, ${owner}, now())`;
        return { owner };
      });
    // a request given up as dead: another one now owns the key, so this write records nothing and rolls back
    await expect(write("fenced-out")).rejects.toMatchObject({ status: 409, code: "idempotency_in_progress" });
    // the owner's own write records its result and stays
    await expect(write(claim.scope.owner)).resolves.toEqual({ owner: claim.scope.owner });
    const { rows } = await db.query<{ id: string }>("SELECT id FROM discussions WHERE tenant_id = $1 AND id IN ('fenced-out', $2)", [
      t.tenantId,
      claim.scope.owner,
    ]);
    expect(rows.map((r) => r.id)).toEqual([claim.scope.owner]);
  });

  it("lets concurrent retries write once", async () => {
    const reader = await t.reader("fay");
    const k = key();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? reader : reader).post("/api/v1/discussions/idem-6/comments", { body: "race" }, withKey(k)),
      ),
    );
    for (const r of answers) expect([201, 409]).toContain(r.status);
    const created = answers.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    const last = await reader.post("/api/v1/discussions/idem-6/comments", { body: "race" }, withKey(k));
    expect(last.status).toBe(201);
    expect(last.body.id).toBe(created[0]!.body.id);
    expect(await commentCount(t.tenantId, "idem-6")).toBe(1);
  });
});

describe("GraphQL mutations with Idempotency-Key", () => {
  it("answers a repeated mutation with the first answer; the key is bound to its request", async () => {
    const t = await createTestTenant(a);
    const reader = await t.reader("gus");
    const k = key();
    const vars = { discussionId: "idem-g1", body: "via graphql" };
    const first = await reader.raw("POST", "/graphql", { query: POST_COMMENT, variables: vars }, withKey(k));
    expect(first.status).toBe(200);
    expect(first.body.data.postComment.body).toBe("via graphql");
    const again = await (await createReaderOn(b, t, "gus"))!.raw("POST", "/graphql", { query: POST_COMMENT, variables: vars }, withKey(k));
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await commentCount(t.tenantId, "idem-g1")).toBe(1);

    const other = await reader.raw("POST", "/graphql", { query: POST_COMMENT, variables: { ...vars, body: "changed" } }, withKey(k));
    expect(other.status).toBe(422);
    expect(other.body.errors[0].extensions.code).toBe("idempotency_key_reused");
    // a refused mutation (no write) is not kept
    const k2 = key();
    const refused = await reader.raw("POST", "/graphql", { query: POST_COMMENT, variables: { ...vars, body: " " } }, withKey(k2));
    expect(refused.body.errors[0].extensions.code).toBe("validation_failed");
    const fixed = await reader.raw("POST", "/graphql", { query: POST_COMMENT, variables: { ...vars, body: "ok now" } }, withKey(k2));
    expect(fixed.body.data.postComment.body).toBe("ok now");
    expect(fixed.headers.get("idempotent-replayed")).toBeNull();
  });

  it("ignores the header on queries", async () => {
    const t = await createTestTenant(a);
    const k = key();
    const q = { query: "{ discussions(first: 1) { edges { node { id } } } }" };
    expect((await t.api.raw("POST", "/graphql", q, withKey(k))).status).toBe(200);
    const r = await t.api.raw("POST", "/graphql", q, withKey(k));
    expect(r.status).toBe(200);
    expect(r.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("expiry", () => {
  it("forgets a key after the tenant's idempotency.ttlHours", async () => {
    const clock = manualClock(new Date());
    // a database of its own: the retention pass below, two days ahead, would delete every other file's events
    const own = await isolatedDatabase("idem_expiry");
    const s = await startServer(own.env, { clock });
    try {
      const t = await createTestTenant(s);
      expect((await t.api.get("/api/v1/settings")).body.idempotency).toEqual({ ttlHours: 24 });
      const k = key();
      expect((await t.api.put("/api/v1/discussions/idem-exp", { title: "A" }, withKey(k))).status).toBe(201);
      clock.advance(23 * 3_600_000);
      expect((await t.api.put("/api/v1/discussions/idem-exp", { title: "B" }, withKey(k))).status).toBe(422);
      clock.advance(2 * 3_600_000);
      const reused = await t.api.put("/api/v1/discussions/idem-exp", { title: "B" }, withKey(k));
      expect(reused.status).toBe(200);
      expect(reused.body.title).toBe("B");
      // and the retention pass deletes what has expired
      clock.advance(25 * 3_600_000);
      await s.app.runtime.retention.runOnce();
      expect(await s.app.runtime.services.prisma.idempotencyKey.count({ where: { tenantId: t.tenantId, key: k } })).toBe(0);
    } finally {
      await s.stop();
      await own.drop();
    }
  });
});

describe("an answer lost to a database that answered too late", () => {
  let proxy: HoldingProxy;
  let s: TestServer;
  beforeAll(async () => {
    proxy = await holdingProxy(new URL(inject("databaseUrl")));
    const url = new URL(inject("databaseUrl"));
    url.host = `127.0.0.1:${proxy.port}`;
    // long enough that the post's statement reaches PostgreSQL and commits on a loaded machine
    s = await startServer({ DATABASE_URL: url.toString(), DATABASE_TIMEOUT_MS: "2000" });
  });
  afterAll(async () => {
    await s?.stop();
    proxy?.close();
  });

  it("answers the original 201 on retry: the write committed, the client got 503", async () => {
    const t = await createTestTenant(s);
    const reader = await t.reader("hal");
    await t.api.put("/api/v1/discussions/idem-lost", { title: "lost" });
    const k = key();
    // the post's statement reaches PostgreSQL and commits; its answer is held until pg gives up
    proxy.holdRepliesTo("eng_post_comment");
    const lost = await reader.post("/api/v1/discussions/idem-lost/comments", { body: "only once" }, withKey(k));
    proxy.holdRepliesTo(null);
    expect(lost.status).toBe(503);
    await until(async () => (await commentCount(t.tenantId, "idem-lost")) === 1);
    // the key's lease is let go in the background after a 503; until then a retry is told 409 with
    // Retry-After, and a client tries again, as this one does
    let retry = await reader.post("/api/v1/discussions/idem-lost/comments", { body: "only once" }, withKey(k));
    for (let i = 0; retry.status === 409 && i < 100; i++) {
      expect(retry.body.code).toBe("idempotency_in_progress");
      expect(Number(retry.headers.get("retry-after"))).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 200));
      retry = await reader.post("/api/v1/discussions/idem-lost/comments", { body: "only once" }, withKey(k));
    }
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    const { rows } = await db.query<{ id: string }>("SELECT id FROM comments WHERE tenant_id = $1 AND discussion_id = 'idem-lost'", [
      t.tenantId,
    ]);
    expect(retry.body.id).toBe(rows[0]!.id);
    expect(retry.body.body).toBe("only once");
    // and it is kept from then on
    const again = await reader.post("/api/v1/discussions/idem-lost/comments", { body: "only once" }, withKey(k));
    expect(again.body).toEqual(retry.body);
    expect(await commentCount(t.tenantId, "idem-lost")).toBe(1);
  });
});

// --- helpers

async function createReaderOn(server: TestServer, t: TestTenant, sub: string) {
  const { client } = await import("./support/client.js");
  return client(server.url, { key: t.apiKey, identity: await t.identity(sub) });
}

/** Statements of the tenant's posts waiting for a lock (the discussion's row) in pg_stat_activity. */
async function waitingOnLock(_tenantId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%eng_post_comment%' AND datname = current_database()",
  );
  return Number(rows[0]!.n);
}

async function until(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("timed out");
}

interface HoldingProxy {
  port: number;
  /** From now on, a connection that sends a statement containing `marker` gets no more answers. */
  holdRepliesTo(marker: string | null): void;
  close(): void;
}

/** A TCP proxy in front of PostgreSQL that can swallow the answers to one statement. */
async function holdingProxy(target: URL): Promise<HoldingProxy> {
  let marker: Buffer | null = null;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let held = false;
    client.on("data", (chunk) => {
      if (marker && chunk.includes(marker)) held = true;
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (!held) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as { port: number }).port,
    holdRepliesTo: (m) => void (marker = m ? Buffer.from(m) : null),
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
