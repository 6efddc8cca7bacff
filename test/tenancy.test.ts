// Tenancy by construction (src/db/tenant-store.ts): a query written the wrong way — one that forgets
// the tenant — cannot read another tenant's rows through a tenant's store. The scoped Prisma client
// adds the tenant to every model query, and the tenant guard refuses every plain or raw statement
// not tied to the tenant's id before it runs. And the guard's picture of the schema is the schema's.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { TenantGuardRefusal } from "../src/db/tenant-guard.js";
import { ACROSS_TENANTS, GUARDED_TABLES, ROW_TRIGGERS, SCALAR_FIRST } from "../src/db/tenant-tables.js";
import { TENANT_MODELS } from "../src/db/tenant-scope.js";
import type { TenantStore } from "../src/db/tenant-store.js";
import { store, type RequestContext } from "../src/context/request.js";
import { AppError } from "../src/lib/errors.js";
import { writeTx, type ScopedTx } from "../src/events/write-tx.js";

let server: TestServer;
let a: TestTenant;
let b: TestTenant;
let storeA: TenantStore;
let theirs: string;
let ours: string;
let db: pg.Client;

beforeAll(async () => {
  server = await startServer();
  a = await createTestTenant(server);
  b = await createTestTenant(server);
  const post = async (t: TestTenant, body: string) => {
    const r = await (await t.reader("author")).post("/api/v1/discussions/same-name/comments", { body });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  ours = await post(a, "A's comment");
  theirs = await post(b, "B's secret comment");
  storeA = server.app.runtime.services.stores(a.tenantId);
  db = new pg.Client({ connectionString: inject("databaseUrl") });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await server?.stop();
});

describe("a query that forgets the tenant, through tenant A's store", () => {
  it("Prisma: finds nothing of B's, even asked by id alone", async () => {
    expect(await storeA.prisma.comment.findFirst({ where: { id: theirs } })).toBeNull();
    expect(await storeA.prisma.comment.findMany({ where: { discussionId: "same-name" }, select: { id: true } })).toEqual([{ id: ours }]);
    expect(await storeA.prisma.comment.count()).toBe(1);
    // the model write cannot reach it either
    expect((await storeA.prisma.comment.updateMany({ where: { id: theirs }, data: { body: "changed" } })).count).toBe(0);
  });

  it("plain SQL: refused before it runs, not filtered after", async () => {
    const wrong = [
      "SELECT body FROM comments WHERE id = $2",
      "SELECT body FROM comments WHERE tenant_id = $1 OR id = $2",
      "SELECT c.body FROM discussions d JOIN comments c ON c.discussion_id = d.id WHERE d.tenant_id = $1 AND c.id = $2",
      "UPDATE comments SET body = 'changed' WHERE id = $2",
    ];
    for (const text of wrong) {
      await expect(storeA.sql.query(text, [theirs])).rejects.toBeInstanceOf(TenantGuardRefusal);
    }
    // B's row is as it was: nothing ran
    const { rows } = await db.query("SELECT body FROM comments WHERE id = $1", [theirs]);
    expect(rows[0].body).toBe("B's secret comment");
    // written the right way, the same question answers for A's own row, and not for B's
    const right = "SELECT body FROM comments WHERE tenant_id = $1 AND id = $2";
    expect(await storeA.sql.query(right, [ours])).toEqual([{ body: "A's comment" }]);
    expect(await storeA.sql.query(right, [theirs])).toEqual([]);
  });

  it("Prisma's raw statements: refused unless tied to the tenant's id", async () => {
    await expect(storeA.prisma.$queryRaw`SELECT body FROM comments WHERE id = ${theirs}`).rejects.toBeInstanceOf(TenantGuardRefusal);
    await expect(storeA.prisma.$queryRawUnsafe("SELECT body FROM comments WHERE id = $1", theirs)).rejects.toBeInstanceOf(
      TenantGuardRefusal,
    );
    await expect(storeA.prisma.$executeRaw`DELETE FROM comments WHERE id = ${theirs}`).rejects.toBeInstanceOf(TenantGuardRefusal);
    // another tenant's id as the "tenant" is not the store's tenant
    await expect(
      storeA.prisma.$queryRaw`SELECT body FROM comments WHERE tenant_id = ${b.tenantId} AND id = ${theirs}`,
    ).rejects.toBeInstanceOf(TenantGuardRefusal);
    expect(await storeA.prisma.$queryRaw`SELECT body FROM comments WHERE tenant_id = ${a.tenantId} AND id = ${ours}`).toEqual([
      { body: "A's comment" },
    ]);
    const { rows } = await db.query("SELECT count(*)::int AS n FROM comments WHERE id = $1", [theirs]);
    expect(rows[0].n).toBe(1);
  });

  it("a write: the store binds A's id as $1; one that passes the tenant itself, or none, is refused before it runs", async () => {
    const state = async () =>
      (
        await db.query(
          `SELECT c.status, (SELECT count(*)::int FROM events e WHERE e.tenant_id = c.tenant_id) AS events FROM comments c WHERE c.id = $1`,
          [theirs],
        )
      ).rows[0];
    const before = await state();
    expect(before.status).toBe("approved");
    // written the wrong way: the write function called by hand, B's id passed as a value, as a literal, or no tenant at all
    const wrong: [string, unknown[]][] = [
      ["SELECT eng_set_comment_status($2, $3, 'rejected', now()) AS r", [b.tenantId, theirs]],
      [`SELECT eng_set_comment_status('${b.tenantId}', $2, 'rejected', now()) AS r`, [theirs]],
      ["SELECT eng_set_comment_status((SELECT tenant_id FROM comments WHERE id = $2), $2, 'rejected', now()) AS r", [theirs]],
      ["SELECT eng_auto_lock_discussions(now(), 500) AS r", []],
    ];
    for (const [text, values] of wrong) {
      await expect(storeA.sql.query(text, values)).rejects.toBeInstanceOf(TenantGuardRefusal);
    }
    // the right way, through a request of A's: the function is given A's id, so B's comment is not found
    const ctxA: RequestContext = {
      app: server.app.runtime.services,
      principal: { kind: "admin", tenantId: a.tenantId, subject: "tenancy-test", capabilities: new Set(["moderate_content"]) },
      identityToken: null,
      cache: {},
    };
    const write = store(ctxA).write("eng_set_comment_status", { id: theirs, to: "rejected", at: new Date() });
    await expect(write).rejects.toBeInstanceOf(AppError);
    await expect(write).rejects.toMatchObject({ code: "not_found" });
    // nothing ran: B's comment is as it was, and no event was appended
    expect(await state()).toEqual(before);
    // and A's own comment is written as asked
    const mine = await store(ctxA).write("eng_set_comment_pinned", { id: ours, pinned: true, at: new Date() });
    expect(mine).toMatchObject({ id: ours, pinned: true });
  });

  it("a transaction: writeTx(ctx) is the request's tenant's; a statement on B's rows in it is refused before it runs", async () => {
    const ctxA = {
      app: server.app.runtime.services,
      principal: { kind: "admin", tenantId: a.tenantId, subject: "tenancy-test", capabilities: new Set(["manage_settings"]) },
      identityToken: null,
      cache: {},
    } satisfies RequestContext;
    const body = async () => (await db.query("SELECT body FROM comments WHERE id = $1", [theirs])).rows[0].body;
    // written the wrong way: B's row by id alone, under B's id passed as a value, or by a literal id
    const wrong: ((tx: ScopedTx) => Promise<unknown>)[] = [
      (tx) => tx.$executeRaw`UPDATE comments SET body = 'changed' WHERE id = ${theirs}`,
      (tx) => tx.$executeRaw`UPDATE comments SET body = 'changed' WHERE tenant_id = ${b.tenantId} AND id = ${theirs}`,
      (tx) => tx.$executeRawUnsafe(`DELETE FROM comments WHERE tenant_id = '${b.tenantId}' AND id = $1`, theirs),
      (tx) => tx.$queryRaw`SELECT body FROM comments WHERE tenant_id = ${a.tenantId} OR id = ${theirs}`,
    ];
    for (const fn of wrong) await expect(writeTx(ctxA, fn)).rejects.toBeInstanceOf(TenantGuardRefusal);
    // a model write of B's row finds nothing to change in A's transaction
    expect(
      await writeTx(ctxA, async (tx) => (await tx.comment.updateMany({ where: { id: theirs }, data: { body: "changed" } })).count),
    ).toBe(0);
    expect(await body()).toBe("B's secret comment");
    // the same statement tied to A's own id runs, on A's row only
    const mine = await writeTx(
      ctxA,
      (tx) => tx.$queryRaw<{ id: string }[]>`
      UPDATE comments SET body = body WHERE tenant_id = ${a.tenantId} AND id IN (${ours}, ${theirs}) RETURNING id`,
    );
    expect(mine).toEqual([{ id: ours }]);
    // no caller, no tenant: refused as a request without credentials is
    await expect(writeTx({ ...ctxA, principal: null }, async () => 1)).rejects.toMatchObject({ code: "unauthenticated" });
  });

  it("the API answers 404 for B's comment with A's key", async () => {
    expect((await a.api.get(`/api/v1/comments/${theirs}`)).status).toBe(404);
  });
});

describe("the guard's picture of the schema is the schema's", () => {
  it("every table with a tenant_id is guarded as a tenant table, and every Prisma model with tenantId is scoped", async () => {
    // a partition (the event log's days) is reached only through its table, which the guard knows:
    // named on its own, the guard refuses it as a table it does not know
    const notPartition = `NOT EXISTS (SELECT 1 FROM pg_class pc JOIN pg_namespace pn ON pn.oid = pc.relnamespace
                                       WHERE pn.nspname = current_schema() AND pc.relname = table_name AND pc.relispartition)`;
    const { rows } = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns
        WHERE column_name = 'tenant_id' AND table_schema = current_schema() AND ${notPartition} ORDER BY table_name`,
    );
    expect([...GUARDED_TABLES.tenant].sort()).toEqual(rows.map((r) => r.table_name));
    const models = server.app.runtime.services.prisma as unknown as Record<string, unknown>;
    const { rows: all } = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND ${notPartition}`,
    );
    // every other table is the tenants' own, a child of a tenant table, or not tenant data
    const others = all.map((r) => r.table_name).filter((t) => !GUARDED_TABLES.tenant.includes(t));
    expect(others.sort()).toEqual(
      [...GUARDED_TABLES.root, ...GUARDED_TABLES.child, ...GUARDED_TABLES.server, "_prisma_migrations", "secret_key_check"].sort(),
    );
    expect(models).toBeTruthy();
  });

  it("the tenant scope covers every model with a tenantId", async () => {
    const { Prisma } = await import("../src/generated/prisma/client.js");
    const withTenant = Object.values(Prisma.ModelName).filter((m) => {
      const fields = (Prisma as unknown as Record<string, Record<string, string>>)[`${m}ScalarFieldEnum`];
      return fields && "tenantId" in fields;
    });
    expect([...TENANT_MODELS].sort()).toEqual(withTenant.sort());
  });

  it("our database functions take the tenant's id first, a row first, or are listed as taking a value, working across tenants or run on a row's insert", async () => {
    const { rows } = await db.query<{ name: string; first: string | null; type: string | null }>(
      `SELECT p.proname AS name, p.proargnames[1] AS first, format_type(p.proargtypes[0], NULL) AS type
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = current_schema() AND p.proname LIKE 'eng\\_%'`,
    );
    const tables = new Set([...GUARDED_TABLES.tenant, ...GUARDED_TABLES.child, ...GUARDED_TABLES.root]);
    const odd = rows.filter(
      (r) =>
        r.first !== "p_tenant" &&
        !tables.has(r.type ?? "") &&
        !SCALAR_FIRST.has(r.name) &&
        !ACROSS_TENANTS.has(r.name) &&
        !ROW_TRIGGERS.has(r.name),
    );
    expect(odd).toEqual([]);
  });
});
