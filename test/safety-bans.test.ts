// Reader sanctions (contract section 12): bans and suspensions refuse a reader's post, edit, reaction
// and report with 403 reader_banned (and `until`), judged by the write functions at the app clock's
// time; lifting, rejectPending, the moderator's view of a reader, audit entries, GraphQL; a ban
// revokes the reader's hosted sign-in sessions for good, a suspension or a shadow ban keeps them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../src/lib/clock.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, keyWith } from "./support/fixtures.js";
import { client } from "./support/client.js";
import { signInGuest } from "./support/sign-in.js";
import { startSession } from "../src/auth/reader-sessions.js";
import { TestBanReaderDocument, TestLiftReaderBanDocument, TestReaderDocument } from "./generated/operations.js";
import { loggedEvents } from "./support/event-log.js";

let server: TestServer;
const clock = manualClock(new Date());

beforeAll(async () => {
  server = await startServer({}, { clock });
});
afterAll(() => server?.stop());

const eventsOf = (tenantId: string, discussionId: string) =>
  loggedEvents(server.app.runtime.services.prisma, { where: { tenantId, discussionId }, orderBy: { seq: "asc" } });

/** A reader's client on another instance (server) of the same database. */
const createTestTenantClient = (url: string, key: string, identity: string) => client(url, { key, identity });

async function tenantWith(safety: Record<string, unknown> = {}, other: Record<string, unknown> = {}) {
  const t = await createTestTenant(server);
  if (Object.keys(safety).length || Object.keys(other).length) {
    expect((await t.api.patch("/api/v1/settings", { ...other, safety })).status).toBe(200);
  }
  const plain = (await keyWith(t, [])).key;
  const moderator = t.as({ key: (await keyWith(t, ["moderate_content"])).key });
  // identities live an hour, so the tests may move the clock
  const readerAs = async (sub: string) => t.as({ key: plain, identity: await t.identity(sub, { ttlSeconds: 3600 }) });
  return { t, plain, moderator, readerAs };
}

describe("a banned reader", () => {
  it("cannot post, edit, react or report: 403 reader_banned with until null; lifting lets them again", async () => {
    const { t, moderator, readerAs } = await tenantWith();
    const ann = await readerAs("ann");
    const bob = await readerAs("bob");
    const mine = (await ann.post("/api/v1/discussions/ban-1/comments", { body: "before" })).body;
    const bobs = (await bob.post("/api/v1/discussions/ban-1/comments", { body: "bob's" })).body;

    const ban = await moderator.post("/api/v1/readers/ann/ban", { reason: "spam waves" });
    expect(ban.status).toBe(200);
    expect(ban.body).toMatchObject({
      id: "ann",
      name: "Reader ann",
      sanction: { until: null, reason: "spam waves", createdAt: expect.any(String) },
    });

    const refusals = [
      await ann.post("/api/v1/discussions/ban-1/comments", { body: "again" }),
      await ann.patch(`/api/v1/comments/${mine.id}`, { body: "edited" }),
      await ann.post(`/api/v1/comments/${bobs.id}/reactions`, { kind: "like" }),
      await ann.post(`/api/v1/comments/${bobs.id}/reports`, { reason: "spam" }),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(403);
      expect(r.headers.get("content-type")).toContain("application/problem+json");
      expect(r.body).toMatchObject({ code: "reader_banned", status: 403, until: null });
      expect(r.body).toHaveProperty("until", null);
    }
    // nothing was written
    expect((await t.api.get(`/api/v1/comments/${mine.id}`)).body.body).toBe("before");
    expect((await t.api.get(`/api/v1/comments/${bobs.id}`)).body.reactions).toEqual({});
    expect((await eventsOf(t.tenantId, "ban-1")).map((e) => e.type)).toEqual(["comment_created", "comment_created"]);
    // other readers are not affected; the banned reader may still delete their own comment
    expect((await bob.post("/api/v1/discussions/ban-1/comments", { body: "fine" })).status).toBe(201);

    // the reader's row says until when a sanction may be in force (a post looks for it only then)
    const sanctionedUntil = async () =>
      (
        await server.app.runtime.services.sql.query<{ until: string | null }>(
          "SELECT sanctioned_until::text AS until FROM readers WHERE tenant_id = $1 AND id = 'ann'",
          [t.tenantId],
        )
      )[0]!.until;
    expect(await sanctionedUntil()).toBe("infinity");
    clock.advance(1); // the clock is the test's: the lift comes after the ban in the audit log
    expect((await moderator.del("/api/v1/readers/ann/ban")).status).toBe(204);
    expect(await sanctionedUntil()).toBeNull();
    expect((await moderator.del("/api/v1/readers/ann/ban")).status).toBe(204); // none in force: also 204
    expect((await moderator.get("/api/v1/readers/ann")).body.sanction).toBeNull();
    expect((await ann.post("/api/v1/discussions/ban-1/comments", { body: "back" })).status).toBe(201);
    expect((await ann.post(`/api/v1/comments/${bobs.id}/reactions`, { kind: "like" })).status).toBe(200);

    const audit = (await t.admin.get("/api/v1/audit?action=reader.")).body.items;
    expect(audit.map((e: any) => [e.action, e.resource])).toEqual([
      ["reader.unban", { type: "reader", id: "ann" }],
      ["reader.ban", { type: "reader", id: "ann" }],
    ]);
    expect(audit[1].details).toMatchObject({ until: null, reason: "spam waves", rejectedPending: 0 });
  });

  it("outlives the reader's erasure: refused on their first post after it, and after their row is made again another way", async () => {
    const { t, moderator, readerAs } = await tenantWith();
    const manager = t.as({ key: (await keyWith(t, ["manage_readers"])).key });
    const cy = await readerAs("cy");
    expect((await cy.post("/api/v1/discussions/erased-1/comments", { body: "before" })).status).toBe(201);
    expect((await moderator.post("/api/v1/readers/cy/ban", { reason: "spam" })).status).toBe(200);
    expect((await manager.del("/api/v1/readers/cy")).status).toBe(204);
    const row = async () =>
      (
        await server.app.runtime.services.sql.query<{ until: string | null }>(
          "SELECT sanctioned_until::text AS until FROM readers WHERE tenant_id = $1 AND id = 'cy'",
          [t.tenantId],
        )
      )[0];
    expect(await row()).toBeUndefined();
    // no row: their first post since the erasure looks for the sanction
    const first = await cy.post("/api/v1/discussions/erased-1/comments", { body: "back again" });
    expect([first.status, first.body.code]).toEqual([403, "reader_banned"]);
    // a row made again by something else than a post (their email preferences) starts with the sanction's until
    expect((await cy.patch("/api/v1/me/notifications", { replies: "off" })).status).toBe(200);
    expect(await row()).toEqual({ until: "infinity" });
    const then = await cy.post("/api/v1/discussions/erased-1/comments", { body: "and again" });
    expect([then.status, then.body.code]).toEqual([403, "reader_banned"]);
    expect((await t.api.get("/api/v1/discussions/erased-1/comments")).body.items).toHaveLength(1);
  });

  it("a suspension ends at until, judged by the app's clock; until in the past is 422", async () => {
    const { moderator, readerAs } = await tenantWith();
    const cy = await readerAs("cy");
    await cy.post("/api/v1/discussions/ban-2/comments", { body: "hi" });
    const past = await moderator.post("/api/v1/readers/cy/ban", { until: new Date(clock.now().getTime() - 1000).toISOString() });
    expect(past.status).toBe(422);
    expect(past.body.errors).toEqual([{ path: "until", message: "must be in the future" }]);
    const bad = await moderator.post("/api/v1/readers/cy/ban", { until: "tomorrow", reason: 3, rejectPending: "yes" });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["reason", "rejectPending"]);
    const notADate = await moderator.post("/api/v1/readers/cy/ban", { until: "tomorrow", reason: "x".repeat(501) });
    expect(notADate.status).toBe(422);
    expect(notADate.body.errors.map((e: any) => e.path).sort()).toEqual(["reason", "until"]);

    const until = new Date(clock.now().getTime() + 60_000).toISOString();
    const s = await moderator.post("/api/v1/readers/cy/ban", { until });
    expect(s.status).toBe(200);
    expect(s.body.sanction).toMatchObject({ until, reason: null });
    const refused = await cy.post("/api/v1/discussions/ban-2/comments", { body: "during" });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "reader_banned", until });

    clock.advance(61_000);
    expect((await cy.post("/api/v1/discussions/ban-2/comments", { body: "after" })).status).toBe(201);
    expect((await moderator.get("/api/v1/readers/cy")).body.sanction).toBeNull();
  });

  it("a new ban replaces the sanction in force", async () => {
    const { moderator, readerAs } = await tenantWith();
    const dee = await readerAs("dee");
    await dee.post("/api/v1/discussions/ban-3/comments", { body: "hi" });
    await moderator.post("/api/v1/readers/dee/ban", { until: new Date(clock.now().getTime() + 60_000).toISOString() });
    const permanent = await moderator.post("/api/v1/readers/dee/ban", {});
    expect(permanent.body.sanction).toMatchObject({ until: null, reason: null });
    clock.advance(120_000);
    expect((await dee.post("/api/v1/discussions/ban-3/comments", { body: "x" })).body).toMatchObject({
      code: "reader_banned",
      until: null,
    });
  });

  it("rejectPending rejects their pending comments in the same step, with a moderator's rejection events", async () => {
    const { t, moderator, readerAs } = await tenantWith({}, { moderation: "pre" });
    const eve = await readerAs("eve");
    const a = (await eve.post("/api/v1/discussions/ban-4a/comments", { body: "one" })).body;
    const b = (await eve.post("/api/v1/discussions/ban-4b/comments", { body: "two" })).body;
    const published = (await eve.post("/api/v1/discussions/ban-4a/comments", { body: "three" })).body;
    await moderator.post(`/api/v1/comments/${published.id}/approve`);
    const other = (await (await readerAs("fay")).post("/api/v1/discussions/ban-4a/comments", { body: "not eve's" })).body;

    const ban = await moderator.post("/api/v1/readers/eve/ban", { rejectPending: true, reason: "troll" });
    expect(ban.status).toBe(200);
    expect(ban.body.commentCounts).toEqual({ approved: 1, pending: 0, rejected: 2, deleted: 0 });
    for (const id of [a.id, b.id]) {
      const c = (await moderator.get(`/api/v1/comments/${id}`)).body;
      expect(c.status).toBe("rejected");
      expect(c.moderationReason).toEqual({ source: "moderator", decision: "rejected", ban: { until: null } });
    }
    expect((await moderator.get(`/api/v1/comments/${published.id}`)).body.status).toBe("approved");
    expect((await moderator.get(`/api/v1/comments/${other.id}`)).body.status).toBe("pending");
    for (const [d, id] of [
      ["ban-4a", a.id],
      ["ban-4b", b.id],
    ] as const) {
      const last = (await eventsOf(t.tenantId, d)).at(-1)!;
      expect([last.type, last.audience, (last.payload as any).data.comment.id]).toEqual(["comment_rejected", "moderators", id]);
    }
    expect((await t.admin.get("/api/v1/audit?action=reader.ban")).body.items[0].details).toMatchObject({ rejectedPending: 2 });
  });
});

describe("a reader's hosted sign-in sessions", () => {
  /** A tenant with guests signing in, and a guest's session as X-Service-Identity. */
  async function guests() {
    const ctx = await tenantWith({}, { signIn: { methods: ["guest"], guest: { moderation: "post" } } });
    const session = async (name: string) => {
      const g = await signInGuest(server.url, ctx.t.tenantId, name);
      return {
        id: g.reader.id,
        path: `/api/v1/readers/${encodeURIComponent(g.reader.id)}`,
        as: ctx.t.as({ key: ctx.plain, identity: g.token }),
      };
    };
    return { ...ctx, session };
  }

  it("a ban revokes them: lifting it brings none back, the reader signs in again", async () => {
    const { moderator, session } = await guests();
    const troll = await session("Troll");
    const other = await session("Other");
    expect((await troll.as.get("/api/v1/me")).status).toBe(200);

    clock.advance(1_000);
    const ban = await moderator.post(`${troll.path}/ban`, { reason: "abuse" });
    expect(ban.status).toBe(200);
    const banned = await troll.as.get("/api/v1/me");
    expect([banned.status, banned.body.code, banned.body.detail]).toEqual([401, "invalid_identity", expect.stringMatching(/banned/)]);
    expect((await other.as.get("/api/v1/me")).status).toBe(200); // only that reader's

    clock.advance(1_000);
    expect((await moderator.del(`${troll.path}/ban`)).status).toBe(204);
    const after = await troll.as.get("/api/v1/me");
    expect([after.status, after.body.code]).toEqual([401, "invalid_identity"]);
    expect(after.body.detail).toMatch(/sign in again/);
    expect((await troll.as.post("/api/v1/discussions/sessions-1/comments", { body: "back?" })).status).toBe(401);
  });

  it("a session begun while a ban is in force stays revoked once the ban ends (lifted, or made a suspension)", async () => {
    const { t, moderator, session } = await guests();
    for (const end of ["lift", "suspend"] as const) {
      const g = await session(`Persistent ${end}`);
      expect((await moderator.post(`${g.path}/ban`, {})).status).toBe(200);
      // the reader signs in again while banned (as an email link would: the same reader), refused
      const during = await startSession(
        server.app.runtime.services.stores(t.tenantId),
        clock,
        { id: g.id, name: "Persistent", avatarUrl: null, email: null, method: "guest" },
        30,
      );
      const later = t.as({ key: t.apiKey, identity: during.token });
      expect((await later.get("/api/v1/me")).body.detail).toMatch(/banned/);
      clock.advance(1_000);
      if (end === "lift") expect((await moderator.del(`${g.path}/ban`)).status).toBe(204);
      else
        expect((await moderator.post(`${g.path}/ban`, { until: new Date(clock.now().getTime() + 60_000).toISOString() })).status).toBe(200);
      for (const as of [g.as, later]) {
        const r = await as.get("/api/v1/me");
        expect([r.status, r.body.detail], end).toEqual([401, expect.stringMatching(/sign in again/)]);
      }
      // a session begun after the ban ended works
      clock.advance(1_000);
      const fresh = await startSession(
        server.app.runtime.services.stores(t.tenantId),
        clock,
        { id: g.id, name: "Persistent", avatarUrl: null, email: null, method: "guest" },
        30,
      );
      expect((await t.as({ key: t.apiKey, identity: fresh.token }).get("/api/v1/me")).status).toBe(200);
    }
  });

  it("a suspension keeps them: refused writes until it ends, usable throughout and after", async () => {
    const { moderator, session } = await guests();
    const g = await session("Hothead");
    const until = new Date(clock.now().getTime() + 60_000).toISOString();
    const suspend = await moderator.post(`${g.path}/ban`, { until, reason: "cool down" });
    expect(suspend.status).toBe(200);
    expect((await g.as.get("/api/v1/me")).status).toBe(200); // still signed in
    const refused = await g.as.post("/api/v1/discussions/sessions-2/comments", { body: "now" });
    expect([refused.status, refused.body.code, refused.body.until]).toEqual([403, "reader_banned", until]);
    clock.advance(61_000);
    expect((await g.as.get("/api/v1/me")).status).toBe(200);
    expect((await g.as.post("/api/v1/discussions/sessions-2/comments", { body: "later" })).status).toBe(201);
    // lifting a suspension early keeps them too
    const again = await moderator.post(`${g.path}/ban`, { until: new Date(clock.now().getTime() + 60_000).toISOString() });
    expect(again.status).toBe(200);
    expect((await moderator.del(`${g.path}/ban`)).status).toBe(204);
    expect((await g.as.get("/api/v1/me")).status).toBe(200);
  });

  it("a shadow ban keeps them: it must not show", async () => {
    const { moderator, session } = await guests();
    const g = await session("Shadowed");
    expect((await moderator.post(`${g.path}/ban`, { shadow: true })).status).toBe(200);
    expect((await g.as.get("/api/v1/me")).status).toBe(200);
    const posted = await g.as.post("/api/v1/discussions/sessions-3/comments", { body: "unseen" });
    expect([posted.status, posted.body.status]).toEqual([201, "approved"]); // as the reader sees it
  });
});

describe("on every instance", () => {
  it("a ban made through one instance refuses the reader on another at once, and so does its lift", async () => {
    const other = await startServer({}, { clock });
    try {
      const { t, plain, moderator } = await tenantWith();
      const identity = await t.identity("ivy", { ttlSeconds: 3600 });
      const there = createTestTenantClient(other.url, plain, identity);
      expect((await there.post("/api/v1/discussions/ban-7/comments", { body: "hi" })).status).toBe(201);
      expect((await moderator.post("/api/v1/readers/ivy/ban", {})).status).toBe(200);
      expect((await there.post("/api/v1/discussions/ban-7/comments", { body: "again" })).body).toMatchObject({ code: "reader_banned" });
      expect((await moderator.del("/api/v1/readers/ivy/ban")).status).toBe(204);
      expect((await there.post("/api/v1/discussions/ban-7/comments", { body: "back" })).status).toBe(201);
    } finally {
      await other.stop();
    }
  });
});

describe("the reader view", () => {
  it("profile, counts by status, open reports against them, sanction, latest comments; 404 and 403", async () => {
    const { t, plain, moderator, readerAs } = await tenantWith({ suspectWords: ["cheap"] });
    const gus = t.as({ key: plain, identity: await t.identity("gus", { name: "Gus", avatarUrl: "https://img.example/gus.png" }) });
    const ids: string[] = [];
    for (let i = 0; i < 22; i++) {
      ids.push((await gus.post("/api/v1/discussions/ban-5/comments", { body: `c${i}` })).body.id);
      clock.advance(1); // the clock is the test's: one millisecond apart, so "latest" is an order
    }
    const held = (await gus.post("/api/v1/discussions/ban-5/comments", { body: "cheap" })).body;
    await gus.del(`/api/v1/comments/${ids[0]}`);
    await (await readerAs("r1")).post(`/api/v1/comments/${ids[5]}/reports`, { reason: "spam" });
    await (await readerAs("r2")).post(`/api/v1/comments/${ids[6]}/reports`, { reason: "abuse" });
    await moderator.post(`/api/v1/comments/${ids[6]}/reports/dismiss`);

    const r = await moderator.get("/api/v1/readers/gus");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: "gus",
      name: "Gus",
      avatarUrl: "https://img.example/gus.png",
      createdAt: expect.any(String),
      commentCounts: { approved: 21, pending: 1, rejected: 0, deleted: 1 },
      openReports: 1,
      sanction: null,
    });
    expect(r.body.recentComments).toHaveLength(20);
    expect(r.body.recentComments[0]).toMatchObject({ id: held.id, status: "pending" });

    expect((await moderator.get("/api/v1/readers/nobody")).status).toBe(404);
    expect((await moderator.post("/api/v1/readers/nobody/ban", {})).status).toBe(404);
    expect((await moderator.del("/api/v1/readers/nobody/ban")).status).toBe(404);
    const other = await createTestTenant(server);
    expect((await other.api.get("/api/v1/readers/gus")).status).toBe(404); // readers are per tenant
    const noCap = t.as({ key: plain });
    for (const res of [
      await noCap.get("/api/v1/readers/gus"),
      await noCap.post("/api/v1/readers/gus/ban", {}),
      await noCap.del("/api/v1/readers/gus/ban"),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: "missing_capability", required: "moderate_content" });
    }
  });
});

describe("over GraphQL", () => {
  it("reader, banReader and liftReaderBan; a banned reader's mutation fails with reader_banned and until", async () => {
    const { moderator, readerAs } = await tenantWith();
    const hal = await readerAs("hal");
    await hal.post("/api/v1/discussions/ban-6/comments", { body: "hi" });
    const until = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const ban = await moderator.gql(TestBanReaderDocument, { id: "hal", input: { until, reason: "cool off" } });
    expect(ban.errors).toBeUndefined();
    expect(ban.data!.banReader).toEqual({ id: "hal", sanction: { until, reason: "cool off" } });
    const view = await moderator.gql(TestReaderDocument, { id: "hal" });
    expect(view.data!.reader).toMatchObject({ id: "hal", sanction: { until }, commentCounts: { approved: 1 }, openReports: 0 });

    const post = await hal.post("/graphql", {
      query: 'mutation { postComment(discussionId: "ban-6", input: { body: "x" }) { id } }',
    });
    expect(post.body.errors[0].extensions).toMatchObject({ code: "reader_banned", status: 403, until });

    const lift = await moderator.gql(TestLiftReaderBanDocument, { id: "hal" });
    expect(lift.data!.liftReaderBan).toEqual({ id: "hal", sanction: null });
    const missing = await moderator.gql(TestReaderDocument, { id: "nobody" });
    expect(missing.errors![0]!.extensions).toMatchObject({ code: "not_found" });
  });
});
