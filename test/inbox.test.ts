// The reader's inbox (contract section 19, src/modules/inbox/): a visible reply becomes an item of the
// parent's author, written with the comment; GET /api/v1/me/inbox and POST /api/v1/me/inbox/read with
// the reader's identity behind any key, and GraphQL myInbox/markInboxRead; items of comments rejected,
// deleted or erased are no longer listed, a reader's erasure takes their inbox; retention by
// inbox.retentionDays (the injectable clock, the retention job).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { client } from "./support/client.js";
import { createTestTenant } from "./support/fixtures.js";
import { manualClock } from "../src/lib/clock.js";
import { signAdminToken } from "../src/auth/admin-jwt.js";

const ORIGIN = "https://news.example";
const clock = manualClock(new Date("2026-11-01T00:00:00.000Z"));
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ RETENTION_INTERVAL_MS: "0" }, { clock });
});
afterAll(() => server?.stop());

const iat = () => Math.floor(clock.now().getTime() / 1000);

async function setup(settings: Record<string, unknown> = {}) {
  const t = await createTestTenant(server);
  expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [ORIGIN], ...settings })).status).toBe(200);
  // the admin token is signed when the server's clock says (it runs in the past)
  const adminToken = await signAdminToken({
    secret: server.app.runtime.services.adminJwtSecret,
    tenantId: t.tenantId,
    ttlSeconds: 3600,
    now: clock.now(),
  });
  const pk = (await client(server.url, { admin: adminToken }).post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
  const as = async (sub: string) => t.as({ key: t.apiKey, identity: await t.identity(sub, { iat: iat(), ttlSeconds: 3600 }) });
  /** the reader's page: the publishable key from an allowed origin */
  const page = async (sub: string) =>
    client(server.url, { key: pk, identity: await t.identity(sub, { iat: iat(), ttlSeconds: 3600 }), headers: { origin: ORIGIN } });
  return { t, as, page, ann: await as("ann"), bob: await as("bob"), annPage: await page("ann") };
}

const inboxIds = async (c: ReturnType<typeof client>, query = "") => {
  const r = await c.get(`/api/v1/me/inbox${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { ids: r.body.items.map((i: any) => i.comment.id), unreadCount: r.body.unreadCount, body: r.body };
};

describe("the inbox", () => {
  it("keeps a reply for the parent's author, as REST shows the comment and its parent; any key; GraphQL the same", async () => {
    const { t, ann, bob, annPage } = await setup();
    expect((await t.api.put("/api/v1/discussions/in-1", { title: "Rivers", url: "https://news.example/rivers" })).status).toBe(201);
    const top = (await ann.post("/api/v1/discussions/in-1/comments", { body: "top" })).body;
    // her own reply and a comment of no one's thread are not items
    expect((await ann.post("/api/v1/discussions/in-1/comments", { body: "mine", parentId: top.id })).status).toBe(201);
    expect((await bob.post("/api/v1/discussions/in-1/comments", { body: "alone" })).status).toBe(201);
    expect((await inboxIds(annPage)).ids).toEqual([]);
    const reply = (await bob.post("/api/v1/discussions/in-1/comments", { body: "re", parentId: top.id })).body;

    const r = await annPage.get("/api/v1/me/inbox");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      items: [
        {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          type: "reply",
          discussionId: "in-1",
          discussionTitle: "Rivers",
          // as GET /api/v1/comments/{id} answers the same caller
          comment: (await annPage.get(`/api/v1/comments/${reply.id}`)).body,
          parent: (await annPage.get(`/api/v1/comments/${top.id}`)).body,
          createdAt: clock.now().toISOString(),
          readAt: null,
        },
      ],
      nextCursor: null,
      unreadCount: 1,
    });
    // bob's inbox is his own
    expect((await inboxIds(bob)).ids).toEqual([]);
    // an identity is required
    expect((await t.api.get("/api/v1/me/inbox")).status).toBe(401);

    const gql = await annPage.raw("POST", "/graphql", {
      query: `{ myInbox(first: 5) { unreadCount edges { node { id type comment { id } parent { id } discussionTitle readAt } } pageInfo { hasNextPage } } }`,
    });
    expect(gql.body).toEqual({
      data: {
        myInbox: {
          unreadCount: 1,
          edges: [
            {
              node: {
                id: r.body.items[0].id,
                type: "reply",
                comment: { id: reply.id },
                parent: { id: top.id },
                discussionTitle: "Rivers",
                readAt: null,
              },
            },
          ],
          pageInfo: { hasNextPage: false },
        },
      },
    });
  });

  it("lists newest first in keyset pages, unread only on request, and marks items read by id or all", async () => {
    const { t, ann, bob, annPage } = await setup();
    const top = (await ann.post("/api/v1/discussions/in-2/comments", { body: "top" })).body;
    const replies: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      replies.push((await bob.post("/api/v1/discussions/in-2/comments", { body: `re ${i}`, parentId: top.id })).body.id);
    }
    // each reader's items are numbered by their own sequence (what a stream of the inbox resumes from)
    const prisma = server.app.runtime.services.prisma;
    const rows = await prisma.inboxItem.findMany({ where: { tenantId: t.tenantId }, orderBy: { createdAt: "asc" } });
    expect(rows.map((r) => [r.readerId, r.seq, r.commentId])).toEqual(replies.map((id, i) => ["ann", i + 1, id]));
    const first = await inboxIds(annPage, "?limit=2");
    expect(first.ids).toEqual([replies[2], replies[1]]);
    expect(first.unreadCount).toBe(3);
    const second = await inboxIds(annPage, `?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.ids).toEqual([replies[0]]);
    expect(second.body.nextCursor).toBeNull();
    // a cursor belongs to its list
    expect((await annPage.get(`/api/v1/me/inbox?unread=true&cursor=${first.body.nextCursor}`)).status).toBe(400);

    const newest = first.body.items[0];
    const read = await annPage.post("/api/v1/me/inbox/read", { ids: [newest.id] });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ unreadCount: 2 });
    // another reader cannot mark ann's items
    expect((await bob.post("/api/v1/me/inbox/read", { ids: [first.body.items[1].id] })).body).toEqual({ unreadCount: 0 });
    const after = await inboxIds(annPage);
    expect(after.body.items[0].readAt).toBe(clock.now().toISOString());
    expect(after.body.items.slice(1).map((i: any) => i.readAt)).toEqual([null, null]);
    expect((await inboxIds(annPage, "?unread=true")).ids).toEqual([replies[1], replies[0]]);

    const gql = await annPage.raw("POST", "/graphql", { query: `mutation { markInboxRead(input: { all: true }) { unreadCount } }` });
    expect(gql.body).toEqual({ data: { markInboxRead: { unreadCount: 0 } } });
    expect((await inboxIds(annPage, "?unread=true")).ids).toEqual([]);
    expect((await inboxIds(annPage)).ids).toHaveLength(3);
    expect((await t.api.post("/api/v1/me/inbox/read", { all: true })).status).toBe(401);
  });

  it("refuses bad bodies with 422, listing every problem", async () => {
    const { annPage } = await setup();
    const cases: [unknown, string[]][] = [
      [{}, ["ids"]],
      [{ ids: [], all: true }, ["all", "ids"]],
      [{ all: false }, ["all"]],
      [{ ids: ["nope", "00000000-0000-0000-0000-000000000000", "x"] }, ["ids[0]", "ids[2]"]],
      [{ ids: "x", extra: 1 }, ["extra"]],
      [{ ids: [1] }, ["ids[0]"]],
    ];
    for (const [body, paths] of cases) {
      const r = await annPage.post("/api/v1/me/inbox/read", body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe("validation_failed");
      expect(r.body.errors.map((e: any) => e.path).sort(), JSON.stringify(r.body)).toEqual(paths);
    }
  });

  it("keeps a held reply only once it is approved", async () => {
    const { t, ann, bob, annPage } = await setup();
    const top = (await ann.post("/api/v1/discussions/in-3/comments", { body: "top" })).body;
    expect((await t.api.patch("/api/v1/settings", { moderation: "pre" })).status).toBe(200);
    const held = (await bob.post("/api/v1/discussions/in-3/comments", { body: "re", parentId: top.id })).body;
    expect(held.status).toBe("pending");
    expect((await inboxIds(annPage)).ids).toEqual([]);
    const moderator = t.api;
    expect((await moderator.post(`/api/v1/comments/${held.id}/approve`, {})).status).toBe(200);
    expect(await inboxIds(annPage)).toMatchObject({ ids: [held.id], unreadCount: 1 });
  });
});

describe("items that disappear", () => {
  it("when their comment is rejected, deleted or its author erased; the reader's erasure takes their inbox", async () => {
    const { t, ann, bob, as, annPage } = await setup();
    const cy = await as("cy");
    const top = (await ann.post("/api/v1/discussions/in-4/comments", { body: "top" })).body;
    const reply = async (who: typeof bob, body: string) => {
      clock.advance(1000);
      return (await who.post("/api/v1/discussions/in-4/comments", { body, parentId: top.id })).body;
    };
    const byBob = await reply(bob, "bob");
    const toDelete = await reply(bob, "deleted");
    const byCy = await reply(cy, "cy");
    clock.advance(1000);
    const kept = (await (await as("dee")).post("/api/v1/discussions/in-4/comments", { body: "dee", parentId: top.id })).body;
    expect(await inboxIds(annPage)).toMatchObject({ ids: [kept.id, byCy.id, toDelete.id, byBob.id], unreadCount: 4 });

    const moderator = t.api;
    expect((await moderator.post(`/api/v1/comments/${byBob.id}/reject`, {})).status).toBe(200);
    expect((await bob.del(`/api/v1/comments/${toDelete.id}`)).status).toBe(204);
    const manager = t.api;
    expect((await manager.del("/api/v1/readers/cy")).status).toBe(204);
    expect(await inboxIds(annPage)).toMatchObject({ ids: [kept.id], unreadCount: 1 });

    // approved again, the reply is back
    expect((await moderator.post(`/api/v1/comments/${byBob.id}/approve`, {})).status).toBe(200);
    expect(await inboxIds(annPage)).toMatchObject({ ids: [kept.id, byBob.id], unreadCount: 2 });

    const prisma = server.app.runtime.services.prisma;
    expect(await prisma.inboxItem.count({ where: { tenantId: t.tenantId, readerId: "ann" } })).toBe(4);
    expect((await ann.del("/api/v1/me")).status).toBe(204);
    expect(await prisma.inboxItem.count({ where: { tenantId: t.tenantId, readerId: "ann" } })).toBe(0);
    expect(await prisma.inboxCounter.count({ where: { tenantId: t.tenantId, readerId: "ann" } })).toBe(0);
  });
});

describe("items that disappear, erasure in delete mode", () => {
  it("when their author is erased and the reply removed", async () => {
    const { t, ann, as, annPage } = await setup({ privacy: { erasure: "delete" } });
    const top = (await ann.post("/api/v1/discussions/in-6/comments", { body: "top" })).body;
    const byEve = (await (await as("eve")).post("/api/v1/discussions/in-6/comments", { body: "eve", parentId: top.id })).body;
    clock.advance(1000);
    const kept = (await (await as("fay")).post("/api/v1/discussions/in-6/comments", { body: "fay", parentId: top.id })).body;
    expect(await inboxIds(annPage)).toMatchObject({ ids: [kept.id, byEve.id], unreadCount: 2 });
    expect((await t.api.del("/api/v1/readers/eve")).status).toBe(204);
    expect((await t.api.get(`/api/v1/comments/${byEve.id}`)).status).toBe(404);
    expect(await inboxIds(annPage)).toMatchObject({ ids: [kept.id], unreadCount: 1 });
  });
});

describe("retention", () => {
  it("inbox.retentionDays (default 90, validated): older items are not listed and the retention job deletes them", async () => {
    const { t, ann, bob, as, page } = await setup();
    expect((await t.api.get("/api/v1/settings")).body.inbox).toEqual({ retentionDays: 90 });
    const bad = await t.api.patch("/api/v1/settings", { inbox: { retentionDays: 0 } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.path)).toEqual(["inbox.retentionDays"]);
    const ok = await t.api.patch("/api/v1/settings", { inbox: { retentionDays: 2 } });
    expect(ok.status).toBe(200);
    expect(ok.body.inbox).toEqual({ retentionDays: 2 });

    const top = (await ann.post("/api/v1/discussions/in-5/comments", { body: "top" })).body;
    const old = (await bob.post("/api/v1/discussions/in-5/comments", { body: "old", parentId: top.id })).body;
    clock.advance(86_400_000);
    // identities are signed when the clock says
    const recent = (await (await as("bob")).post("/api/v1/discussions/in-5/comments", { body: "recent", parentId: top.id })).body;
    clock.advance(86_400_000 + 1000);
    const annPage = await page("ann");
    expect(await inboxIds(annPage)).toMatchObject({ ids: [recent.id], unreadCount: 1 });

    const prisma = server.app.runtime.services.prisma;
    const count = () => prisma.inboxItem.count({ where: { tenantId: t.tenantId } });
    expect(await count()).toBe(2);
    const r = await server.app.runtime.retention.runOnce();
    expect(r!.inboxItems).toBeGreaterThanOrEqual(1);
    expect((await prisma.inboxItem.findMany({ where: { tenantId: t.tenantId } })).map((i) => i.commentId)).toEqual([recent.id]);
    expect(await inboxIds(annPage)).toMatchObject({ ids: [recent.id], unreadCount: 1 });
    expect(old.status).toBe("approved");
  });
});
