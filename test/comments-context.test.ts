// Permalinks (contract section 18): GET /comments/{id}/context answers the comment, its ancestors
// root first (each as GET /comments/{id} shows it) and a cursor with which the discussion's list
// answers a page that begins with the thread's top-level comment, for every sort, pinned or not;
// visibility as GET /comments/{id}.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { manualClock } from "../src/lib/clock.js";
import { TestCommentContextDocument } from "./generated/operations.js";

const SORTS = ["newest", "oldest", "top"] as const;
const clock = manualClock(new Date());
const T0 = clock.now().getTime();
let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  server = await startServer({}, { clock });
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

const ids = (r: any): string[] => r.body.items.map((c: any) => c.id);

/** A client of `tt`'s all-capability key acting as reader `sub` (the assertion issued at the server's time). */
async function as(tt: TestTenant, sub: string, key = tt.apiKey) {
  return tt.as({ key, identity: await tt.identity(sub, { iat: Math.floor(clock.now().getTime() / 1000) }) });
}

/** Every comment of the discussion's list in its order, 100 a page (`extra`: "&topLevel=true" for the first level's list). */
async function wholeList(tt: TestTenant, discussionId: string, sort: string, extra = ""): Promise<string[]> {
  const all: string[] = [];
  let cursor: string | null = null;
  do {
    const r: any = await tt.api.get(
      `/api/v1/discussions/${discussionId}/comments?sort=${sort}${extra}&limit=100${cursor ? `&cursor=${cursor}` : ""}`,
    );
    expect(r.status).toBe(200);
    all.push(...ids(r));
    cursor = r.body.nextCursor;
  } while (cursor);
  return all;
}

/** The list's page at `rootCursor` begins with `rootId` and is the list itself from there on, its next page too. */
async function expectPageAtRoot(
  tt: TestTenant,
  discussionId: string,
  sort: string,
  rootCursor: string,
  rootId: string,
  extra = "",
): Promise<number> {
  const whole = await wholeList(tt, discussionId, sort, extra);
  const at = whole.indexOf(rootId);
  const page = await tt.api.get(`/api/v1/discussions/${discussionId}/comments?sort=${sort}${extra}&cursor=${rootCursor}`);
  expect(page.status).toBe(200);
  expect(ids(page)[0]).toBe(rootId);
  expect(ids(page)).toEqual(whole.slice(at, at + 20));
  if (whole.length > at + 20) {
    const next = await tt.api.get(`/api/v1/discussions/${discussionId}/comments?sort=${sort}${extra}&cursor=${page.body.nextCursor}`);
    expect(ids(next)).toEqual(whole.slice(at + 20, at + 40));
  }
  return at;
}

describe("GET /comments/{id}/context", () => {
  it("a reply at depth 3 on page 7 of 300 comments: ancestors root first, and a root cursor for every sort, pinned or not", async () => {
    const prisma = server.app.runtime.services.prisma;
    const d = "perm-1";
    await prisma.discussion.create({ data: { tenantId: t.tenantId, id: d } });
    await prisma.reader.createMany({
      data: Array.from({ length: 10 }, (_, i) => ({ tenantId: t.tenantId, id: `bulk-${i}`, name: `Bulk ${i}` })),
    });
    await prisma.comment.createMany({
      data: Array.from({ length: 300 }, (_, i) => ({
        id: `cmt_perm_${String(i).padStart(3, "0")}`,
        tenantId: t.tenantId,
        discussionId: d,
        authorId: `bulk-${i % 10}`,
        body: `comment ${i}`,
        status: "approved" as const,
        createdAt: new Date(T0 + i * 1000),
        publishedAt: new Date(T0 + i * 1000),
        reactionCounts: i % 7 ? { like: i % 7 } : {},
        reactionTotal: i % 7,
      })),
    });
    // the thread, posted between comments 175 and 176: 124 comments and its 3 replies are newer
    clock.set(new Date(T0 + 175_500));
    const post = async (sub: string, parentId?: string) => {
      clock.advance(100);
      const r = await (
        await as(t, sub)
      ).post(`/api/v1/discussions/${d}/comments`, { body: `by ${sub}`, ...(parentId ? { parentId } : {}) });
      expect(r.status).toBe(201);
      return r.body.id as string;
    };
    const root = await post("alice");
    const r1 = await post("bob", root);
    const r2 = await post("alice", r1);
    const r3 = await post("carol", r2);
    expect((await (await as(t, "dave")).post(`/api/v1/comments/${root}/reactions`, { kind: "like" })).status).toBe(200);
    expect((await t.api.post(`/api/v1/comments/cmt_perm_010/pin`)).status).toBe(200); // another comment pinned first

    const context = await t.api.get(`/api/v1/comments/${r3}/context`);
    expect(context.status).toBe(200);
    expect(Object.keys(context.body)).toEqual(["comment", "ancestors", "rootCursor"]);
    // each in the shape GET /comments/{id} answers, authors included
    expect(context.body.comment).toEqual((await t.api.get(`/api/v1/comments/${r3}`)).body);
    const shown = await Promise.all([root, r1, r2].map(async (id) => (await t.api.get(`/api/v1/comments/${id}`)).body));
    expect(context.body.ancestors).toEqual(shown);
    expect(context.body.ancestors.map((c: any) => c.author.id)).toEqual(["alice", "bob", "alice"]);

    // the root is on page 7 of the default list (newest): a permalink cannot just open the first page
    let cursor: string | null = null;
    let pageOfRoot = 0;
    for (let n = 1; n <= 10 && !pageOfRoot; n++) {
      const page: any = await t.api.get(`/api/v1/discussions/${d}/comments${cursor ? `?cursor=${cursor}` : ""}`);
      if (ids(page).includes(root)) pageOfRoot = n;
      cursor = page.body.nextCursor;
    }
    expect(pageOfRoot).toBe(7);
    expect(await expectPageAtRoot(t, d, "newest", context.body.rootCursor, root)).toBeGreaterThan(120);

    for (const sort of SORTS) {
      const c = await t.api.get(`/api/v1/comments/${r3}/context?sort=${sort}`);
      expect(c.body.ancestors.map((a: any) => a.id)).toEqual([root, r1, r2]);
      expect(await expectPageAtRoot(t, d, sort, c.body.rootCursor, root)).toBeGreaterThan(20);
      // a cursor of one sort is not another's
      const other = sort === "top" ? "oldest" : "top";
      expect((await t.api.get(`/api/v1/discussions/${d}/comments?sort=${other}&cursor=${c.body.rootCursor}`)).status).toBe(400);
      // GraphQL: the same context
      const g = await t.api.gql(TestCommentContextDocument, { id: r3, sort });
      expect(g.data?.commentContext).toEqual({
        comment: { id: r3, depth: 3 },
        ancestors: [
          { id: root, depth: 0, author: { name: "Reader alice" } },
          { id: r1, depth: 1, author: { name: "Reader bob" } },
          { id: r2, depth: 2, author: { name: "Reader alice" } },
        ],
        rootCursor: c.body.rootCursor,
      });
    }

    // a top-level comment is its own root
    for (const id of [root, "cmt_perm_100"]) {
      for (const sort of SORTS) {
        const c = await t.api.get(`/api/v1/comments/${id}/context?sort=${sort}`);
        expect([c.status, c.body.comment.id, c.body.ancestors]).toEqual([200, id, []]);
        await expectPageAtRoot(t, d, sort, c.body.rootCursor, id);
      }
    }

    // a pinned root: first among the pinned (newest: the very first item of the list) or after another pinned one
    expect((await t.api.post(`/api/v1/comments/${root}/pin`)).status).toBe(200);
    const positions: Record<string, number> = {};
    for (const sort of SORTS) {
      const c = await t.api.get(`/api/v1/comments/${r2}/context?sort=${sort}`);
      expect(c.body.ancestors.map((a: any) => a.id)).toEqual([root, r1]);
      expect(c.body.ancestors[0].pinned).toBe(true);
      positions[sort] = await expectPageAtRoot(t, d, sort, c.body.rootCursor, root);
    }
    expect(positions).toEqual({ newest: 0, oldest: 1, top: 1 });

    // a deleted ancestor is the tombstone GET /comments/{id} and the list show
    expect((await t.api.del(`/api/v1/comments/${r1}`)).status).toBe(204);
    const afterDelete = await t.api.get(`/api/v1/comments/${r3}/context`);
    expect(afterDelete.body.ancestors.map((a: any) => [a.id, a.status, a.body])).toEqual([
      [root, "approved", "by alice"],
      [r1, "deleted", ""],
      [r2, "approved", "by alice"],
    ]);
    expect(afterDelete.body.ancestors[1]).toEqual((await t.api.get(`/api/v1/comments/${r1}`)).body);
    expect(await wholeList(t, d, "newest")).toContain(r1);
  });

  it("topLevel=true: the root cursor opens the first level's list (what a thread shows) at the top-level ancestor, for every sort, pinned or not", async () => {
    const u = await createTestTenant(server);
    const d = "perm-top";
    const prisma = server.app.runtime.services.prisma;
    await prisma.discussion.create({ data: { tenantId: u.tenantId, id: d } });
    await prisma.reader.create({ data: { tenantId: u.tenantId, id: "bulk", name: "Bulk" } });
    // 120 top-level comments, each but every fifth with a reply: the list of every level is longer and ordered otherwise
    const start = clock.now().getTime();
    await prisma.comment.createMany({
      data: Array.from({ length: 120 }, (_, i) => ({
        id: `cmt_top_${String(i).padStart(3, "0")}`,
        tenantId: u.tenantId,
        discussionId: d,
        authorId: "bulk",
        body: `top ${i}`,
        status: "approved" as const,
        createdAt: new Date(start - (200 - i) * 1000),
        publishedAt: new Date(start - (200 - i) * 1000),
        reactionCounts: i % 5 ? { like: i % 5 } : {},
        reactionTotal: i % 5,
        replyCount: i % 5 ? 1 : 0,
      })),
    });
    await prisma.comment.createMany({
      data: Array.from({ length: 120 }, (_, i) => i)
        .filter((i) => i % 5)
        .map((i) => ({
          id: `cmt_top_${String(i).padStart(3, "0")}_r`,
          tenantId: u.tenantId,
          discussionId: d,
          parentId: `cmt_top_${String(i).padStart(3, "0")}`,
          depth: 1,
          authorId: "bulk",
          body: `reply to ${i}`,
          status: "approved" as const,
          createdAt: new Date(start - (200 - i) * 1000 + 500),
          publishedAt: new Date(start - (200 - i) * 1000 + 500),
        })),
    });
    const root = "cmt_top_041";
    const posted = await (await as(u, "erin")).post(`/api/v1/discussions/${d}/comments`, { body: "deep", parentId: `${root}_r` });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    const reply = posted.body.id as string;
    expect((await u.api.post(`/api/v1/comments/cmt_top_007/pin`)).status).toBe(200);

    for (const sort of SORTS) {
      const c = await u.api.get(`/api/v1/comments/${reply}/context?sort=${sort}&topLevel=true`);
      expect(c.status).toBe(200);
      expect(c.body.ancestors.map((a: any) => a.id)).toEqual([root, `${root}_r`]);
      expect(await expectPageAtRoot(u, d, sort, c.body.rootCursor, root, "&topLevel=true")).toBeGreaterThan(20);
      // the first level's cursor is not one of the list of every level, nor the other way round
      expect((await u.api.get(`/api/v1/discussions/${d}/comments?sort=${sort}&cursor=${c.body.rootCursor}`)).status).toBe(400);
      const every = await u.api.get(`/api/v1/comments/${reply}/context?sort=${sort}&topLevel=false`);
      expect(every.body.rootCursor).not.toBe(c.body.rootCursor);
      await expectPageAtRoot(u, d, sort, every.body.rootCursor, root);
      expect((await u.api.get(`/api/v1/discussions/${d}/comments?sort=${sort}&topLevel=true&cursor=${every.body.rootCursor}`)).status).toBe(
        400,
      );
      // GraphQL: the same cursor
      const g = await u.api.gql(TestCommentContextDocument, { id: reply, sort, topLevel: true });
      expect(g.data?.commentContext.rootCursor).toBe(c.body.rootCursor);
    }
    // a pinned root is among the pinned, in their order (the other pinned one is older and has more reactions)
    expect((await u.api.post(`/api/v1/comments/${root}/pin`)).status).toBe(200);
    const positions: Record<string, number> = {};
    for (const sort of SORTS) {
      const c = await u.api.get(`/api/v1/comments/${reply}/context?sort=${sort}&topLevel=true`);
      positions[sort] = await expectPageAtRoot(u, d, sort, c.body.rootCursor, root, "&topLevel=true");
    }
    expect(positions).toEqual({ newest: 0, oldest: 1, top: 1 });
    // not a boolean: refused as the list refuses it
    const bad = await u.api.get(`/api/v1/comments/${reply}/context?topLevel=yes`);
    const listBad = await u.api.get(`/api/v1/discussions/${d}/comments?topLevel=yes`);
    expect([bad.status, bad.body.code, bad.body.errors]).toEqual([listBad.status, listBad.body.code, listBad.body.errors]);
  });

  it("another tenant's id and an unknown id are 404; a bad sort is refused as the list refuses it", async () => {
    const a = await as(t, "p-a");
    const id = (await a.post("/api/v1/discussions/perm-2/comments", { body: "x" })).body.id;
    const other = await createTestTenant(server);
    for (const r of [await other.api.get(`/api/v1/comments/${id}/context`), await t.api.get("/api/v1/comments/cmt_nope/context")]) {
      expect([r.status, r.body.code]).toEqual([404, "not_found"]);
    }
    expect((await other.api.gql(TestCommentContextDocument, { id })).errors?.[0]?.extensions?.code).toBe("not_found");
    for (const q of ["sort=hot", "sort=newest&sort=oldest"]) {
      const list = await t.api.get(`/api/v1/discussions/perm-2/comments?${q}`);
      const r = await t.api.get(`/api/v1/comments/${id}/context?${q}`);
      expect([r.status, r.body.code, r.body.errors]).toEqual([list.status, list.body.code, list.body.errors]);
      expect([r.status, r.body.code]).toEqual([400, "invalid_parameter"]);
    }
  });

  it("a pending comment: 404 to a reader, its context to its author and to a moderator", async () => {
    const u = await createTestTenant(server);
    const root = (await (await as(u, "alice")).post("/api/v1/discussions/perm-3/comments", { body: "root" })).body.id;
    expect((await u.api.patch("/api/v1/settings", { moderation: "pre" })).status).toBe(200);
    const plain = (await keyWith(u, [])).key;
    const reply = await (await as(u, "bob", plain)).post("/api/v1/discussions/perm-3/comments", { body: "held", parentId: root });
    expect(reply.body.status).toBe("pending");
    const path = `/api/v1/comments/${reply.body.id}/context`;
    for (const r of [await u.as({ key: plain }).get(path), await (await as(u, "carol", plain)).get(path)]) {
      expect([r.status, r.body.code]).toEqual([404, "not_found"]);
    }
    const author = await (await as(u, "bob", plain)).get(path);
    expect([author.status, author.body.comment.status, author.body.ancestors.map((a: any) => a.id)]).toEqual([200, "pending", [root]]);
    const moderator = u.as({ key: (await keyWith(u, ["moderate_content"])).key });
    const seen = await moderator.get(path);
    expect([seen.status, seen.body.comment.id, seen.body.ancestors.map((a: any) => a.id)]).toEqual([200, reply.body.id, [root]]);
    await expectPageAtRoot(u, "perm-3", "newest", seen.body.rootCursor, root);
    // a pending top-level comment, newer than the root: the moderator's cursor opens the list where it would be
    clock.advance(1000);
    const held = (await (await as(u, "bob", plain)).post("/api/v1/discussions/perm-3/comments", { body: "held too" })).body.id;
    const top = await moderator.get(`/api/v1/comments/${held}/context`);
    expect([top.status, top.body.ancestors]).toEqual([200, []]);
    const page = await u.api.get(`/api/v1/discussions/perm-3/comments?cursor=${top.body.rootCursor}`);
    expect(ids(page)).toEqual([root]);
  });
});
