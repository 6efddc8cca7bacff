// Following a discussion (contract section 19, src/modules/following/): GET/PUT
// /api/v1/discussions/{id}/subscription with the reader's identity behind any key (GraphQL
// mySubscription/setMySubscription), default `replies`; `all` turns every new visible comment by
// someone else into a new_comment inbox item once the follow worker has run (a held comment when first
// approved), never a second item beside a reply item; `off` silences the discussion's replies; the
// fan-out job survives a worker killed mid-job and a re-run adds nothing; erasure and export. The
// worker is driven pass by pass (app.follow.runOnce) under a manual clock, on a database of this
// file's own (a pass takes every due job of the database).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { client } from "./support/client.js";
import { createTestTenant } from "./support/fixtures.js";
import { manualClock } from "../src/lib/clock.js";
import { signAdminToken } from "../src/auth/admin-jwt.js";
import { createFollowComposer } from "../src/modules/following/engine/fanout.js";
import { createWebhookWorker } from "../src/outbound/worker.js";

const ORIGIN = "https://news.example";
const clock = manualClock(new Date());
let server: TestServer;
let own: Awaited<ReturnType<typeof isolatedDatabase>>;

beforeAll(async () => {
  own = await isolatedDatabase("following");
  server = await startServer({ ...own.env, RETENTION_INTERVAL_MS: "0" }, { clock });
});
afterAll(async () => {
  await server?.stop();
  await own?.drop();
});

const iat = () => Math.floor(clock.now().getTime() / 1000);
const sql = <R>(q: string, values: unknown[] = []) => server.app.runtime.services.sql.query<R>(q, values);
const pass = () => server.app.follow.runOnce();
/** the tenant's follow jobs not done yet (jobs of the outbound queue) */
const FOLLOW_JOBS = `FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'follow' AND status = 'pending'`;

async function setup(settings: Record<string, unknown> = {}) {
  const t = await createTestTenant(server);
  expect((await t.api.patch("/api/v1/settings", { allowedOrigins: [ORIGIN], ...settings })).status).toBe(200);
  const adminToken = await signAdminToken({
    secret: server.app.runtime.services.adminJwtSecret,
    tenantId: t.tenantId,
    ttlSeconds: 3600,
    now: clock.now(),
  });
  const pk = (await client(server.url, { admin: adminToken }).post("/api/v1/publishable-keys", { label: "site" })).body.key as string;
  const as = async (sub: string) => t.as({ key: t.apiKey, identity: await t.identity(sub, { iat: iat(), ttlSeconds: 3600 }) });
  const page = async (sub: string) =>
    client(server.url, { key: pk, identity: await t.identity(sub, { iat: iat(), ttlSeconds: 3600 }), headers: { origin: ORIGIN } });
  expect((await t.api.put("/api/v1/discussions/d1", { title: "Rivers", url: "https://news.example/rivers" })).status).toBe(201);
  return { t, as, page, ann: await as("ann"), bob: await as("bob"), cat: await as("cat") };
}

type Client = ReturnType<typeof client>;

const follow = async (c: Client, mode: string, discussion = "d1") => {
  const r = await c.put(`/api/v1/discussions/${discussion}/subscription`, { mode });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toEqual({ mode });
};

const inbox = async (c: Client) => {
  const r = await c.get("/api/v1/me/inbox");
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.items as { type: string; comment: { id: string }; discussionId: string }[]).map((i) => [i.type, i.comment.id]);
};

const post = async (c: Client, body: string, parentId?: string, discussion = "d1") => {
  const r = await c.post(`/api/v1/discussions/${discussion}/comments`, { body, ...(parentId ? { parentId } : {}) });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; status: string };
};

describe("the subscription routes", () => {
  it("GET answers replies until set; PUT sets all, off, and replies again; any key, publishable included; GraphQL the same", async () => {
    const { ann, page } = await setup();
    expect((await ann.get("/api/v1/discussions/d1/subscription")).body).toEqual({ mode: "replies" });
    await follow(ann, "all");
    expect((await ann.get("/api/v1/discussions/d1/subscription")).body).toEqual({ mode: "all" });
    const annPage = await page("ann");
    expect((await annPage.get("/api/v1/discussions/d1/subscription")).body).toEqual({ mode: "all" });
    await follow(annPage, "off");
    expect((await ann.get("/api/v1/discussions/d1/subscription")).body).toEqual({ mode: "off" });
    await follow(ann, "replies");
    expect((await annPage.get("/api/v1/discussions/d1/subscription")).body).toEqual({ mode: "replies" });
    // someone else's choice is their own
    const bobPage = await page("bob");
    await follow(bobPage, "all");
    expect((await annPage.get("/api/v1/discussions/d1/subscription")).body).toEqual({ mode: "replies" });

    const set = await annPage.raw("POST", "/graphql", {
      query: `mutation { setMySubscription(discussionId: "d1", input: { mode: "all" }) { discussionId mode } }`,
    });
    expect(set.body).toEqual({ data: { setMySubscription: { discussionId: "d1", mode: "all" } } });
    const get = await annPage.raw("POST", "/graphql", { query: `{ mySubscription(discussionId: "d1") { mode } }` });
    expect(get.body).toEqual({ data: { mySubscription: { mode: "all" } } });
  });

  it("refuses a bad mode (422), an unknown discussion (404), a missing identity (401) and unknown fields", async () => {
    const { t, ann } = await setup();
    for (const body of [{ mode: "sometimes" }, {}, { mode: 3 }, { mode: "all", extra: 1 }]) {
      const r = await ann.put("/api/v1/discussions/d1/subscription", body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.headers.get("content-type")).toContain("application/problem+json");
      expect(r.body.code).toBe("validation_failed");
    }
    const unknown = await ann.put("/api/v1/discussions/nowhere/subscription", { mode: "all" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");
    expect((await ann.get("/api/v1/discussions/nowhere/subscription")).status).toBe(404);
    const anonymous = await t.api.put("/api/v1/discussions/d1/subscription", { mode: "all" });
    expect(anonymous.status).toBe(401);
    expect((await t.api.get("/api/v1/discussions/d1/subscription")).status).toBe(401);
    // nothing was kept by the refused writes
    expect((await ann.get("/api/v1/discussions/d1/subscription")).body).toEqual({ mode: "replies" });
  });
});

describe("following with all", () => {
  it("makes every new visible comment by someone else a new_comment item, once the worker has run", async () => {
    const { t, ann, bob, cat } = await setup();
    await follow(ann, "all");
    const first = await post(bob, "bob's first");
    const mine = await post(ann, "ann's own");
    // written after commit by the worker: nothing yet, one job queued
    expect(await inbox(ann)).toEqual([]);
    expect(await sql<{ n: number }>(`SELECT count(*)::int AS n ${FOLLOW_JOBS}`, [t.tenantId])).toEqual([{ n: 1 }]);
    expect(await pass()).toBe(1);
    expect(await inbox(ann)).toEqual([["new_comment", first.id]]);
    expect(mine.status).toBe("approved");
    // cat does not follow: nothing for her; another discussion: nothing for ann
    expect((await t.api.put("/api/v1/discussions/d2", { title: "Lakes" })).status).toBe(201);
    await post(bob, "elsewhere", undefined, "d2");
    clock.advance(1_000);
    const second = await post(cat, "cat's");
    await pass();
    expect(await inbox(ann)).toEqual([
      ["new_comment", second.id],
      ["new_comment", first.id],
    ]);
    expect(await inbox(cat)).toEqual([]);
    // a job was done and removed; a second pass has nothing to do
    expect(await sql(`SELECT 1 ${FOLLOW_JOBS}`, [t.tenantId])).toEqual([]);
    expect(await pass()).toBe(0);
    // items carry the reader's inbox sequence: 1, 2
    const seqs = await sql<{ seq: number }>(`SELECT seq FROM inbox_items WHERE tenant_id = $1 AND reader_id = 'ann' ORDER BY seq`, [
      t.tenantId,
    ]);
    expect(seqs.map((s) => s.seq)).toEqual([1, 2]);

    // the moderator's view of the reader (the console's reader page): what they follow, their inbox's size
    await follow(cat, "off");
    const query = `{ reader(id: "ann") { followingCount inboxItems inboxUnread following { discussionId title mode } } }`;
    const answer = (await t.api.post("/graphql", { query })).body;
    expect(answer.errors).toBeUndefined();
    const profile = answer.data.reader;
    expect(profile).toEqual({
      followingCount: 1,
      inboxItems: 2,
      inboxUnread: 2,
      following: [{ discussionId: "d1", title: "Rivers", mode: "all" }],
    });
    const catProfile = (await t.api.post("/graphql", { query: query.replace('"ann"', '"cat"') })).body.data.reader;
    expect(catProfile).toMatchObject({ followingCount: 0, following: [{ discussionId: "d1", mode: "off" }] });
  });

  it("a reply to the follower stays one reply item: no new_comment beside it", async () => {
    const { ann, bob } = await setup();
    await follow(ann, "all");
    const top = await post(ann, "top");
    const reply = await post(bob, "re", top.id);
    await pass();
    await pass();
    expect(await inbox(ann)).toEqual([["reply", reply.id]]);
  });

  it("a held comment becomes an item when first approved, not before", async () => {
    const { t, ann, bob } = await setup({ moderation: "pre" });
    await follow(ann, "all");
    const held = await post(bob, "held");
    expect(held.status).toBe("pending");
    await pass();
    expect(await inbox(ann)).toEqual([]);
    expect((await t.api.post(`/api/v1/comments/${held.id}/approve`, {})).status).toBe(200);
    await pass();
    expect(await inbox(ann)).toEqual([["new_comment", held.id]]);
    // rejected later: the item is no longer listed; approved again: back, and still one
    expect((await t.api.post(`/api/v1/comments/${held.id}/reject`, {})).status).toBe(200);
    expect(await inbox(ann)).toEqual([]);
    expect((await t.api.post(`/api/v1/comments/${held.id}/approve`, {})).status).toBe(200);
    await pass();
    expect(await inbox(ann)).toEqual([["new_comment", held.id]]);
  });

  it("replies (the default) gives no new_comment item; off silences replies too (no item, no notification, no email)", async () => {
    const { t, ann, bob, cat } = await setup({ email: { defaultReplies: "immediate" } });
    const annMail = await t.reader("ann", { iat: iat(), email: "ann@readers.example" });
    const top = await post(annMail, "top");
    await post(cat, "cat's");
    await pass();
    expect(await inbox(ann)).toEqual([]);
    await follow(ann, "off");
    const reply = await post(bob, "re", top.id);
    expect(await inbox(ann)).toEqual([]);
    const heard = await sql<{ n: number }>(
      `SELECT (SELECT count(*) FROM events WHERE tenant_id = $1 AND type = 'notification_reply')
            + (SELECT count(*) FROM email_items WHERE tenant_id = $1)::int AS n`,
      [t.tenantId],
    );
    expect(Number(heard[0]!.n)).toBe(0);
    // back to replies: the next reply is heard of again
    await follow(ann, "replies");
    const again = await post(bob, "re again", top.id);
    expect(await inbox(ann)).toEqual([["reply", again.id]]);
    expect(await sql(`SELECT comment_id FROM email_items WHERE tenant_id = $1`, [t.tenantId])).toEqual([{ comment_id: again.id }]);
    expect(reply.id).not.toBe(again.id);
  });
});

describe("the fan-out job", () => {
  it("resumes after a worker killed mid-job, and a re-run adds nothing twice", async () => {
    const { t, as, bob } = await setup();
    const followers = ["f1", "f2", "f3", "f4", "f5"];
    for (const f of followers) await follow(await as(f), "all");
    const comment = await post(bob, "to many");
    const services = server.app.runtime.services;
    // worker A dies after its first batch of 2 has committed: its lease is held (never renewed), its pass never ends
    let died!: () => void;
    const dead = new Promise<void>((resolve) => (died = resolve));
    let buried!: (err: Error) => void;
    const deps = services.webhooks.workerDeps;
    const followPool = (name: string, afterBatch?: () => Promise<void>) =>
      createWebhookWorker(
        {
          ...deps,
          composers: {
            ...deps.composers,
            follow: createFollowComposer(
              { stores: services.stores, events: () => services },
              { batchSize: 2, ...(afterBatch ? { afterBatch } : {}) },
            ),
          },
        },
        { kinds: ["follow"], leaseMs: 10_000, renewEveryMs: 1e9, stopGraceMs: 0, workerId: name },
      );
    const a = followPool("a", () => {
      died();
      return new Promise<void>((_, reject) => (buried = reject));
    });
    const ranA = a.runOnce();
    await dead;
    const itemsOf = async () =>
      sql<{ reader_id: string; n: number }>(
        `SELECT reader_id, count(*)::int AS n FROM inbox_items WHERE tenant_id = $1 AND comment_id = $2 GROUP BY reader_id ORDER BY reader_id`,
        [t.tenantId, comment.id],
      );
    expect(await itemsOf()).toEqual([
      { reader_id: "f1", n: 1 },
      { reader_id: "f2", n: 1 },
    ]);
    const b = followPool("b");
    // while A's lease holds, B takes nothing
    expect(await b.runOnce()).toBe(0);
    clock.advance(10_001);
    expect(await b.runOnce()).toBe(1);
    expect(await itemsOf()).toEqual(followers.map((reader_id) => ({ reader_id, n: 1 })));

    // the same job again from the start (as if its progress were lost): nothing added, no seq taken
    const counters = () =>
      sql<{ reader_id: string; seq: number }>(`SELECT reader_id, seq FROM inbox_counters WHERE tenant_id = $1 ORDER BY reader_id`, [
        t.tenantId,
      ]);
    const before = await counters();
    await sql(
      `INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, 'follow', jsonb_build_object('discussionId', 'd1', 'commentId', $2::text, 'authorId', 'bob', 'after', ''), $3, $3, $3)`,
      [t.tenantId, comment.id, clock.now()],
    );
    expect(await b.runOnce()).toBe(1);
    expect(await itemsOf()).toEqual(followers.map((reader_id) => ({ reader_id, n: 1 })));
    expect(await counters()).toEqual(before);
    // A's late claim can no longer write: its token is not the job's (the job is gone)
    const stale = await sql<{ r: unknown }>(`SELECT eng_follow_fanout($1, gen_random_uuid(), gen_random_uuid(), 10, $2, $2) AS r`, [
      t.tenantId,
      clock.now(),
    ]);
    expect(stale).toEqual([{ r: null }]);
    // A wakes to find its claim gone: it writes nothing
    buried(new Error("A was dead"));
    expect(await ranA).toBe(1);
    await a.stop();
    await b.stop();
  });

  it("the comment's statement enqueues one job row only when someone else follows", async () => {
    const { t, ann, bob } = await setup();
    const jobs = async () => (await sql<{ n: number }>(`SELECT count(*)::int AS n ${FOLLOW_JOBS}`, [t.tenantId]))[0]!.n;
    await post(bob, "nobody follows");
    expect(await jobs()).toBe(0);
    await follow(bob, "all");
    // the author is the only follower: no job
    await post(bob, "only me");
    expect(await jobs()).toBe(0);
    await follow(ann, "off");
    await post(bob, "ann silenced it");
    expect(await jobs()).toBe(0);
    await follow(ann, "all");
    await post(bob, "now ann follows");
    expect(await jobs()).toBe(1);
    await pass();
    expect(await jobs()).toBe(0);
  });
});

describe("privacy", () => {
  it("the reader's export lists their subscriptions; their erasure deletes them", async () => {
    const { t, ann } = await setup();
    expect((await t.api.put("/api/v1/discussions/d2", { title: "Lakes" })).status).toBe(201);
    await follow(ann, "all");
    await follow(ann, "off", "d2");
    const exported = await ann.get("/api/v1/me/export");
    expect(exported.status).toBe(200);
    expect(exported.body.subscriptions).toEqual([
      { discussionId: "d1", mode: "all", createdAt: expect.any(String), updatedAt: expect.any(String) },
      { discussionId: "d2", mode: "off", createdAt: expect.any(String), updatedAt: expect.any(String) },
    ]);
    expect([202, 204]).toContain((await ann.del("/api/v1/me")).status);
    expect(await sql(`SELECT 1 FROM discussion_subscriptions WHERE tenant_id = $1`, [t.tenantId])).toEqual([]);
  });
});
