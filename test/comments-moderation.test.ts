// Moderation: pre-moderation flow, approve/reject/pin/unpin, the capability matrix, event audiences,
// and the event payload being exactly the REST representation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { TestApproveCommentDocument, TestCommentsDocument } from "./generated/operations.js";
import { loggedEvents } from "./support/event-log.js";

let server: TestServer;
let t: TestTenant;
let plainKey: string;
let modKey: string;

const prisma = () => server.app.runtime.services.prisma;

const setSettings = async (tenantId: string, settings: Record<string, number | string | string[]>) => {
  await prisma().tenant.update({ where: { id: tenantId }, data: { settings } });
  server.app.runtime.services.authCache.invalidateTenant(tenantId); // written behind the API's back
};

const eventsOf = (tenantId: string, discussionId: string) =>
  loggedEvents(prisma(), { where: { tenantId, discussionId }, orderBy: { seq: "asc" } });

async function reader(tt: TestTenant, key: string, sub: string) {
  return tt.as({ key, identity: await tt.identity(sub) });
}

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
  plainKey = (await keyWith(t, [])).key;
  modKey = (await keyWith(t, ["moderate_content"])).key;
});
afterAll(() => server?.stop());

describe("pre-moderation", () => {
  it("keeps pending comments invisible until approved, then announces them once", async () => {
    const tt = await createTestTenant(server);
    await setSettings(tt.tenantId, { moderation: "pre" });
    const plain = (await keyWith(tt, [])).key;
    const mod = (await keyWith(tt, ["moderate_content"])).key;
    const alice = await reader(tt, plain, "alice");
    const bob = await reader(tt, plain, "bob");
    const moderator = tt.as({ key: mod });

    const posted = await alice.post("/api/v1/discussions/pre-1/comments", { body: "please approve" });
    expect(posted.status).toBe(201);
    expect(posted.body.status).toBe("pending");
    const id = posted.body.id;

    // Invisible to the list and to other readers; visible to its author and to moderators.
    expect((await bob.get("/api/v1/discussions/pre-1/comments")).body.items).toEqual([]);
    expect((await bob.get(`/api/v1/comments/${id}`)).status).toBe(404);
    expect((await tt.as({ key: plain }).get(`/api/v1/comments/${id}`)).status).toBe(404);
    expect((await alice.get(`/api/v1/comments/${id}`)).body).toMatchObject({ id, status: "pending" });
    expect((await moderator.get(`/api/v1/comments/${id}`)).body).toMatchObject({ id, status: "pending" });
    expect((await tt.api.get("/api/v1/discussions/pre-1")).body.commentCount).toBe(0);
    // Reactions and replies need a visible comment.
    expect((await alice.post(`/api/v1/comments/${id}/reactions`, { kind: "like" })).body.code).toBe("comment_not_approved");
    expect((await bob.post(`/api/v1/comments/${id}/reactions`, { kind: "like" })).status).toBe(404);
    expect((await bob.post("/api/v1/discussions/pre-1/comments", { body: "re", parentId: id })).status).toBe(422);

    // The moderation queue needs moderate_content.
    const denied = await tt.as({ key: plain }).get("/api/v1/discussions/pre-1/comments?status=pending");
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: "missing_capability", required: "moderate_content" });
    const queue = await moderator.get("/api/v1/discussions/pre-1/comments?status=pending");
    expect(queue.body.items.map((c: any) => c.id)).toEqual([id]);

    // Only the author's own stream heard of it so far.
    let events = await eventsOf(tt.tenantId, "pre-1");
    expect(events.map((e) => [e.type, e.audience, e.readerId])).toEqual([["comment_created", "reader", "alice"]]);

    const approved = await moderator.post(`/api/v1/comments/${id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id, status: "approved" });
    expect((await bob.get("/api/v1/discussions/pre-1/comments")).body.items.map((c: any) => c.id)).toEqual([id]);
    expect((await tt.api.get("/api/v1/discussions/pre-1")).body.commentCount).toBe(1);
    expect((await moderator.post(`/api/v1/comments/${id}/approve`)).status).toBe(200); // idempotent

    // A pending reply notifies the parent's author only once approved.
    const reply = (await bob.post("/api/v1/discussions/pre-1/comments", { body: "re", parentId: id })).body;
    expect(reply.status).toBe("pending");
    expect((await eventsOf(tt.tenantId, "pre-1")).some((e) => e.type === "notification_reply")).toBe(false);
    expect((await tt.api.get(`/api/v1/comments/${id}`)).body.replyCount).toBe(0);
    await moderator.post(`/api/v1/comments/${reply.id}/approve`);
    expect((await tt.api.get(`/api/v1/comments/${id}`)).body.replyCount).toBe(1);

    // Reject hides it again (counts follow); approving again does not re-announce it.
    const rejected = await moderator.post(`/api/v1/comments/${id}/reject`);
    expect(rejected.body.status).toBe("rejected");
    expect((await tt.api.get("/api/v1/discussions/pre-1")).body.commentCount).toBe(1);
    expect((await bob.get(`/api/v1/comments/${id}`)).status).toBe(404);
    expect((await moderator.get("/api/v1/discussions/pre-1/comments?status=rejected")).body.items.map((c: any) => c.id)).toEqual([id]);
    await moderator.post(`/api/v1/comments/${id}/approve`);
    expect((await tt.api.get("/api/v1/discussions/pre-1")).body.commentCount).toBe(2);

    events = await eventsOf(tt.tenantId, "pre-1");
    expect(events.map((e) => [e.seq, e.type, e.audience, e.readerId])).toEqual([
      [1, "comment_created", "reader", "alice"],
      [2, "comment_approved", "all", null],
      [3, "comment_created", "all", null],
      [4, "comment_created", "reader", "bob"],
      [5, "comment_approved", "all", null],
      [6, "comment_created", "all", null],
      [7, "notification_reply", "reader", "alice"],
      [8, "comment_rejected", "moderators", null],
      [9, "comment_approved", "all", null],
    ]);
    expect((events[2]!.payload as any).data.comment).toMatchObject({ id, status: "approved" });
  });

  it("sends events about pending content to moderators only (edit, delete)", async () => {
    const tt = await createTestTenant(server);
    await setSettings(tt.tenantId, { moderation: "pre" });
    const a = tt.as({ key: tt.apiKey, identity: await tt.identity("pa") });
    const c = (await a.post("/api/v1/discussions/pre-2/comments", { body: "v1" })).body;
    expect((await a.patch(`/api/v1/comments/${c.id}`, { body: "v2" })).status).toBe(200);
    expect((await a.del(`/api/v1/comments/${c.id}`)).status).toBe(204);
    const events = await eventsOf(tt.tenantId, "pre-2");
    expect(events.map((e) => [e.type, e.audience])).toEqual([
      ["comment_created", "reader"],
      ["comment_edited", "moderators"],
      ["comment_deleted", "moderators"],
    ]);
    // A never-published deleted comment is not shown to others as a tombstone.
    expect((await tt.as({ key: tt.apiKey, identity: await tt.identity("other") }).get(`/api/v1/comments/${c.id}`)).status).toBe(200);
    expect((await tt.as({ key: (await keyWith(tt, [])).key }).get(`/api/v1/comments/${c.id}`)).status).toBe(404);
  });
});

describe("pendingCommentCount", () => {
  it("counts the tenant's pending comments, not another tenant's, and needs moderate_content", async () => {
    const tt = await createTestTenant(server);
    await setSettings(tt.tenantId, { moderation: "pre" });
    const plain = (await keyWith(tt, [])).key;
    const count = async () => (await tt.api.post("/graphql", { query: "{ pendingCommentCount }" })).body.data.pendingCommentCount;
    expect(await count()).toBe(0);
    const ann = await reader(tt, plain, "ann");
    const ids: string[] = [];
    for (const body of ["one", "two", "three"]) ids.push((await ann.post("/api/v1/discussions/count-1/comments", { body })).body.id);
    // another tenant's pending comment is not counted
    const other = await createTestTenant(server);
    await setSettings(other.tenantId, { moderation: "pre" });
    await (await reader(other, (await keyWith(other, [])).key, "bo")).post("/api/v1/discussions/x/comments", { body: "elsewhere" });
    expect(await count()).toBe(3);
    await tt.api.post(`/api/v1/comments/${ids[0]}/approve`);
    await tt.api.post(`/api/v1/comments/${ids[1]}/reject`);
    expect(await count()).toBe(1);
    const refused = await tt.as({ key: plain }).post("/graphql", { query: "{ pendingCommentCount }" });
    expect(refused.body.errors[0].extensions.code).toBe("missing_capability");
  });
});

describe("moderation routes", () => {
  it("need moderate_content: 403 missing_capability naming it, 401 without a key", async () => {
    const a = await reader(t, plainKey, "cap-a");
    const c = (await a.post("/api/v1/discussions/cap-1/comments", { body: "x" })).body;
    const others = (await keyWith(t, ["manage_settings", "manage_api_keys", "manage_webhooks", "view_analytics"])).key;
    for (const action of ["approve", "reject", "pin", "unpin"]) {
      for (const key of [plainKey, others]) {
        const r = await t.as({ key, identity: await t.identity("cap-a") }).post(`/api/v1/comments/${c.id}/${action}`);
        expect([action, r.status, r.body.code, r.body.required]).toEqual([action, 403, "missing_capability", "moderate_content"]);
      }
      expect((await t.as({}).post(`/api/v1/comments/${c.id}/${action}`)).status).toBe(401);
      expect((await t.as({ key: modKey }).post(`/api/v1/comments/${c.id}/${action}`)).status).toBe(200);
      expect((await t.admin.post(`/api/v1/comments/${c.id}/${action}`)).status).toBe(200);
      expect((await t.as({ key: modKey }).post(`/api/v1/comments/cmt_missing/${action}`)).status).toBe(404);
    }
    const gql = await t.as({ key: plainKey }).gql(TestApproveCommentDocument, { id: c.id });
    expect(gql.errors?.[0]?.extensions).toMatchObject({ code: "missing_capability", required: "moderate_content" });
    const list = await t.as({ key: plainKey }).gql(TestCommentsDocument, { discussionId: "cap-1", status: "pending" });
    expect(list.errors?.[0]?.extensions?.code).toBe("missing_capability");
  });

  it("pins first, idempotently (no event when nothing changes)", async () => {
    const a = await reader(t, plainKey, "pin-a");
    const ids: string[] = [];
    for (const body of ["one", "two", "three"]) ids.push((await a.post("/api/v1/discussions/pin-1/comments", { body })).body.id);
    const mod = t.as({ key: modKey });
    const pinned = await mod.post(`/api/v1/comments/${ids[0]}/pin`);
    expect(pinned.body).toMatchObject({ id: ids[0], pinned: true });
    expect((await mod.post(`/api/v1/comments/${ids[0]}/pin`)).body.pinned).toBe(true);
    const list = await t.api.get("/api/v1/discussions/pin-1/comments?sort=newest");
    expect(list.body.items.map((c: any) => c.id)[0]).toBe(ids[0]);
    expect((await mod.post(`/api/v1/comments/${ids[0]}/unpin`)).body.pinned).toBe(false);
    expect((await mod.post(`/api/v1/comments/${ids[0]}/unpin`)).status).toBe(200);
    const types = (await eventsOf(t.tenantId, "pin-1")).map((e) => e.type).filter((x) => x.includes("pin"));
    expect(types).toEqual(["comment_pinned", "comment_unpinned"]);
  });

  it("refuses moderation in archived discussions, allows it in locked ones", async () => {
    const a = await reader(t, plainKey, "arch-a");
    const c = (await a.post("/api/v1/discussions/arch-1/comments", { body: "x" })).body;
    await t.api.post("/api/v1/discussions/arch-1/lock");
    expect((await t.api.post(`/api/v1/comments/${c.id}/pin`)).status).toBe(200);
    await t.api.post("/api/v1/discussions/arch-1/archive");
    for (const action of ["approve", "reject", "pin", "unpin"]) {
      const r = await t.api.post(`/api/v1/comments/${c.id}/${action === "pin" ? "unpin" : action}`);
      expect(r.status).toBe(409);
      expect(r.body.code).toBe("discussion_archived");
    }
    expect((await a.del(`/api/v1/comments/${c.id}`)).body.code).toBe("discussion_archived");
  });
});

describe("event payloads", () => {
  it("carry the comment exactly as the REST API returns it", async () => {
    const a = t.as({ key: plainKey, identity: await t.identity("dto-a", { name: "Dto", avatarUrl: "https://img.example/d.png" }) });
    const root = (await a.post("/api/v1/discussions/dto-1/comments", { body: "root" })).body;
    const posted = await a.post("/api/v1/discussions/dto-1/comments", { body: "hello", parentId: root.id });
    const b = t.as({ key: plainKey, identity: await t.identity("dto-b") });
    await b.post(`/api/v1/comments/${posted.body.id}/reactions`, { kind: "love" });
    const edited = await a.patch(`/api/v1/comments/${posted.body.id}`, { body: "hello, edited" });
    const pinned = await t.api.post(`/api/v1/comments/${posted.body.id}/pin`);
    const events = await eventsOf(t.tenantId, "dto-1");
    const byType = (type: string) => events.filter((e) => e.type === type).map((e) => (e.payload as any).data.comment);

    // Deep equality (same keys, same values): the log stores the envelope as JSONB, which does not
    // keep key order.
    expect(byType("comment_created")[1]).toStrictEqual(posted.body);
    expect(byType("comment_edited")[0]).toStrictEqual(edited.body);
    expect(byType("comment_pinned")[0]).toStrictEqual(pinned.body);
    const fetched = await t.api.get(`/api/v1/comments/${posted.body.id}`);
    expect(fetched.body).toStrictEqual(pinned.body);
    expect(fetched.body).toMatchObject({ reactions: { love: 1 }, author: { avatarUrl: "https://img.example/d.png" } });

    const env = events[0]!.payload as any;
    expect(env).toEqual({
      id: events[0]!.id,
      seq: 1,
      type: "comment_created",
      tenantId: t.tenantId,
      discussionId: "dto-1",
      occurredAt: expect.any(String),
      data: { comment: root },
    });
  });
});
