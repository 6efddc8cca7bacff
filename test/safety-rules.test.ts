// Trust and safety, the rules (contract section 12): the `safety` settings, word and link rules and
// newReaderHold on create and on edit, the reasons they record (moderators only), and what streams see.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith, type TestTenant } from "./support/fixtures.js";
import { openSse, type SseClient } from "./support/sse.js";
import { TestModerationReasonDocument, TestQueueReasonsDocument } from "./generated/operations.js";
import { DEFAULT_SETTINGS } from "../src/tenancy/settings/tree.js";
import { pgliteDataDir } from "./support/pglite-template.js";
import { loggedEvents } from "./support/event-log.js";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const eventsOf = (tenantId: string, discussionId: string) =>
  loggedEvents(server.app.runtime.services.prisma, { where: { tenantId, discussionId }, orderBy: { seq: "asc" } });

/** A tenant with these safety settings (set through the API), a moderator and a plain key. */
async function tenantWith(safety: Record<string, unknown>, other: Record<string, unknown> = {}) {
  const t = await createTestTenant(server);
  const set = await t.api.patch("/api/v1/settings", { ...other, safety });
  expect(set.status).toBe(200);
  const plain = (await keyWith(t, [])).key;
  const moderator = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
  const readerAs = async (sub: string) => t.as({ key: plain, identity: await t.identity(sub) });
  return { t, plain, moderator, readerAs };
}

/** A reader's stream of the discussion (ticket minted by a key without moderate_content). */
async function readerStream(t: TestTenant, key: string, discussionId: string): Promise<SseClient> {
  const r = await t.as({ key }).post("/api/v1/stream/ticket", { discussionId });
  expect(r.status).toBe(201);
  const s = openSse(`${server.url}/api/v1/stream/${discussionId}?ticket=${r.body.ticket}`);
  await s.waitFor((f) => f.some((x) => x.event === "connected"));
  return s;
}

describe("safety settings", () => {
  it("GET has the section's defaults; PATCH merges it field by field and the hook gets its defaults", async () => {
    const t = await createTestTenant(server);
    expect((await t.api.get("/api/v1/settings")).body.safety).toEqual({
      bannedWords: [],
      suspectWords: [],
      maxLinks: null,
      newReaderHold: 0,
      reportThreshold: 3,
      reportAction: "queue",
      hook: null,
      akismet: null,
    });
    const a = await t.api.patch("/api/v1/settings", { safety: { bannedWords: ["scam"], hook: { url: "http://127.0.0.1:9/check" } } });
    expect(a.status).toBe(200);
    expect(a.body.safety).toEqual({
      ...DEFAULT_SETTINGS.safety,
      bannedWords: ["scam"],
      hook: { url: "http://127.0.0.1:9/check", timeoutMs: 1500, onTimeout: "hold", secret: expect.stringMatching(/^whsec_/) }, // test/safety-hook.test.ts
    });
    const b = await t.api.patch("/api/v1/settings", { safety: { maxLinks: 2, hook: { timeoutMs: 3000 } } });
    expect(b.body.safety).toMatchObject({
      bannedWords: ["scam"],
      maxLinks: 2,
      hook: { url: "http://127.0.0.1:9/check", timeoutMs: 3000 },
    });
    const c = await t.api.patch("/api/v1/settings", { safety: { maxLinks: null, hook: null } });
    expect(c.body.safety).toMatchObject({ bannedWords: ["scam"], maxLinks: null, hook: null });
    // audited like every settings change
    const audit = await t.admin.get("/api/v1/audit?action=settings.update");
    const fields = audit.body.items.flatMap((e: any) => e.details.changes.map((ch: any) => ch.field));
    expect(fields).toEqual(expect.arrayContaining(["safety.bannedWords", "safety.maxLinks", "safety.hook"]));
  });

  it("refuses invalid values with a problem listing each field path; nothing is stored", async () => {
    const t = await createTestTenant(server);
    const r = await t.api.patch("/api/v1/settings", {
      safety: {
        bannedWords: ["fine", "", "..."],
        suspectWords: Array.from({ length: 2001 }, (_, i) => `w${i}`),
        maxLinks: -1,
        newReaderHold: 101,
        reportThreshold: 0,
        reportAction: "delete",
        hook: { url: "javascript:alert(1)", timeoutMs: 6000, onTimeout: "maybe" },
      },
    });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe("validation_failed");
    expect(r.body.errors.map((e: any) => e.path).sort()).toEqual([
      "safety.bannedWords[1]",
      "safety.bannedWords[2]",
      "safety.hook.onTimeout",
      "safety.hook.timeoutMs",
      "safety.hook.url",
      "safety.maxLinks",
      "safety.newReaderHold",
      "safety.reportAction",
      "safety.reportThreshold",
      "safety.suspectWords",
    ]);
    const noUrl = await t.api.patch("/api/v1/settings", { safety: { hook: { timeoutMs: 1000 } } });
    expect(noUrl.status).toBe(422);
    expect(noUrl.body.errors.map((e: any) => e.path)).toEqual(["safety.hook.url"]);
    const unknown = await t.api.patch("/api/v1/settings", { safety: { blockedWords: [] } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.map((e: any) => e.path)).toEqual(["safety.blockedWords"]);
    expect((await t.api.get("/api/v1/settings")).body.safety).toEqual(DEFAULT_SETTINGS.safety);
  });
});

describe("rules on create", () => {
  it("banned → rejected, suspect → pending, too many links → pending, each with its reason for moderators only", async () => {
    const { t, plain, moderator, readerAs } = await tenantWith({ bannedWords: ["scam"], suspectWords: ["cheap"], maxLinks: 1 });
    const ann = await readerAs("ann");
    const post = (body: string) => ann.post("/api/v1/discussions/rules-1/comments", { body });
    const banned = await post("what a S.C.A.M, truly");
    expect(banned.status).toBe(201);
    expect(banned.body.status).toBe("rejected");
    expect(banned.body).not.toHaveProperty("moderationReason"); // the author is not told why
    const suspect = await post("Ch3ap watches");
    expect(suspect.body.status).toBe("pending");
    // maxLinks counts rendered links: a bare domain is text, www. and a scheme are links
    const links = await post("see www.a.com and https://b.org/x");
    expect(links.body.status).toBe("pending");
    const clean = await post("a fine comment about a.com");
    expect(clean.body.status).toBe("approved");

    const reasonOf = async (id: string) => (await moderator.get(`/api/v1/comments/${id}`)).body.moderationReason;
    expect(await reasonOf(banned.body.id)).toEqual({ source: "rule", rule: "bannedWords", words: ["scam"] });
    expect(await reasonOf(suspect.body.id)).toEqual({ source: "rule", rule: "suspectWords", words: ["cheap"] });
    expect(await reasonOf(links.body.id)).toEqual({ source: "rule", rule: "maxLinks", links: 2, maxLinks: 1 });
    expect((await moderator.get(`/api/v1/comments/${clean.body.id}`)).body).not.toHaveProperty("moderationReason");
    // the queue lists the held ones with their reasons
    const queue = await moderator.get("/api/v1/comments?status=pending");
    expect(queue.body.items.map((c: any) => [c.id, c.moderationReason.rule])).toEqual([
      [suspect.body.id, "suspectWords"],
      [links.body.id, "maxLinks"],
    ]);
    // readers and keys without moderate_content never see it (REST leaves it out, GraphQL answers null)
    expect((await ann.get(`/api/v1/comments/${banned.body.id}`)).body).not.toHaveProperty("moderationReason");
    expect((await t.as({ key: plain }).get(`/api/v1/comments/${clean.body.id}`)).body).not.toHaveProperty("moderationReason");
    const asReader = await ann.gql(TestModerationReasonDocument, { id: suspect.body.id });
    expect(asReader.errors).toBeUndefined();
    expect(asReader.data!.comment).toEqual({ id: suspect.body.id, status: "pending", moderationReason: null });
    const asModerator = await moderator.gql(TestModerationReasonDocument, { id: suspect.body.id });
    expect(asModerator.data!.comment.moderationReason).toEqual({ source: "rule", rule: "suspectWords", words: ["cheap"] });
    const queued = await moderator.gql(TestQueueReasonsDocument, {});
    expect(queued.data!.moderationQueue.items.map((c) => (c.moderationReason as { rule: string }).rule)).toEqual([
      "suspectWords",
      "maxLinks",
    ]);

    // only the clean one is public; events of the others went to their author's stream only
    expect((await t.api.get("/api/v1/discussions/rules-1")).body.commentCount).toBe(1);
    const events = await eventsOf(t.tenantId, "rules-1");
    expect(events.map((e) => [e.type, e.audience, (e.payload as any).data.comment.status])).toEqual([
      ["comment_created", "reader", "rejected"],
      ["comment_created", "reader", "pending"],
      ["comment_created", "reader", "pending"],
      ["comment_created", "all", "approved"],
    ]);
    expect(events.every((e) => !("moderationReason" in (e.payload as any).data.comment))).toBe(true);
  });

  it("a held or rejected comment never reaches a reader's stream", async () => {
    const { t, plain, readerAs } = await tenantWith({ bannedWords: ["scam"], suspectWords: ["cheap"] });
    const bob = await readerAs("bob");
    await bob.post("/api/v1/discussions/rules-2/comments", { body: "first" });
    const stream = await readerStream(t, plain, "rules-2");
    try {
      await bob.post("/api/v1/discussions/rules-2/comments", { body: "scam" });
      await bob.post("/api/v1/discussions/rules-2/comments", { body: "cheap" });
      await bob.post("/api/v1/discussions/rules-2/comments", { body: "last" });
      await stream.waitFor((f) => f.some((x) => x.event === "comment_created" && x.data.data.comment.body === "last"));
      expect(stream.events().map((f) => f.data.data.comment.body)).toEqual(["last"]);
    } finally {
      stream.close();
    }
  });

  it("tenant pre-moderation keeps working; a rule only makes the outcome stricter", async () => {
    const { moderator, readerAs } = await tenantWith({ bannedWords: ["scam"], suspectWords: ["cheap"] }, { moderation: "pre" });
    const cy = await readerAs("cy");
    const clean = await cy.post("/api/v1/discussions/rules-3/comments", { body: "hello" });
    expect(clean.body.status).toBe("pending");
    expect((await moderator.get(`/api/v1/comments/${clean.body.id}`)).body).not.toHaveProperty("moderationReason");
    expect((await cy.post("/api/v1/discussions/rules-3/comments", { body: "cheap" })).body.status).toBe("pending");
    expect((await cy.post("/api/v1/discussions/rules-3/comments", { body: "scam" })).body.status).toBe("rejected");
  });

  it("a moderator's decision records itself, keeping the rule's reason it answered", async () => {
    const { moderator, readerAs } = await tenantWith({ suspectWords: ["cheap"] });
    const dee = await readerAs("dee");
    const held = (await dee.post("/api/v1/discussions/rules-4/comments", { body: "cheap" })).body;
    const approved = await moderator.post(`/api/v1/comments/${held.id}/approve`);
    expect(approved.body.status).toBe("approved");
    const rule = { source: "rule", rule: "suspectWords", words: ["cheap"] };
    expect(approved.body.moderationReason).toEqual({ source: "moderator", decision: "approved", previous: rule });
    const rejected = await moderator.post(`/api/v1/comments/${held.id}/reject`);
    expect(rejected.body.moderationReason).toEqual({ source: "moderator", decision: "rejected", previous: rule });
  });
});

describe("newReaderHold", () => {
  it("holds a reader's first n comments until one of theirs is approved", async () => {
    const { moderator, readerAs } = await tenantWith({ newReaderHold: 2 });
    const eve = await readerAs("eve");
    const post = async (body: string) => (await eve.post("/api/v1/discussions/rules-5/comments", { body })).body;
    const first = await post("one");
    expect(first.status).toBe("pending");
    expect((await moderator.get(`/api/v1/comments/${first.id}`)).body.moderationReason).toEqual({
      source: "new_reader",
      newReaderHold: 2,
      earlierComments: 0,
    });
    const second = await post("two");
    expect(second.status).toBe("pending");
    expect((await moderator.get(`/api/v1/comments/${second.id}`)).body.moderationReason.earlierComments).toBe(1);
    expect((await post("three")).status).toBe("approved"); // past the first n

    // another new reader: once one of theirs is approved, the rest are published
    const fay = await readerAs("fay");
    const held = (await fay.post("/api/v1/discussions/rules-5/comments", { body: "hi" })).body;
    expect(held.status).toBe("pending");
    await moderator.post(`/api/v1/comments/${held.id}/approve`);
    expect((await fay.post("/api/v1/discussions/rules-5/comments", { body: "again" })).body.status).toBe("approved");
  });
});

describe("rules on edit", () => {
  it("an edit of a published comment that breaks a rule takes it out of public view, as a rejection does", async () => {
    const { t, plain, moderator, readerAs } = await tenantWith({ bannedWords: ["scam"], suspectWords: ["cheap"] });
    const gus = await readerAs("gus");
    const other = await readerAs("other");
    const a = (await gus.post("/api/v1/discussions/rules-6/comments", { body: "nice post" })).body;
    const b = (await gus.post("/api/v1/discussions/rules-6/comments", { body: "another" })).body;
    const reply = (await other.post("/api/v1/discussions/rules-6/comments", { body: "re", parentId: b.id })).body;
    expect(reply.status).toBe("approved");
    expect((await t.api.get("/api/v1/discussions/rules-6")).body.commentCount).toBe(3);
    const before = (await eventsOf(t.tenantId, "rules-6")).length;
    const stream = await readerStream(t, plain, "rules-6");
    try {
      const rejected = await gus.patch(`/api/v1/comments/${a.id}`, { body: "it is a s c a m" });
      expect(rejected.status).toBe(200);
      expect(rejected.body.status).toBe("rejected");
      const held = await gus.patch(`/api/v1/comments/${b.id}`, { body: "cheap!" });
      expect(held.body.status).toBe("pending");
      // gone from readers: lists, counts, a direct read
      expect((await other.get(`/api/v1/comments/${a.id}`)).status).toBe(404);
      expect((await other.get(`/api/v1/comments/${b.id}`)).status).toBe(404);
      expect((await t.as({ key: plain }).get("/api/v1/discussions/rules-6/comments")).body.items.map((c: any) => c.id)).toEqual([reply.id]);
      expect((await t.api.get("/api/v1/discussions/rules-6")).body.commentCount).toBe(1);
      expect((await t.api.get(`/api/v1/comments/${reply.id}`)).body).toMatchObject({ parentId: b.id });
      // moderators see why
      expect((await moderator.get(`/api/v1/comments/${a.id}`)).body.moderationReason).toEqual({
        source: "rule",
        rule: "bannedWords",
        words: ["scam"],
      });
      expect((await moderator.get("/api/v1/comments?status=pending")).body.items.map((c: any) => c.id)).toEqual([b.id]);
      // the edits and the status change went to moderators only
      const events = (await eventsOf(t.tenantId, "rules-6")).slice(before);
      expect(events.map((e) => [e.type, e.audience, (e.payload as any).data.comment.status])).toEqual([
        ["comment_rejected", "moderators", "rejected"],
        ["comment_edited", "moderators", "rejected"],
        ["comment_edited", "moderators", "pending"],
      ]);
      // a later public event arrives, and nothing of the edits came before it
      await other.post("/api/v1/discussions/rules-6/comments", { body: "still here" });
      await stream.waitFor((f) => f.some((x) => x.event === "comment_created"));
      expect(stream.events().map((f) => [f.event, f.data.data.comment.body])).toEqual([["comment_created", "still here"]]);
    } finally {
      stream.close();
    }
    // a clean edit never loosens: the held comment stays held; approving it publishes it again
    expect((await gus.patch(`/api/v1/comments/${b.id}`, { body: "fine now" })).body.status).toBe("pending");
    expect((await moderator.post(`/api/v1/comments/${b.id}/approve`)).body.status).toBe("approved");
    expect((await t.api.get("/api/v1/discussions/rules-6")).body.commentCount).toBe(3); // b, the reply, "still here"
  });
});

describe("on the embedded database (PGlite)", () => {
  it("applies the rules, records the reasons and withdraws an edited comment the same way", { timeout: 120_000 }, async () => {
    const dataDir = await pgliteDataDir("eng-safety-");
    const app = await buildApp(loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "silent" }));
    const embedded: TestServer = { url: await app.start(), app, stop: () => app.stop() };
    try {
      expect(app.runtime.services.db.kind).toBe("embedded");
      const t = await createTestTenant(embedded);
      expect((await t.api.patch("/api/v1/settings", { safety: { bannedWords: ["scam"], newReaderHold: 1 } })).status).toBe(200);
      const hal = await t.reader("hal");
      const held = (await hal.post("/api/v1/discussions/e-1/comments", { body: "hello" })).body;
      expect(held.status).toBe("pending");
      expect((await t.api.get(`/api/v1/comments/${held.id}`)).body.moderationReason).toMatchObject({ source: "new_reader" });
      expect((await t.api.post(`/api/v1/comments/${held.id}/approve`)).body.status).toBe("approved");
      const edited = await hal.patch(`/api/v1/comments/${held.id}`, { body: "a s c a m" });
      expect(edited.body).toMatchObject({
        status: "rejected",
        moderationReason: { source: "rule", rule: "bannedWords", words: ["scam"] },
      });
      expect((await t.api.get("/api/v1/discussions/e-1")).body.commentCount).toBe(0);
    } finally {
      await embedded.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
