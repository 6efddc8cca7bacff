// Reactions: toggling, allowed kinds, state rules, exact counts under concurrency, and gap-free
// per-discussion event sequences under concurrent writers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { TestToggleReactionDocument } from "./generated/operations.js";
import { loggedEvents } from "./support/event-log.js";

let server: TestServer;
let t: TestTenant;

const prisma = () => server.app.runtime.services.prisma;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

async function post(tt: TestTenant, discussionId: string, sub = "author"): Promise<string> {
  const r = await (await tt.reader(sub)).post(`/api/v1/discussions/${discussionId}/comments`, { body: "react to me" });
  expect(r.status).toBe(201);
  return r.body.id;
}

describe("POST /comments/{id}/reactions", () => {
  it("toggles the reader's reaction and answers the counts", async () => {
    const id = await post(t, "re-1");
    const a = await t.reader("ra");
    const b = await t.reader("rb");
    const on = await a.post(`/api/v1/comments/${id}/reactions`, { kind: "like" });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ kind: "like", active: true, counts: { like: 1 } });
    expect((await b.post(`/api/v1/comments/${id}/reactions`, { kind: "like" })).body.counts).toEqual({ like: 2 });
    expect((await b.post(`/api/v1/comments/${id}/reactions`, { kind: "wow" })).body.counts).toEqual({ like: 2, wow: 1 });
    const off = await a.post(`/api/v1/comments/${id}/reactions`, { kind: "like" });
    expect(off.body).toEqual({ kind: "like", active: false, counts: { like: 1, wow: 1 } });
    expect((await t.api.get(`/api/v1/comments/${id}`)).body.reactions).toEqual({ like: 1, wow: 1 });
    const row = await prisma().comment.findUnique({ where: { id } });
    expect(row?.reactionTotal).toBe(2);

    const events = await loggedEvents(prisma(), {
      where: { tenantId: t.tenantId, discussionId: "re-1", type: "reaction_toggled" },
      orderBy: { seq: "asc" },
    });
    expect(events).toHaveLength(4);
    expect(events.every((e) => e.audience === "all")).toBe(true);
    expect((events[3]!.payload as any).data).toEqual({
      reaction: { commentId: id, readerId: "ra", kind: "like", active: false, counts: { like: 1, wow: 1 } },
    });

    const gql = await b.gql(TestToggleReactionDocument, { commentId: id, input: { kind: "wow" } });
    expect(gql.data?.toggleReaction).toEqual({
      commentId: id,
      readerId: "rb",
      kind: "wow",
      active: false,
      counts: [{ kind: "like", count: 1 }],
    });
  });

  it("accepts only the tenant's reactionKinds (422) and needs identity (401)", async () => {
    const tt = await createTestTenant(server);
    const id = await post(tt, "kinds-1");
    const a = await tt.reader("k");
    const bad = await a.post(`/api/v1/comments/${id}/reactions`, { kind: "thumbsup" });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ path: "kind", message: expect.stringContaining("like") }]);
    expect((await a.post(`/api/v1/comments/${id}/reactions`, {})).body.errors[0]).toEqual({ path: "kind", message: "is required" });
    expect((await a.post(`/api/v1/comments/${id}/reactions`, { kind: 3 })).status).toBe(422);
    await prisma().tenant.update({ where: { id: tt.tenantId }, data: { settings: { reactionKinds: ["up", "down"] } } });
    server.app.runtime.services.authCache.invalidateTenant(tt.tenantId); // written behind the API's back
    expect((await a.post(`/api/v1/comments/${id}/reactions`, { kind: "like" })).status).toBe(422);
    expect((await a.post(`/api/v1/comments/${id}/reactions`, { kind: "up" })).body).toEqual({
      kind: "up",
      active: true,
      counts: { up: 1 },
    });
    expect((await tt.api.post(`/api/v1/comments/${id}/reactions`, { kind: "up" })).body.code).toBe("invalid_identity");
    expect((await a.post("/api/v1/comments/cmt_nope/reactions", { kind: "up" })).status).toBe(404);
  });

  it("refuses deleted comments and locked/archived discussions (409)", async () => {
    const id = await post(t, "re-lock");
    const gone = await post(t, "re-lock");
    await (await t.reader("author")).del(`/api/v1/comments/${gone}`);
    const a = await t.reader("rl");
    expect((await a.post(`/api/v1/comments/${gone}/reactions`, { kind: "like" })).status).toBe(409);
    await t.api.post("/api/v1/discussions/re-lock/lock");
    const locked = await a.post(`/api/v1/comments/${id}/reactions`, { kind: "like" });
    expect([locked.status, locked.body.code]).toEqual([409, "discussion_locked"]);
    await t.api.post("/api/v1/discussions/re-lock/archive");
    const archived = await a.post(`/api/v1/comments/${id}/reactions`, { kind: "like" });
    expect([archived.status, archived.body.code]).toEqual([409, "discussion_archived"]);
  });
});

describe("concurrency", () => {
  it("keeps exact counts: 50 readers at once, and one reader toggling concurrently", async () => {
    const id = await post(t, "conc-1");
    const readers = await Promise.all(Array.from({ length: 50 }, (_, i) => t.reader(`c${i}`)));
    const results = await Promise.all(readers.map((r) => r.post(`/api/v1/comments/${id}/reactions`, { kind: "like" })));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    expect(results.every((r) => r.body.active)).toBe(true);
    expect(results.map((r) => r.body.counts.like).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));

    const same = await t.reader("same");
    const toggles = await Promise.all(Array.from({ length: 11 }, () => same.post(`/api/v1/comments/${id}/reactions`, { kind: "like" })));
    expect(toggles.map((r) => r.status)).toEqual(toggles.map(() => 200));
    expect(toggles.filter((r) => r.body.active)).toHaveLength(6); // on, off, on, … : 11 toggles end on

    const comment = await prisma().comment.findUnique({ where: { id } });
    const rows = await prisma().reaction.findMany({ where: { commentId: id } });
    expect(rows).toHaveLength(51);
    expect(rows.filter((r) => r.readerId === "same")).toHaveLength(1);
    expect(comment?.reactionCounts).toEqual({ like: 51 });
    expect(comment?.reactionTotal).toBe(51);
    expect((await t.api.get(`/api/v1/comments/${id}`)).body.reactions).toEqual({ like: 51 });
    const toggled = await prisma().event.count({ where: { tenantId: t.tenantId, discussionId: "conc-1", type: "reaction_toggled" } });
    expect(toggled).toBe(61);
  });

  it("gives one event per change with a gap-free seq per discussion under 20 concurrent writers", async () => {
    const target = await post(t, "seq-1");
    const writers = await Promise.all(Array.from({ length: 20 }, (_, i) => t.reader(`w${i}`)));
    const results = await Promise.all(
      writers.flatMap((w, i) => [
        w.post("/api/v1/discussions/seq-1/comments", { body: `hello ${i}` }),
        w.post(`/api/v1/comments/${target}/reactions`, { kind: i % 2 ? "like" : "love" }),
      ]),
    );
    expect(results.map((r) => r.status).sort()).toEqual([...Array(20).fill(200), ...Array(20).fill(201)]);
    // Writers racing to create a discussion on first post.
    const firsts = await Promise.all(writers.map((w, i) => w.post("/api/v1/discussions/seq-2/comments", { body: `first ${i}` })));
    expect(firsts.every((r) => r.status === 201)).toBe(true);

    for (const [discussionId, expected] of [
      ["seq-1", { comment_created: 21, reaction_toggled: 20 }],
      ["seq-2", { comment_created: 20 }],
    ] as const) {
      const events = await loggedEvents(prisma(), { where: { tenantId: t.tenantId, discussionId }, orderBy: { seq: "asc" } });
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const counts: Record<string, number> = {};
      for (const e of events) counts[e.type] = (counts[e.type] ?? 0) + 1;
      expect(counts).toEqual(expected);
      const d = await prisma().discussion.findUnique({ where: { tenantId_id: { tenantId: t.tenantId, id: discussionId } } });
      expect(d?.seq).toBe(events.length);
      expect(d?.commentCount).toBe(expected.comment_created);
    }
    const final = await prisma().comment.findUnique({ where: { id: target } });
    expect(final?.reactionCounts).toEqual({ like: 10, love: 10 });
  });

  it("takes a reader's row and a discussion's in one order: new and renamed readers posting and reacting at once all succeed", async () => {
    const target = await post(t, "order-1");
    // each request asserts a name the reader's row does not have yet, so every write updates (or
    // inserts) the reader's row as well as locking the discussion's
    const named = (sub: string, n: number) => t.reader(sub, { name: `${sub} ${n}` });
    const writes = await Promise.all(
      Array.from({ length: 10 }, (_, i) => `o${i}`).flatMap((sub) =>
        [0, 1, 2].flatMap((n) => [
          named(sub, 2 * n).then((c) => c.post("/api/v1/discussions/order-1/comments", { body: `${sub} says ${n}` })),
          named(sub, 2 * n + 1).then((c) => c.post(`/api/v1/comments/${target}/reactions`, { kind: "like" })),
        ]),
      ),
    );
    expect(writes.map((r) => r.status).sort()).toEqual([...Array(30).fill(200), ...Array(30).fill(201)]);
    const events = await loggedEvents(prisma(), { where: { tenantId: t.tenantId, discussionId: "order-1" }, orderBy: { seq: "asc" } });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events).toHaveLength(1 + 30 + 30);
  });
});
