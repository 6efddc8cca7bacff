// Reader badges (contract section 21): a reader's `badge` comes from the identity assertion's `badge`
// claim or from a moderator (PATCH /api/v1/readers/{readerId} {"badge"}, moderate_content); a
// moderator's wins over the claim until cleared. Comments carry author.badge (null when none) in REST,
// GraphQL and the stream's events; the PATCH is audited; a bad badge is a 422.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type IdentityClaims, type TestTenant } from "./support/fixtures.js";
import { openSse } from "./support/sse.js";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const readerOf = async (t: TestTenant, sub: string, claims: IdentityClaims = {}) =>
  t.as({ key: t.apiKey, identity: await t.identity(sub, claims) });

const authorOf = async (t: TestTenant, commentId: string) => (await t.api.get(`/api/v1/comments/${commentId}`)).body.author;

describe("a reader's badge", () => {
  it("comes from the assertion's claim: author.badge in REST, GraphQL and the stream's event; null without one", async () => {
    const t = await createTestTenant(server);
    expect((await t.api.put("/api/v1/discussions/bd-1", { title: "One" })).status).toBe(201);
    const es = openSse(`${server.url}/api/v1/stream/bd-1`, { "x-api-key": t.apiKey });
    await es.waitFor((f) => f.some((x) => x.event === "connected"));

    const ann = await readerOf(t, "ann", { badge: "  Staff " });
    const posted = await ann.post("/api/v1/discussions/bd-1/comments", { body: "hello" });
    expect(posted.status).toBe(201);
    expect(posted.body.author).toEqual({ id: "ann", name: "Reader ann", avatarUrl: null, badge: "Staff" });
    const id = posted.body.id as string;
    expect(await authorOf(t, id)).toEqual({ id: "ann", name: "Reader ann", avatarUrl: null, badge: "Staff" });
    expect((await t.api.get("/api/v1/discussions/bd-1/comments")).body.items[0].author.badge).toBe("Staff");
    const gql = await t.api.raw("POST", "/graphql", { query: `{ comment(id: "${id}") { author { id badge } } }` });
    expect(gql.body).toEqual({ data: { comment: { author: { id: "ann", badge: "Staff" } } } });

    const bob = await readerOf(t, "bob");
    const plain = await bob.post("/api/v1/discussions/bd-1/comments", { body: "hi" });
    expect(plain.body.author.badge).toBeNull();

    const events = await es.waitForEvents(2);
    expect(events.map((e) => [e.event, e.data.data.comment.author.badge])).toEqual([
      ["comment_created", "Staff"],
      ["comment_created", null],
    ]);
    // the event's comment is the REST one
    expect(events[0]!.data.data.comment).toEqual((await t.api.get(`/api/v1/comments/${id}`)).body);
    es.close();

    // the reader's page shows it and where it came from
    const page = await t.api.get("/api/v1/readers/ann");
    expect(page.body).toMatchObject({ badge: "Staff", badgeSource: "claim" });

    // a later assertion without the claim takes the claim's badge away
    const annAgain = await readerOf(t, "ann");
    expect((await annAgain.post("/api/v1/discussions/bd-1/comments", { body: "again" })).body.author.badge).toBeNull();
    expect(await authorOf(t, id)).toMatchObject({ badge: null });
  });

  it("refuses a claim that breaks the rules (401 invalid_identity)", async () => {
    const t = await createTestTenant(server);
    for (const badge of ["x".repeat(21), "two\nlines", 42]) {
      const r = await (await readerOf(t, "cat", { badge })).post("/api/v1/discussions/bd-2/comments", { body: "hi" });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ code: "invalid_identity" });
      expect(r.body.detail).toContain("'badge'");
    }
    // 20 characters (of any script) is fine
    const ok = await (await readerOf(t, "cat", { badge: "é".repeat(20) })).post("/api/v1/discussions/bd-2/comments", { body: "hi" });
    expect(ok.status).toBe(201);
    expect(ok.body.author.badge).toBe("é".repeat(20));
  });
});

describe("PATCH /api/v1/readers/{readerId}", () => {
  it("sets a moderator's badge, which wins over the claim until cleared with null; audited", async () => {
    const t = await createTestTenant(server);
    const mod = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
    const dan = await readerOf(t, "dan", { badge: "Subscriber" });
    const first = await dan.post("/api/v1/discussions/bd-3/comments", { body: "one" });
    expect(first.body.author.badge).toBe("Subscriber");

    const set = await mod.patch("/api/v1/readers/dan", { badge: " Expert " });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: "dan", badge: "Expert", badgeSource: "moderator" });
    // every comment of the reader shows it at once
    expect(await authorOf(t, first.body.id)).toMatchObject({ badge: "Expert" });
    expect(set.body.recentComments[0].author.badge).toBe("Expert");

    // the claim does not override it
    const second = await dan.post("/api/v1/discussions/bd-3/comments", { body: "two" });
    expect(second.body.author.badge).toBe("Expert");
    expect(await authorOf(t, second.body.id)).toMatchObject({ badge: "Expert" });
    expect((await mod.get("/api/v1/readers/dan")).body).toMatchObject({ badge: "Expert", badgeSource: "moderator" });

    // null clears it; the claim gives the badge again from the reader's next comment
    const cleared = await mod.patch("/api/v1/readers/dan", { badge: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ badge: null, badgeSource: null });
    expect(await authorOf(t, first.body.id)).toMatchObject({ badge: null });
    const third = await dan.post("/api/v1/discussions/bd-3/comments", { body: "three" });
    expect(third.body.author.badge).toBe("Subscriber");
    expect((await mod.get("/api/v1/readers/dan")).body).toMatchObject({ badge: "Subscriber", badgeSource: "claim" });

    // a body without badge changes nothing
    expect((await mod.patch("/api/v1/readers/dan", {})).body).toMatchObject({ badge: "Subscriber" });

    const audit = await server.app.runtime.services.prisma.auditEntry.findMany({
      where: { tenantId: t.tenantId, action: "reader.badge" },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.map((a) => [a.resourceType, a.resourceId, a.details])).toEqual([
      ["reader", "dan", { badge: "Expert", previous: "Subscriber", previousSource: "claim" }],
      ["reader", "dan", { badge: null, previous: "Expert", previousSource: "moderator" }],
    ]);
  });

  it("needs moderate_content; 404 for an unknown reader; 422 for a bad badge", async () => {
    const t = await createTestTenant(server);
    const plain = t.as({ key: (await keyWith(t, [])).key });
    const mod = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
    await (await readerOf(t, "eve")).post("/api/v1/discussions/bd-4/comments", { body: "hi" });

    const denied = await plain.patch("/api/v1/readers/eve", { badge: "Nope" });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: "missing_capability", required: "moderate_content" });
    expect((await mod.get("/api/v1/readers/eve")).body.badge).toBeNull();

    expect((await mod.patch("/api/v1/readers/nobody", { badge: "x" })).status).toBe(404);

    for (const badge of ["x".repeat(21), "tab\there"]) {
      const bad = await mod.patch("/api/v1/readers/eve", { badge });
      expect(bad.status).toBe(422);
      expect(bad.body).toMatchObject({ code: "validation_failed" });
      expect(JSON.stringify(bad.body)).toContain("badge");
    }
    expect((await mod.patch("/api/v1/readers/eve", { badge: 7 })).status).toBe(422);
    expect((await mod.get("/api/v1/readers/eve")).body.badge).toBeNull();

    // GraphQL: the same mutation
    const gql = await mod.raw("POST", "/graphql", {
      query: `mutation { updateReader(id: "eve", input: { badge: "Mod pick" }) { badge badgeSource } }`,
    });
    expect(gql.body).toEqual({ data: { updateReader: { badge: "Mod pick", badgeSource: "moderator" } } });
  });
});
