// Comments over REST (and GraphQL): posting, threading, reading, editing, deleting, identity rules.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignJWT } from "jose";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { generateApiKey } from "../src/auth/key-auth.js";
import { newId } from "../src/lib/ids.js";
import { manualClock } from "../src/lib/clock.js";
import { TestCommentsDocument, TestPostCommentDocument } from "./generated/operations.js";
import { loggedEvents } from "./support/event-log.js";

let server: TestServer;
let t: TestTenant;
let other: TestTenant;

const prisma = () => server.app.runtime.services.prisma;

async function keyWith(s: TestServer, tenantId: string, capabilities: string[]): Promise<string> {
  const k = generateApiKey();
  await s.app.runtime.services.prisma.apiKey.create({
    data: { id: newId("key"), tenantId, label: "test", keyHash: k.hash, prefix: k.prefix, capabilities },
  });
  return k.raw;
}

async function setSettings(s: TestServer, tenantId: string, settings: Record<string, number | string | string[]>) {
  await s.app.runtime.services.prisma.tenant.update({ where: { id: tenantId }, data: { settings } });
  s.app.runtime.services.authCache.invalidateTenant(tenantId); // written behind the API's back
}

/** A client acting as reader `sub` through a key with no capabilities (a plain publisher key). */
async function reader(tt: TestTenant, key: string, sub: string, claims: Parameters<TestTenant["identity"]>[1] = {}) {
  return tt.as({ key, identity: await tt.identity(sub, claims) });
}

const eventsOf = (tenantId: string, discussionId: string) =>
  loggedEvents(prisma(), { where: { tenantId, discussionId }, orderBy: { seq: "asc" } });

let plainKey: string;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  other = await createTestTenant(server);
  plainKey = await keyWith(server, t.tenantId, []);
});
afterAll(() => server?.stop());

describe("POST /discussions/{id}/comments", () => {
  it("creates the discussion, upserts the reader and answers 201 with the comment", async () => {
    const alice = await reader(t, plainKey, "alice", { name: "Alice", avatarUrl: "https://img.example/a.png" });
    const r = await alice.post("/api/v1/discussions/post-1/comments", { body: "First!" });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^cmt_/),
      discussionId: "post-1",
      parentId: null,
      author: { id: "alice", name: "Alice", avatarUrl: "https://img.example/a.png", badge: null },
      body: "First!",
      bodyHtml: "<p>First!</p>",
      status: "approved",
      pinned: false,
      editedAt: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      reactions: {},
      replyCount: 0,
      score: 0,
      upvotes: 0,
      downvotes: 0,
      kind: "comment",
    });
    const d = await t.api.get("/api/v1/discussions/post-1");
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ state: "open", commentCount: 1 });

    // The reader is updated when the assertion changes name/avatar; older comments show it.
    const alice2 = await reader(t, plainKey, "alice", { name: "Alice B." });
    expect((await alice2.post("/api/v1/discussions/post-1/comments", { body: "again" })).status).toBe(201);
    const row = await prisma().reader.findUnique({ where: { tenantId_id: { tenantId: t.tenantId, id: "alice" } } });
    expect(row).toMatchObject({ name: "Alice B.", avatarUrl: null });
    const first = await t.api.get(`/api/v1/comments/${r.body.id}`);
    expect(first.body.author).toEqual({ id: "alice", name: "Alice B.", avatarUrl: null, badge: null });
  });

  it("threads replies: depth, replyCount, parent of the same discussion only", async () => {
    const a = await reader(t, plainKey, "ta");
    const b = await reader(t, plainKey, "tb");
    const root = (await a.post("/api/v1/discussions/thread-1/comments", { body: "root" })).body;
    const r1 = await b.post("/api/v1/discussions/thread-1/comments", { body: "reply", parentId: root.id });
    expect(r1.status).toBe(201);
    expect(r1.body).toMatchObject({ parentId: root.id });
    const r2 = await a.post("/api/v1/discussions/thread-1/comments", { body: "reply 2", parentId: r1.body.id });
    expect(r2.body).toMatchObject({ parentId: r1.body.id });
    // depth is stored (and selectable over GraphQL); REST shows the contract's fields only
    const depths = await prisma().comment.findMany({
      where: { id: { in: [root.id, r1.body.id, r2.body.id] } },
      select: { id: true, depth: true },
    });
    expect(Object.fromEntries(depths.map((c) => [c.id, c.depth]))).toEqual({ [root.id]: 0, [r1.body.id]: 1, [r2.body.id]: 2 });
    expect((await t.api.get(`/api/v1/comments/${root.id}`)).body.replyCount).toBe(1);
    expect((await t.api.get(`/api/v1/comments/${r1.body.id}`)).body.replyCount).toBe(1);

    const direct = await t.api.get(`/api/v1/discussions/thread-1/comments?parentId=${root.id}`);
    expect(direct.body.items.map((c: any) => c.id)).toEqual([r1.body.id]);
    const flat = await t.api.get("/api/v1/discussions/thread-1/comments?sort=oldest");
    expect(flat.body.items.map((c: any) => [c.id, c.parentId])).toEqual([
      [root.id, null],
      [r1.body.id, root.id],
      [r2.body.id, r1.body.id],
    ]);

    // Unknown parent, and a parent of another discussion: 422 on parentId.
    const unknown = await a.post("/api/v1/discussions/thread-1/comments", { body: "x", parentId: "cmt_nope" });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([{ path: "parentId", message: expect.any(String) }]);
    const foreign = await a.post("/api/v1/discussions/thread-2/comments", { body: "x", parentId: root.id });
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors[0].path).toBe("parentId");
    // The failed post did not create thread-2.
    expect((await t.api.get("/api/v1/discussions/thread-2")).status).toBe(404);
  });

  it("validates the body (422, every problem listed) and the discussion id (400)", async () => {
    const a = await reader(t, plainKey, "val");
    const missing = await a.post("/api/v1/discussions/val-1/comments", {});
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ code: "validation_failed", errors: [{ path: "body", message: "is required" }] });
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
    expect((await a.post("/api/v1/discussions/val-1/comments", { body: "   " })).body.errors[0].path).toBe("body");
    const wrongType = await a.post("/api/v1/discussions/val-1/comments", { body: 5 });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.errors[0].path).toBe("body");
    const both = await a.post("/api/v1/discussions/val-1/comments", { body: "", parentId: "" });
    expect(both.body.errors.map((e: any) => e.path).sort()).toEqual(["body", "parentId"]);
    expect((await a.post("/api/v1/discussions/val-1/comments", { body: "x".repeat(10_000) })).status).toBe(201);
    expect((await a.post("/api/v1/discussions/val-1/comments", { body: "x".repeat(10_001) })).status).toBe(422);
    expect((await a.post("/api/v1/discussions/val-1/comments", { body: "nul\u0000" })).status).toBe(422);
    const badId = await a.post("/api/v1/discussions/has%20space/comments", { body: "x" });
    expect(badId.status).toBe(400);
    expect(badId.body.code).toBe("invalid_parameter");
    expect((await a.post("/api/v1/discussions/val-1/comments", "not json")).status).toBe(400);
  });

  it("honours maxBodyLength and refuses locked (409) and archived (409) discussions", async () => {
    const tt = await createTestTenant(server);
    await setSettings(server, tt.tenantId, { maxBodyLength: 20 });
    const a = tt.as({ key: tt.apiKey, identity: await tt.identity("m") });
    expect((await a.post("/api/v1/discussions/len/comments", { body: "x".repeat(20) })).status).toBe(201);
    const long = await a.post("/api/v1/discussions/len/comments", { body: "é".repeat(21) });
    expect(long.status).toBe(422);
    expect(long.body.errors[0].message).toContain("20");

    await tt.api.post("/api/v1/discussions/len/lock");
    const locked = await a.post("/api/v1/discussions/len/comments", { body: "x" });
    expect(locked.status).toBe(409);
    expect(locked.body.code).toBe("discussion_locked");
    await tt.api.post("/api/v1/discussions/len/archive");
    const archived = await a.post("/api/v1/discussions/len/comments", { body: "x" });
    expect(archived.status).toBe(409);
    expect(archived.body.code).toBe("discussion_archived");
  });
});

describe("identity assertion", () => {
  it("is required for acting routes, and bad ones are 401 invalid_identity", async () => {
    const c = (await (await reader(t, plainKey, "idr")).post("/api/v1/discussions/id-1/comments", { body: "hi" })).body;
    const noIdentity = t.as({ key: plainKey });
    const iat = Math.floor(Date.now() / 1000);
    const badSig = await new SignJWT({ name: "X" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("idr")
      .setIssuedAt(iat)
      .setExpirationTime(iat + 600)
      .sign(new TextEncoder().encode("not-the-tenant-secret-0123456789abcdef"));
    const expired = await t.identity("idr", { iat: iat - 7200, ttlSeconds: 600 });
    const tooLong = await t.identity("idr", { ttlSeconds: 3601 });
    const cases: [string, Record<string, string>][] = [
      ["missing", {}],
      ["bad signature", { identity: badSig }],
      ["expired", { identity: expired }],
      ["exp > iat + 1h", { identity: tooLong }],
      ["garbage", { identity: "abc.def.ghi" }],
    ];
    for (const [label, creds] of cases) {
      const as = t.as({ key: plainKey, ...creds });
      for (const r of [
        await as.post("/api/v1/discussions/id-1/comments", { body: "x" }),
        await as.patch(`/api/v1/comments/${c.id}`, { body: "x" }),
        await as.del(`/api/v1/comments/${c.id}`),
        await as.post(`/api/v1/comments/${c.id}/reactions`, { kind: "like" }),
      ]) {
        expect([label, r.status, r.body.code]).toEqual([label, 401, "invalid_identity"]);
      }
    }
    // The key is still required: identity alone is not authentication.
    const anon = t.as({ identity: await t.identity("idr") });
    expect((await anon.post("/api/v1/discussions/id-1/comments", { body: "x" })).status).toBe(401);
    expect((await anon.get(`/api/v1/comments/${c.id}`)).body.code).toBe("unauthenticated");
    expect((await noIdentity.get(`/api/v1/comments/${c.id}`)).status).toBe(200);
  });
});

describe("GET /comments/{id}, PATCH, DELETE", () => {
  it("edits by the author only (403 not_author), sets editedAt, refuses locked discussions", async () => {
    const a = await reader(t, plainKey, "ed-a");
    const b = await reader(t, plainKey, "ed-b");
    const c = (await a.post("/api/v1/discussions/edit-1/comments", { body: "v1" })).body;
    const ok = await a.patch(`/api/v1/comments/${c.id}`, { body: "v2" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: c.id, body: "v2", editedAt: expect.any(String) });
    const notAuthor = await b.patch(`/api/v1/comments/${c.id}`, { body: "hijack" });
    expect(notAuthor.status).toBe(403);
    expect(notAuthor.body.code).toBe("not_author");
    // Even with every capability, a moderator is not the author.
    const mod = t.as({ key: t.apiKey, identity: await t.identity("ed-b") });
    expect((await mod.patch(`/api/v1/comments/${c.id}`, { body: "x" })).body.code).toBe("not_author");
    const invalid = await a.patch(`/api/v1/comments/${c.id}`, { body: "" });
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors[0].path).toBe("body");
    expect((await a.patch("/api/v1/comments/cmt_unknown", { body: "x" })).status).toBe(404);
    await t.api.post("/api/v1/discussions/edit-1/lock");
    const locked = await a.patch(`/api/v1/comments/${c.id}`, { body: "v3" });
    expect(locked.status).toBe(409);
    expect(locked.body.code).toBe("discussion_locked");
    expect((await t.api.get(`/api/v1/comments/${c.id}`)).body.body).toBe("v2");
  });

  it("deletes softly by the author or a moderator; others get 403; tombstones keep threads", async () => {
    const a = await reader(t, plainKey, "del-a");
    const b = await reader(t, plainKey, "del-b");
    const parent = (await a.post("/api/v1/discussions/del-1/comments", { body: "parent" })).body;
    const reply = (await b.post("/api/v1/discussions/del-1/comments", { body: "reply", parentId: parent.id })).body;
    const leaf = (await b.post("/api/v1/discussions/del-1/comments", { body: "leaf" })).body;
    expect((await t.api.get("/api/v1/discussions/del-1")).body.commentCount).toBe(3);

    const notAuthor = await b.del(`/api/v1/comments/${parent.id}`);
    expect(notAuthor.status).toBe(403);
    expect(notAuthor.body.code).toBe("not_author");
    expect((await t.as({ key: plainKey }).del(`/api/v1/comments/${parent.id}`)).body.code).toBe("invalid_identity");

    const del = await a.del(`/api/v1/comments/${parent.id}`);
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    expect((await a.del(`/api/v1/comments/${parent.id}`)).status).toBe(204); // idempotent
    const tomb = await t.api.get(`/api/v1/comments/${parent.id}`);
    expect(tomb.body).toMatchObject({ status: "deleted", body: "", replyCount: 1 });
    expect((await a.patch(`/api/v1/comments/${parent.id}`, { body: "back" })).status).toBe(404);
    expect((await b.del(`/api/v1/comments/${leaf.id}`)).status).toBe(204);

    let list = await t.api.get("/api/v1/discussions/del-1/comments?sort=oldest");
    expect(list.body.items.map((c: any) => [c.id, c.status, c.body])).toEqual([
      [parent.id, "deleted", ""],
      [reply.id, "approved", "reply"],
    ]);
    expect((await t.api.get("/api/v1/discussions/del-1")).body.commentCount).toBe(1);

    // A moderator (all-capability key, no identity) deletes the reply: the tombstone goes too.
    expect((await t.api.del(`/api/v1/comments/${reply.id}`)).status).toBe(204);
    list = await t.api.get("/api/v1/discussions/del-1/comments");
    expect(list.body.items).toEqual([]);
    expect((await t.api.get("/api/v1/discussions/del-1")).body.commentCount).toBe(0);
    expect((await t.api.get(`/api/v1/comments/${parent.id}`)).body.replyCount).toBe(0);

    const types = (await eventsOf(t.tenantId, "del-1")).map((e) => [e.type, e.audience]);
    expect(types).toEqual([
      ["comment_created", "all"],
      ["comment_created", "all"],
      ["notification_reply", "reader"],
      ["comment_created", "all"],
      ["comment_deleted", "all"],
      ["comment_deleted", "all"],
      ["comment_deleted", "all"],
    ]);
  });

  it("emits notification_reply to the parent's author only for someone else's comment", async () => {
    const a = await reader(t, plainKey, "n-a");
    const b = await reader(t, plainKey, "n-b");
    const root = (await a.post("/api/v1/discussions/notif-1/comments", { body: "root" })).body;
    await a.post("/api/v1/discussions/notif-1/comments", { body: "self reply", parentId: root.id });
    const reply = (await b.post("/api/v1/discussions/notif-1/comments", { body: "reply", parentId: root.id })).body;
    const notes = (await eventsOf(t.tenantId, "notif-1")).filter((e) => e.type === "notification_reply");
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ audience: "reader", readerId: "n-a" });
    expect((notes[0]!.payload as any).data).toEqual({
      notification: { readerId: "n-a", commentId: reply.id, parentId: root.id, discussionId: "notif-1" },
    });
  });
});

describe("edit window (injected clock)", () => {
  it("closes after editWindowSeconds (default 900), 0 = no limit", async () => {
    const clock = manualClock(new Date());
    const s = await startServer({}, { clock });
    try {
      const tt = await createTestTenant(s);
      const as = async (sub: string) =>
        tt.as({ key: tt.apiKey, identity: await tt.identity(sub, { iat: Math.floor(clock.now().getTime() / 1000) }) });
      const c = (await (await as("w")).post("/api/v1/discussions/win/comments", { body: "v1" })).body;
      clock.advance(899_000);
      expect((await (await as("w")).patch(`/api/v1/comments/${c.id}`, { body: "v2" })).status).toBe(200);
      clock.advance(2_000);
      const closed = await (await as("w")).patch(`/api/v1/comments/${c.id}`, { body: "v3" });
      expect(closed.status).toBe(409);
      expect(closed.body.code).toBe("edit_window_closed");

      await setSettings(s, tt.tenantId, { editWindowSeconds: 0 });
      clock.advance(86_400_000);
      expect((await (await as("w")).patch(`/api/v1/comments/${c.id}`, { body: "v4" })).status).toBe(200);

      await setSettings(s, tt.tenantId, { editWindowSeconds: 60 });
      const c2 = (await (await as("w")).post("/api/v1/discussions/win/comments", { body: "v1" })).body;
      clock.advance(61_000);
      expect((await (await as("w")).patch(`/api/v1/comments/${c2.id}`, { body: "v2" })).body.code).toBe("edit_window_closed");
    } finally {
      await s.stop();
    }
  });
});

describe("tenants and GraphQL", () => {
  it("answers 404 on every comment route for another tenant's ids", async () => {
    const a = await reader(t, plainKey, "x-a");
    const c = (await a.post("/api/v1/discussions/cross-1/comments", { body: "mine" })).body;
    const o = other.as({ key: other.apiKey, identity: await other.identity("x-a") });
    const responses = [
      await o.get(`/api/v1/comments/${c.id}`),
      await o.patch(`/api/v1/comments/${c.id}`, { body: "x" }),
      await o.del(`/api/v1/comments/${c.id}`),
      await o.post(`/api/v1/comments/${c.id}/approve`),
      await o.post(`/api/v1/comments/${c.id}/reject`),
      await o.post(`/api/v1/comments/${c.id}/pin`),
      await o.post(`/api/v1/comments/${c.id}/unpin`),
      await o.post(`/api/v1/comments/${c.id}/reactions`, { kind: "like" }),
      await o.get("/api/v1/discussions/cross-1/comments"),
      await o.get("/api/v1/discussions/cross-1/comments?status=pending"),
    ];
    expect(responses.map((r) => [r.status, r.body.code])).toEqual(responses.map(() => [404, "not_found"]));
    // A reply naming a foreign comment is refused like an unknown one.
    const reply = await o.post("/api/v1/discussions/cross-1/comments", { body: "x", parentId: c.id });
    expect(reply.status).toBe(422);
    expect((await t.api.get(`/api/v1/comments/${c.id}`)).body).toMatchObject({ body: "mine", status: "approved" });
  });

  it("serves the same operations over GraphQL", async () => {
    const identity = await t.identity("gql-a", { name: "G" });
    const posted = await t
      .as({ key: plainKey, identity })
      .gql(TestPostCommentDocument, { discussionId: "gql-c", input: { body: "hello" } });
    expect(posted.data?.postComment).toMatchObject({
      discussionId: "gql-c",
      status: "approved",
      depth: 0,
      author: { id: "gql-a", name: "G" },
    });
    const list = await t.as({ key: plainKey }).gql(TestCommentsDocument, { discussionId: "gql-c" });
    expect(list.data?.comments.items.map((c) => c.id)).toEqual([posted.data?.postComment.id]);
    const noIdentity = await t.as({ key: plainKey }).gql(TestPostCommentDocument, { discussionId: "gql-c", input: { body: "x" } });
    expect(noIdentity.errors?.[0]?.extensions?.code).toBe("invalid_identity");
    const unknown = await t.api.gql(TestCommentsDocument, { discussionId: "gql-nope" });
    expect(unknown.errors?.[0]?.extensions?.code).toBe("not_found");
  });
});
