// What the foreign keys used to guarantee, now that a post writes its comment before it takes the
// discussion's row lock (prisma/migrations/*_hot_path_foreign_keys): every comment and event refers
// to a discussion and a reader that exist, a refused post leaves nothing behind, and a reply cannot
// slip in after its parent was hidden.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { loggedEvents } from "./support/event-log.js";

let server: TestServer;
let t: TestTenant;

const prisma = () => server.app.runtime.services.prisma;

beforeAll(async () => {
  server = await startServer();
  t = await createTestTenant(server);
});
afterAll(() => server?.stop());

describe("posts write their comment before the discussion's lock", () => {
  it("new readers on new discussions at once: every comment, event and reaction has its discussion and its reader", async () => {
    const posts = await Promise.all(
      Array.from({ length: 24 }, async (_, i) =>
        (await t.reader(`wi-new-${i}`, { name: `New ${i}` })).post(`/api/v1/discussions/wi-new-${i % 4}/comments`, { body: `hello ${i}` }),
      ),
    );
    expect(posts.map((r) => r.status)).toEqual(posts.map(() => 201));
    // readers seen first by their reaction
    const target = posts[0]!.body.id as string;
    const toggles = await Promise.all(
      Array.from({ length: 12 }, async (_, i) =>
        (await t.reader(`wi-react-${i}`, { name: `Reacting ${i}` })).post(`/api/v1/comments/${target}/reactions`, { kind: "like" }),
      ),
    );
    expect(toggles.map((r) => r.status)).toEqual(toggles.map(() => 200));
    expect((await t.api.get(`/api/v1/comments/${target}`)).body.reactions).toEqual({ like: 12 });

    const [orphans] = await prisma().$queryRaw<{ reactions: number; comments: number; events: number }[]>`
      SELECT (SELECT count(*)::int FROM reactions x WHERE x.tenant_id = ${t.tenantId}
                AND NOT EXISTS (SELECT 1 FROM readers r WHERE r.tenant_id = x.tenant_id AND r.id = x.reader_id)) AS reactions,
             (SELECT count(*)::int FROM comments c WHERE c.tenant_id = ${t.tenantId}
                AND (NOT EXISTS (SELECT 1 FROM discussions d WHERE d.tenant_id = c.tenant_id AND d.id = c.discussion_id)
                  OR NOT EXISTS (SELECT 1 FROM readers r WHERE r.tenant_id = c.tenant_id AND r.id = c.author_id))) AS comments,
             (SELECT count(*)::int FROM events e WHERE e.tenant_id = ${t.tenantId}
                AND NOT EXISTS (SELECT 1 FROM discussions d WHERE d.tenant_id = e.tenant_id AND d.id = e.discussion_id)) AS events`;
    expect(orphans).toEqual({ reactions: 0, comments: 0, events: 0 });
    for (let d = 0; d < 4; d++) {
      const discussion = await t.api.get(`/api/v1/discussions/wi-new-${d}`);
      expect(discussion.body.commentCount).toBe(6);
      const events = await loggedEvents(prisma(), {
        where: { tenantId: t.tenantId, discussionId: `wi-new-${d}` },
        orderBy: { seq: "asc" },
      });
      // six posts each, and the twelve reactions on wi-new-0's first comment: gap-free
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: d === 0 ? 18 : 6 }, (_, i) => i + 1));
    }
    expect(await prisma().reader.count({ where: { tenantId: t.tenantId, id: { startsWith: "wi-new-" } } })).toBe(24);
    expect(await prisma().reader.count({ where: { tenantId: t.tenantId, id: { startsWith: "wi-react-" } } })).toBe(12);
  });

  it("a refused post leaves no comment, no reader change and no event behind; refusals keep their order", async () => {
    const a = await t.reader("wi-refused", { name: "Before" });
    const ok = await a.post("/api/v1/discussions/wi-ref-open/comments", { body: "parent" });
    expect(ok.status).toBe(201);
    const rejected = (await a.post("/api/v1/discussions/wi-ref-open/comments", { body: "to be rejected" })).body.id;
    expect((await t.api.post(`/api/v1/comments/${rejected}/reject`)).status).toBe(200);
    await a.post("/api/v1/discussions/wi-ref-locked/comments", { body: "first" });
    expect((await t.api.post("/api/v1/discussions/wi-ref-locked/lock")).status).toBe(200);
    await a.post("/api/v1/discussions/wi-ref-archived/comments", { body: "first" });
    expect((await t.api.post("/api/v1/discussions/wi-ref-archived/archive")).status).toBe(200);
    await a.post("/api/v1/discussions/wi-ref-other/comments", { body: "elsewhere" });
    const foreign = (await a.post("/api/v1/discussions/wi-ref-other/comments", { body: "foreign parent" })).body.id;
    const before = await prisma().comment.count({ where: { tenantId: t.tenantId } });
    const eventsBefore = await prisma().event.count({ where: { tenantId: t.tenantId } });

    const renamed = await t.reader("wi-refused", { name: "After" });
    const cases: [string, Record<string, unknown>, number, string][] = [
      ["wi-ref-locked", {}, 409, "discussion_locked"],
      ["wi-ref-archived", {}, 409, "discussion_archived"],
      ["wi-ref-locked", { parentId: "cmt_unknown" }, 409, "discussion_locked"],
      ["wi-ref-archived", { parentId: foreign }, 409, "discussion_archived"],
      ["wi-ref-open", { parentId: "cmt_unknown" }, 422, "validation_failed"],
      ["wi-ref-open", { parentId: foreign }, 422, "validation_failed"],
      ["wi-ref-open", { parentId: rejected }, 422, "validation_failed"],
    ];
    for (const [discussion, extra, status, code] of cases) {
      const r = await renamed.post(`/api/v1/discussions/${discussion}/comments`, { body: "refused", ...extra });
      expect([discussion, extra, r.status, r.body.code]).toEqual([discussion, extra, status, code]);
      if (status === 422) expect(r.body.errors).toEqual([expect.objectContaining({ path: "parentId" })]);
    }
    expect(await prisma().comment.count({ where: { tenantId: t.tenantId } })).toBe(before);
    expect(await prisma().comment.count({ where: { tenantId: t.tenantId, body: "refused" } })).toBe(0);
    expect(await prisma().event.count({ where: { tenantId: t.tenantId } })).toBe(eventsBefore);
    // the renamed assertion was refused each time: the reader keeps its name
    expect((await prisma().reader.findUnique({ where: { tenantId_id: { tenantId: t.tenantId, id: "wi-refused" } } }))?.name).toBe("Before");
    expect((await t.api.get("/api/v1/discussions/wi-ref-open")).body.commentCount).toBe(1);
  });

  it("replies racing their parent's rejection: none is stored after it, every 201 is counted once", async () => {
    const author = await t.reader("wi-race-author");
    const parent = (await author.post("/api/v1/discussions/wi-race/comments", { body: "parent" })).body.id;
    const repliers = await Promise.all(Array.from({ length: 32 }, (_, i) => t.reader(`wi-race-${i}`)));
    // the repliers exist already: their replies go straight to the write
    for (const r of repliers) expect((await r.post("/api/v1/discussions/wi-race-warm/comments", { body: "hi" })).status).toBe(201);
    const replies = repliers.map((r) => r.post("/api/v1/discussions/wi-race/comments", { body: "reply", parentId: parent }));
    await Promise.race(replies); // the rejection goes in while the other replies are on their way
    const reject = t.api.post(`/api/v1/comments/${parent}/reject`);
    const answers = await Promise.all(replies);
    expect((await reject).status).toBe(200);
    expect(answers.every((r) => r.status === 201 || (r.status === 422 && r.body.code === "validation_failed"))).toBe(true);
    const accepted = answers.filter((r) => r.status === 201).map((r) => r.body.id as string);

    const stored = await prisma().comment.findMany({ where: { tenantId: t.tenantId, parentId: parent } });
    expect(stored.map((c) => c.id).sort()).toEqual([...accepted].sort());
    expect((await prisma().comment.findUnique({ where: { id: parent } }))?.replyCount).toBe(accepted.length);
    const events = await loggedEvents(prisma(), { where: { tenantId: t.tenantId, discussionId: "wi-race" }, orderBy: { seq: "asc" } });
    const rejectedAt = events.find((e) => e.type === "comment_rejected")!.seq;
    const createdAt = new Map(
      events.filter((e) => e.type === "comment_created").map((e) => [(e.payload as any).data.comment.id as string, e.seq]),
    );
    for (const id of accepted) expect(createdAt.get(id)).toBeLessThan(rejectedAt);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });
});
