// Trust levels and shadow bans (contract section 21), decided inside the write statement
// (eng_post_comment): PUT /api/v1/readers/{readerId}/trust {"level"} — trusted skips newReaderHold,
// suspect words, maxLinks, the hook and pre-moderation (banned words still reject), premoderated holds
// every comment; audited, shown on the reader's page. POST /readers/{id}/ban {"shadow": true}: the
// reader's new comments are stored rejected (reason shadow_ban) yet answered and read back by that
// reader as published (REST, GraphQL, their stream); nobody else sees them, and nothing of them reaches
// webhooks, other streams, counts or analytics.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import type { TestServer } from "./support/server.js";
import { startReceiver } from "./support/receiver.js";
import { createVerifiedEndpoint, startWebhookServer } from "./support/receiver-app.js";
import { openSse, WAIT } from "./support/sse.js";

let server: TestServer;

beforeAll(async () => {
  server = await startWebhookServer();
});
afterAll(() => server?.stop());

const prisma = () => server.app.runtime.services.prisma;

/** A reader as a browser is: a key without moderate_content (which would show comments as they are) and their identity. */
const readerAs = async (t: TestTenant, sub: string) => t.as({ key: (await keyWith(t, [])).key, identity: await t.identity(sub) });

const post = async (t: TestTenant, sub: string, discussion: string, body: string, parentId?: string) =>
  (await readerAs(t, sub)).post(`/api/v1/discussions/${discussion}/comments`, { body, ...(parentId ? { parentId } : {}) });

const stored = (id: string) => prisma().comment.findUniqueOrThrow({ where: { id } });

describe("PUT /api/v1/readers/{readerId}/trust", () => {
  it("sets the level (shown on the reader's page, audited); 422 for an unknown level, 404 for an unknown reader, 403 without moderate_content", async () => {
    const t = await createTestTenant(server);
    await post(t, "ann", "tr-0", "hello");
    expect((await t.api.get("/api/v1/readers/ann")).body.trustLevel).toBe("default");
    const set = await t.api.put("/api/v1/readers/ann/trust", { level: "trusted" });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: "ann", trustLevel: "trusted" });
    expect((await t.api.get("/api/v1/readers/ann")).body.trustLevel).toBe("trusted");
    // the same level again changes nothing and is not audited twice
    expect((await t.api.put("/api/v1/readers/ann/trust", { level: "trusted" })).status).toBe(200);
    expect((await t.api.put("/api/v1/readers/ann/trust", { level: "premoderated" })).body.trustLevel).toBe("premoderated");

    for (const body of [{ level: "vip" }, {}, { level: 3 }]) {
      const bad = await t.api.put("/api/v1/readers/ann/trust", body);
      expect(bad.status).toBe(422);
      expect(bad.body.code).toBe("validation_failed");
    }
    expect((await t.api.put("/api/v1/readers/nobody/trust", { level: "trusted" })).status).toBe(404);
    const plain = t.as({ key: (await keyWith(t, [])).key });
    expect((await plain.put("/api/v1/readers/ann/trust", { level: "trusted" })).status).toBe(403);

    const audit = await prisma().auditEntry.findMany({
      where: { tenantId: t.tenantId, action: "reader.trust" },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.map((a) => [a.resourceId, a.details])).toEqual([
      ["ann", { level: "trusted", previous: "default" }],
      ["ann", { level: "premoderated", previous: "trusted" }],
    ]);

    const gql = await t.api.raw("POST", "/graphql", {
      query: `mutation { setReaderTrust(id: "ann", input: { level: default }) { id trustLevel } }`,
    });
    expect(gql.body).toEqual({ data: { setReaderTrust: { id: "ann", trustLevel: "default" } } });
  });
});

describe("a trusted reader", () => {
  it("skips newReaderHold, suspect words, maxLinks and pre-moderation; banned words still reject; edits alike", async () => {
    const t = await createTestTenant(server);
    const settings = await t.api.patch("/api/v1/settings", {
      moderation: "pre",
      safety: { bannedWords: ["scam"], suspectWords: ["maybe"], maxLinks: 0, newReaderHold: 5 },
    });
    expect(settings.status).toBe(200);
    // before: held
    const before = await post(t, "reg", "tr-1", "maybe see https://example.com");
    expect(before.body.status).toBe("pending");
    await t.api.put("/api/v1/readers/reg/trust", { level: "trusted" });

    const trusted = await post(t, "reg", "tr-1", "maybe see https://example.com");
    expect(trusted.status).toBe(201);
    expect(trusted.body.status).toBe("approved");
    expect((await stored(trusted.body.id)).moderationReason).toBeNull();
    const banned = await post(t, "reg", "tr-1", "a scam");
    expect(banned.body.status).toBe("rejected");
    expect((await stored(banned.body.id)).moderationReason).toEqual({ source: "rule", rule: "bannedWords", words: ["scam"] });
    // an edit is judged the same way: a suspect word keeps it published, a banned one rejects it
    const reg = await readerAs(t, "reg");
    expect((await reg.patch(`/api/v1/comments/${trusted.body.id}`, { body: "maybe, maybe" })).body.status).toBe("approved");
    expect((await reg.patch(`/api/v1/comments/${trusted.body.id}`, { body: "scam" })).body.status).toBe("rejected");

    // another reader is held as before
    expect((await post(t, "new", "tr-1", "hi")).body.status).toBe("pending");
    // back to default: held again
    await t.api.put("/api/v1/readers/reg/trust", { level: "default" });
    expect((await post(t, "reg", "tr-1", "hello again")).body.status).toBe("pending");
  });

  it("is not sent to the moderation hook", async () => {
    const t = await createTestTenant(server);
    const hook = await startReceiver(() => ({ status: 200, body: { decision: "hold" } }));
    expect((await t.api.patch("/api/v1/settings", { safety: { hook: { url: hook.url } } })).status).toBe(200);
    expect((await post(t, "ann", "tr-2", "first")).body.status).toBe("pending");
    expect(hook.requests).toHaveLength(1);
    await t.api.put("/api/v1/readers/ann/trust", { level: "trusted" });
    expect((await post(t, "ann", "tr-2", "second")).body.status).toBe("approved");
    expect(hook.requests).toHaveLength(1);
    await hook.close();
  });
});

describe("a premoderated reader", () => {
  it("has every comment held, with the reason {source: trust}; a rejection by the rules stays a rejection", async () => {
    const t = await createTestTenant(server);
    await t.api.patch("/api/v1/settings", { safety: { bannedWords: ["scam"] } });
    await post(t, "pat", "tr-3", "fine");
    await t.api.put("/api/v1/readers/pat/trust", { level: "premoderated" });
    const held = await post(t, "pat", "tr-3", "fine too");
    expect(held.body.status).toBe("pending");
    expect((await stored(held.body.id)).moderationReason).toEqual({ source: "trust", trustLevel: "premoderated" });
    const queue = await t.api.get("/api/v1/comments?status=pending");
    expect(queue.body.items.map((c: { id: string }) => c.id)).toContain(held.body.id);
    expect((await post(t, "pat", "tr-3", "scam")).body.status).toBe("rejected");
    expect((await post(t, "other", "tr-3", "fine")).body.status).toBe("approved");
  });
});

describe("a shadow ban", () => {
  it("answers and shows the reader's comments as published to them alone; nobody else, no webhook, no other stream, no count, no analytics", async () => {
    const t = await createTestTenant(server);
    const receiver = await startReceiver();
    await createVerifiedEndpoint(t, receiver);
    expect((await t.api.put("/api/v1/discussions/sb-1", { title: "Shadow" })).status).toBe(201);
    const first = await post(t, "troll", "sb-1", "before the ban");
    expect(first.body.status).toBe("approved");

    const ban = await t.api.post("/api/v1/readers/troll/ban", { shadow: true, reason: "trolling" });
    expect(ban.status).toBe(200);
    expect(ban.body.sanction).toMatchObject({ until: null, reason: "trolling", shadow: true });
    const audit = await prisma().auditEntry.findFirstOrThrow({ where: { tenantId: t.tenantId, action: "reader.ban" } });
    expect(audit.details).toMatchObject({ shadow: true });

    // streams: the troll's own, another reader's, and a moderator's
    const headers = async (sub: string) => ({ "x-api-key": (await keyWith(t, [])).key, "x-service-identity": await t.identity(sub) });
    const own = openSse(`${server.url}/api/v1/stream/sb-1`, await headers("troll"));
    const other = openSse(`${server.url}/api/v1/stream/sb-1`, await headers("ann"));
    const mod = openSse(`${server.url}/api/v1/stream/sb-1`, { "x-api-key": t.apiKey });
    for (const s of [own, other, mod]) await s.waitFor((f) => f.some((x) => x.event === "connected"));

    const shadowed = await post(t, "troll", "sb-1", "you are all wrong");
    expect(shadowed.status).toBe(201);
    expect(shadowed.body.status).toBe("approved");
    const id = shadowed.body.id as string;
    // stored rejected, with the reason moderators see
    expect(await stored(id)).toMatchObject({ status: "rejected", moderationReason: { source: "shadow_ban" }, publishedAt: null });
    // a reply to their own shadow-banned comment works for them, shadow-banned too
    const reply = await post(t, "troll", "sb-1", "and another thing", id);
    expect(reply.status).toBe(201);
    expect(reply.body.status).toBe("approved");
    // nobody else can answer it: to them it does not exist
    const answered = await post(t, "ann", "sb-1", "who said that?", id);
    expect(answered.status).toBe(422);
    expect(answered.body.errors).toEqual([expect.objectContaining({ path: "parentId" })]);
    // a reply to someone else's comment: the parent's author hears nothing
    const annRoot = await post(t, "ann", "sb-1", "a fine point");
    const annReply = await post(t, "troll", "sb-1", "no", annRoot.body.id);
    expect(annReply.body.status).toBe("approved");

    // the troll reads them back as published: REST one and list, GraphQL
    const troll = await readerAs(t, "troll");
    expect((await troll.get(`/api/v1/comments/${id}`)).body).toMatchObject({ id, status: "approved", body: "you are all wrong" });
    const trollList = (await troll.get("/api/v1/discussions/sb-1/comments?sort=oldest")).body.items.map((c: any) => [c.id, c.status]);
    expect(trollList).toEqual([
      [first.body.id, "approved"],
      [id, "approved"],
      [reply.body.id, "approved"],
      [annRoot.body.id, "approved"],
      [annReply.body.id, "approved"],
    ]);
    const gql = await troll.raw("POST", "/graphql", { query: `{ comment(id: "${id}") { id status } }` });
    expect(gql.body).toEqual({ data: { comment: { id, status: "approved" } } });

    // the troll's stream told them; the others heard only ann's comment
    await own.waitFor(() => own.events().filter((e) => e.event === "comment_created").length >= 4, WAIT.timeout);
    expect(own.events().map((e) => [e.event, e.data.data.comment.id, e.data.data.comment.status])).toEqual([
      ["comment_created", id, "approved"],
      ["comment_created", reply.body.id, "approved"],
      ["comment_created", annRoot.body.id, "approved"],
      ["comment_created", annReply.body.id, "approved"],
    ]);
    await other.waitFor(() => other.events().length >= 1, WAIT.timeout);
    await mod.waitFor(() => mod.events().length >= 1, WAIT.timeout);
    // an edit of a shadow-banned comment is told to its author alone, too
    expect((await troll.patch(`/api/v1/comments/${id}`, { body: "you are all wrong!" })).body.status).toBe("approved");
    await own.waitFor(() => own.events().some((e) => e.event === "comment_edited"), WAIT.timeout);
    await post(t, "ann", "sb-1", "the last word");
    await other.waitFor(() => other.events().length >= 2, WAIT.timeout);
    await mod.waitFor(() => mod.events().length >= 2, WAIT.timeout);
    const shadowIds = [id, reply.body.id, annReply.body.id];
    for (const s of [other, mod]) {
      expect(s.events().map((e) => e.event)).toEqual(["comment_created", "comment_created"]);
      expect(s.events().some((e) => shadowIds.includes(e.data.data.comment?.id))).toBe(false);
    }

    // nobody else sees them: another reader, anonymous lists, counts
    const ann = await readerAs(t, "ann");
    expect((await ann.get(`/api/v1/comments/${id}`)).status).toBe(404);
    const annList = (await ann.get("/api/v1/discussions/sb-1/comments")).body.items.map((c: any) => c.id);
    expect(annList).toHaveLength(3);
    expect(annList.some((x: string) => shadowIds.includes(x))).toBe(false);
    const discussion = (await t.api.get("/api/v1/discussions/sb-1")).body;
    expect(discussion.commentCount).toBe(3);
    expect((await t.api.get(`/api/v1/comments/${annRoot.body.id}`)).body.replyCount).toBe(0);
    // no inbox item for ann
    expect((await ann.get("/api/v1/me/inbox")).body.items).toEqual([]);
    // moderators see them as they are
    expect((await t.api.get(`/api/v1/comments/${id}`)).body.status).toBe("rejected");

    // webhooks: ann's comments and the first one went out; none of the shadow-banned ones
    await receiver.waitFor(() => receiver.deliveries().filter((d) => d.event === "comment_created").length >= 3, WAIT.timeout);
    const delivered = receiver.deliveries().map((d) => d.json?.data?.comment?.id);
    expect(delivered.some((x) => shadowIds.includes(x))).toBe(false);
    expect(receiver.deliveries().some((d) => d.event === "notification_reply")).toBe(false);

    // analytics: the troll is not an active reader of today; their comments are not counted
    const analytics = (await t.api.get("/api/v1/analytics?interval=day")).body;
    expect(analytics.totals.comments).toBe(3);
    expect(analytics.totals.activeReaders).toBe(2);

    // lifting the ban: their next comment is published to all
    expect((await t.api.del("/api/v1/readers/troll/ban")).status).toBe(204);
    expect((await post(t, "troll", "sb-1", "sorry")).body.status).toBe("approved");
    expect((await t.api.get("/api/v1/discussions/sb-1")).body.commentCount).toBe(4);
    for (const s of [own, other, mod]) s.close();
    await receiver.close();
  });

  it("shows the shadow-banned reader's comments in their place on the right page", async () => {
    const t = await createTestTenant(server);
    for (let i = 0; i < 5; i++) await post(t, "ann", "sb-2", `ann ${i}`);
    // the troll is unknown until they post: the ban needs a reader
    expect((await t.api.post("/api/v1/readers/troll/ban", { shadow: true })).status).toBe(404);
    const troll = await readerAs(t, "troll");
    await troll.post("/api/v1/discussions/sb-2/comments", { body: "first" });
    expect((await t.api.post("/api/v1/readers/troll/ban", { shadow: true })).status).toBe(200);
    for (let i = 0; i < 3; i++) await post(t, "troll", "sb-2", `troll ${i}`);
    for (let i = 5; i < 8; i++) await post(t, "ann", "sb-2", `ann ${i}`);
    // pages of 3, newest first: every comment exactly once, in order
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
      const page: any = (await troll.get(`/api/v1/discussions/sb-2/comments?limit=3${q}`)).body;
      seen.push(...page.items.map((c: any) => c.body));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([
      "ann 7",
      "ann 6",
      "ann 5",
      "troll 2",
      "troll 1",
      "troll 0",
      "first",
      "ann 4",
      "ann 3",
      "ann 2",
      "ann 1",
      "ann 0",
    ]);
    // ann's hold the published ones
    expect((await (await readerAs(t, "ann")).get("/api/v1/discussions/sb-2/comments?limit=50")).body.items).toHaveLength(9);
  });
});
