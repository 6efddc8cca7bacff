// Listing comments: sort orders, pinned first, keyset pagination under concurrent inserts,
// parameter errors, and a bounded number of SQL queries for a page of 100 with authors.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PrismaPg } from "@prisma/adapter-pg";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { manualClock } from "../src/lib/clock.js";
import { PrismaClient } from "../src/generated/prisma/client.js";
import { createScopeCache } from "../src/db/tenant-scope.js";
import { createTenantStores } from "../src/db/tenant-store.js";
import { TestCommentsDocument } from "./generated/operations.js";

let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

const ids = (r: any) => r.body.items.map((c: any) => c.id);

describe("sort orders", () => {
  it("newest, oldest, top (reactionTotal desc, then createdAt desc), pinned first", async () => {
    const clock = manualClock(new Date());
    const s = await startServer({}, { clock });
    try {
      const tt = await createTestTenant(s);
      const as = async (sub: string) =>
        tt.as({ key: tt.apiKey, identity: await tt.identity(sub, { iat: Math.floor(clock.now().getTime() / 1000) }) });
      const a = await as("s-a");
      const c: string[] = [];
      for (const body of ["c0", "c1", "c2", "c3"]) {
        c.push((await a.post("/api/v1/discussions/sort-1/comments", { body })).body.id);
        clock.advance(1000);
      }
      for (const [sub, id] of [
        ["r1", c[0]],
        ["r2", c[0]],
        ["r1", c[2]],
        ["r2", c[3]],
      ] as const) {
        expect((await (await as(sub)).post(`/api/v1/comments/${id}/reactions`, { kind: "like" })).status).toBe(200);
      }
      const get = (q: string) => tt.api.get(`/api/v1/discussions/sort-1/comments${q}`);
      expect(ids(await get(""))).toEqual([c[3], c[2], c[1], c[0]]);
      expect(ids(await get("?sort=newest"))).toEqual([c[3], c[2], c[1], c[0]]);
      expect(ids(await get("?sort=oldest"))).toEqual([c[0], c[1], c[2], c[3]]);
      expect(ids(await get("?sort=top"))).toEqual([c[0], c[3], c[2], c[1]]);

      await tt.api.post(`/api/v1/comments/${c[1]}/pin`);
      expect(ids(await get("?sort=newest"))).toEqual([c[1], c[3], c[2], c[0]]);
      expect(ids(await get("?sort=oldest"))).toEqual([c[1], c[0], c[2], c[3]]);
      expect(ids(await get("?sort=top"))).toEqual([c[1], c[0], c[3], c[2]]);

      // Pages of one across the pinned boundary, for every sort.
      for (const sort of ["newest", "oldest", "top"]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const r: any = await get(`?sort=${sort}&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
          expect(r.status).toBe(200);
          seen.push(...ids(r));
          cursor = r.body.nextCursor;
        } while (cursor);
        expect(seen).toEqual(ids(await get(`?sort=${sort}`)));
      }
    } finally {
      await s.stop();
    }
  });
});

describe("pagination", () => {
  it("is stable while comments are inserted concurrently", async () => {
    const a = t.as({ key: t.apiKey, identity: await t.identity("p-a") });
    const original: string[] = [];
    for (let i = 0; i < 30; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, j) => a.post("/api/v1/discussions/page-1/comments", { body: `c${i + j}` })),
      );
      original.push(...batch.map((r) => r.body.id));
    }
    for (const sort of ["newest", "oldest", "top"]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let n = 0;
      do {
        const [page]: any[] = await Promise.all([
          t.api.get(`/api/v1/discussions/page-1/comments?sort=${sort}&limit=7${cursor ? `&cursor=${cursor}` : ""}`),
          ...Array.from({ length: 3 }, () => a.post("/api/v1/discussions/page-1/comments", { body: `new ${sort} ${n}` })),
        ]);
        expect(page.status).toBe(200);
        seen.push(...ids(page));
        cursor = page.body.nextCursor;
        n++;
      } while (cursor && n < 40);
      expect(new Set(seen).size).toBe(seen.length); // no duplicates
      for (const id of original) expect(seen).toContain(id); // nothing skipped
    }
  });

  it("answers 400 invalid_parameter for bad sort/status/limit/cursor, 404 for an unknown discussion", async () => {
    const a = t.as({ key: t.apiKey, identity: await t.identity("q-a") });
    await a.post("/api/v1/discussions/params-1/comments", { body: "x" });
    await a.post("/api/v1/discussions/params-1/comments", { body: "y" });
    const newest = await t.api.get("/api/v1/discussions/params-1/comments?limit=1");
    expect(newest.body.nextCursor).toEqual(expect.any(String));
    for (const q of [
      "sort=hot",
      "status=deleted",
      "status=nope",
      "limit=0",
      "limit=101",
      "limit=abc",
      "cursor=garbage",
      `sort=top&cursor=${newest.body.nextCursor}`,
      "sort=newest&sort=oldest",
    ]) {
      const r = await t.api.get(`/api/v1/discussions/params-1/comments?${q}`);
      expect([q, r.status, r.body.code]).toEqual([q, 400, "invalid_parameter"]);
    }
    expect((await t.api.get("/api/v1/discussions/params-1/comments?limit=100")).status).toBe(200);
    const missing = await t.api.get("/api/v1/discussions/no-such-discussion/comments");
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    expect((await t.api.get("/api/v1/discussions/bad%20id/comments")).status).toBe(400);
    expect((await t.api.get("/api/v1/comments/cmt_nope")).status).toBe(404);
  });
});

describe("query count", () => {
  it("lists 100 comments with authors and reactions in one SQL statement, and reads one comment in one", async () => {
    const tt = await createTestTenant(server);
    const prisma = server.app.runtime.services.prisma;
    await prisma.discussion.create({ data: { tenantId: tt.tenantId, id: "n1" } });
    await prisma.reader.createMany({
      data: Array.from({ length: 100 }, (_, i) => ({ tenantId: tt.tenantId, id: `r${i}`, name: `Reader ${i}` })),
    });
    const base = Date.now();
    await prisma.comment.createMany({
      data: Array.from({ length: 100 }, (_, i) => ({
        id: `cmt_n1_${String(i).padStart(3, "0")}`,
        tenantId: tt.tenantId,
        discussionId: "n1",
        authorId: `r${i}`,
        body: `comment ${i}`,
        status: "approved" as const,
        createdAt: new Date(base + i),
        publishedAt: new Date(base + i),
        reactionCounts: { like: (i % 5) + 1, wow: 1 },
        reactionTotal: (i % 5) + 2,
      })),
    });

    const counting = new PrismaClient({
      adapter: new PrismaPg({ connectionString: inject("databaseUrl") }),
      log: [{ emit: "event", level: "query" }],
    });
    let queries = 0;
    (counting as any).$on("query", () => queries++);
    const services = server.app.runtime.services;
    const original = services.scoped;
    const originalSql = services.sql;
    const originalStores = services.stores;
    services.scoped = createScopeCache(counting);
    services.sql = {
      query: (text, values, name) => {
        queries++;
        return originalSql.query(text, values, name);
      },
      long: (text, values, timeoutMs) => {
        queries++;
        return originalSql.long(text, values, timeoutMs);
      },
    };
    services.stores = createTenantStores(services.scoped, services.sql);
    try {
      const measure = async (fn: () => Promise<unknown>) => {
        queries = 0;
        await fn();
        return queries;
      };
      let rest: any;
      const q100 = await measure(async () => (rest = await tt.api.get("/api/v1/discussions/n1/comments?limit=100&sort=top")));
      expect(rest.status).toBe(200);
      expect(rest.body.items).toHaveLength(100);
      expect(new Set(rest.body.items.map((c: any) => c.author.name)).size).toBe(100);
      expect(rest.body.items[0].reactions).toEqual({ like: 5, wow: 1 });
      const q5 = await measure(() => tt.api.get("/api/v1/discussions/n1/comments?limit=5"));
      let gql: any;
      const qGql = await measure(async () => (gql = await tt.api.gql(TestCommentsDocument, { discussionId: "n1", limit: 100 })));
      expect(gql.data.comments.items).toHaveLength(100);
      expect(gql.data.comments.items.every((c: any) => c.author.name.startsWith("Reader "))).toBe(true);
      expect(q100).toBeGreaterThan(0);
      // one statement: the discussion's existence, the page of comments and their authors
      expect(q100).toBe(1);
      expect(q100).toBe(q5);
      expect(qGql).toBe(q100);
      // the discussion beside the page: read by the page's own statement, not a second one
      let withDiscussion: any;
      const qWith = await measure(
        async () =>
          (withDiscussion = await tt.api.raw("POST", "/graphql", {
            query: `{ comments(discussionId: "n1", first: 5) { discussion { id commentCount seq state } edges { node { id } } } }`,
          })),
      );
      expect(withDiscussion.body.errors).toBeUndefined();
      expect(withDiscussion.body.data.comments.edges).toHaveLength(5);
      const row = await prisma.discussion.findUniqueOrThrow({ where: { tenantId_id: { tenantId: tt.tenantId, id: "n1" } } });
      expect(withDiscussion.body.data.comments.discussion).toEqual({
        id: "n1",
        commentCount: row.commentCount,
        seq: row.seq,
        state: "open",
      });
      expect(qWith).toBe(1);
      // One comment: the row and its author in one statement, nothing reloaded by the GraphQL layer.
      expect(await measure(() => tt.api.get("/api/v1/comments/cmt_n1_007"))).toBe(1);
    } finally {
      services.scoped = original;
      services.sql = originalSql;
      services.stores = originalStores;
      await counting.$disconnect();
    }
  });
});

describe("the first level of a thread", () => {
  it("topLevel=true lists only comments that reply to none, pages on its own cursors, and refuses bad values", async () => {
    const r = await t.reader("tl-reader");
    const top: string[] = [];
    for (const body of ["t0", "t1", "t2"]) top.push((await r.post("/api/v1/discussions/top-1/comments", { body })).body.id);
    await r.post("/api/v1/discussions/top-1/comments", { body: "reply", parentId: top[0] });
    const all = await t.api.get("/api/v1/discussions/top-1/comments");
    expect(all.body.items).toHaveLength(4);
    const first = await t.api.get("/api/v1/discussions/top-1/comments?topLevel=true&limit=2");
    expect(ids(first)).toEqual([top[2], top[1]]);
    const second = await t.api.get(`/api/v1/discussions/top-1/comments?topLevel=true&limit=2&cursor=${first.body.nextCursor}`);
    expect(ids(second)).toEqual([top[0]]);
    expect(second.body.items[0].replyCount).toBe(1);
    // a cursor of the flat list is not one of the first level's
    const flat = await t.api.get("/api/v1/discussions/top-1/comments?limit=1");
    expect((await t.api.get(`/api/v1/discussions/top-1/comments?topLevel=true&cursor=${flat.body.nextCursor}`)).status).toBe(400);
    const bad = await t.api.get("/api/v1/discussions/top-1/comments?topLevel=yes");
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("invalid_parameter");
    const both = await t.api.get(`/api/v1/discussions/top-1/comments?topLevel=true&parentId=${top[0]}`);
    expect(both.status).toBe(400);
    expect(both.body.errors).toEqual([{ path: "topLevel", message: "lists the first level: it cannot go with parentId" }]);
  });

  it("GraphQL's page carries the discussion as its statement read it: the count and the seq its stream's events follow; null on replies", async () => {
    const r = await t.reader("tl-seq");
    const a = (await r.post("/api/v1/discussions/top-seq/comments", { body: "a" })).body.id as string;
    await r.post("/api/v1/discussions/top-seq/comments", { body: "b" });
    await r.post("/api/v1/discussions/top-seq/comments", { body: "a reply", parentId: a });
    const query = `query($after: String) { comments(discussionId: "top-seq", topLevel: true, first: 1, after: $after) {
      discussion { commentCount seq } edges { node { id replies(first: 5) { discussion { seq } edges { node { id } } } } } pageInfo { endCursor } } }`;
    const page = (await t.api.raw("POST", "/graphql", { query })).body;
    expect(page.errors).toBeUndefined();
    // three comments: three comment_created events, each with the next seq
    expect(page.data.comments.discussion).toEqual({ commentCount: 3, seq: 3 });
    expect(page.data.comments.edges[0].node.replies.discussion).toBeNull();
    await r.post("/api/v1/discussions/top-seq/comments", { body: "c" });
    const next = (await t.api.raw("POST", "/graphql", { query, variables: { after: page.data.comments.pageInfo.endCursor } })).body;
    expect(next.data.comments.discussion).toEqual({ commentCount: 4, seq: 4 });
  });
});
