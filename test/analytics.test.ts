import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { manualClock } from "../src/lib/clock.js";

const clock = manualClock(new Date("2031-05-10T08:00:00.000Z"));
let server: TestServer;
let t: TestTenant;
let c1Event = "";

const HOUR = 3_600_000;
const sec = () => Math.floor(clock.now().getTime() / 1000);

const as = (sub: string) => t.reader(sub, { iat: sec() });

async function comment(sub: string, discussionId: string, body: string, parentId?: string): Promise<string> {
  const r = await (await as(sub)).post(`/api/v1/discussions/${discussionId}/comments`, { body, ...(parentId ? { parentId } : {}) });
  expect(r.status).toBe(201);
  return r.body.id;
}

async function react(sub: string, commentId: string, kind: string, active: boolean) {
  const r = await (await as(sub)).post(`/api/v1/comments/${commentId}/reactions`, { kind });
  expect(r.status).toBe(200);
  expect(r.body.active).toBe(active);
}

async function attempts(rows: { at: string; status: number | null; error?: string; eventId?: string; type?: string }[]) {
  const prisma = server.app.runtime.services.prisma;
  const endpointId = `wh_${randomUUID()}`;
  await prisma.webhookEndpoint.create({
    data: { id: endpointId, tenantId: t.tenantId, url: "https://hooks.example.com/x", events: ["*"] },
  });
  await prisma.webhookAttempt.createMany({
    data: rows.map((r, i) => ({
      id: randomUUID(),
      tenantId: t.tenantId,
      endpointId,
      eventId: r.eventId ?? randomUUID(),
      eventType: r.type ?? "comment_created",
      idempotencyKey: `comment_created:${i}`,
      deliveryId: randomUUID(),
      attempt: 1,
      statusCode: r.status,
      durationMs: 12,
      error: r.error ?? null,
      createdAt: new Date(r.at),
    })),
  });
}

beforeAll(async () => {
  server = await startServer({}, { clock });
  t = await createTestTenant(server);
  // day 1, 08:00
  await t.api.put("/api/v1/discussions/d1", {});
  await t.api.put("/api/v1/discussions/d2", {});
  const c1 = await comment("alice", "d1", "first");
  await comment("bob", "d1", "a reply", c1);
  await react("bob", c1, "like", true);
  await react("carol", c1, "love", true);
  // a page reaction (on d1 itself): counted apart from the comments' reactions
  await t.api.patch("/api/v1/settings", { pageReactionKinds: ["up"] });
  expect((await (await as("carol")).post("/api/v1/discussions/d1/reactions", { kind: "up" })).body.active).toBe(true);
  // follows: carol follows d1 on day 1
  expect((await (await as("carol")).put("/api/v1/discussions/d1/subscription", { mode: "all" })).status).toBe(200);
  await t.api.post("/api/v1/discussions/d1/lock");
  await t.api.post("/api/v1/discussions/d1/unlock");
  // day 1, 10:30
  clock.advance(2.5 * HOUR);
  await react("alice", c1, "like", true);
  // day 2, 10:30
  clock.advance(24 * HOUR);
  await comment("alice", "d2", "second day");
  await react("bob", c1, "like", false);
  // day 2: alice follows d2; bob follows d1 and goes back to replies (no longer a follower)
  expect((await (await as("alice")).put("/api/v1/discussions/d2/subscription", { mode: "all" })).status).toBe(200);
  expect((await (await as("bob")).put("/api/v1/discussions/d1/subscription", { mode: "all" })).status).toBe(200);
  expect((await (await as("bob")).put("/api/v1/discussions/d1/subscription", { mode: "replies" })).status).toBe(200);
  await t.api.patch("/api/v1/settings", { moderation: "pre" });
  const pending = await comment("dave", "d2", "needs a look");
  expect((await t.api.post(`/api/v1/comments/${pending}/approve`)).status).toBe(200);
  await t.api.patch("/api/v1/settings", { moderation: "post" });

  const prisma = server.app.runtime.services.prisma;
  const created = await prisma.event.findFirstOrThrow({ where: { tenantId: t.tenantId, discussionId: "d1", type: "comment_created" } });
  c1Event = created.id;
  await attempts([
    { at: "2031-05-10T08:01:00.000Z", status: 200, eventId: c1Event },
    { at: "2031-05-10T08:02:00.000Z", status: 204, eventId: c1Event },
    { at: "2031-05-10T08:03:00.000Z", status: 500, eventId: c1Event },
    { at: "2031-05-10T08:04:00.000Z", status: null, error: "timeout", eventId: c1Event },
    { at: "2031-05-10T08:05:00.000Z", status: 200, type: "verification" },
    { at: "2031-05-11T09:00:00.000Z", status: 200 },
  ]);
});
afterAll(() => server?.stop());

const zero = {
  comments: 0,
  replies: 0,
  reactions: {},
  pageReactions: {},
  activeReaders: 0,
  moderationActions: 0,
  webhookDeliveries: { ok: 0, failed: 0 },
  newFollowers: 0,
};

describe("analytics", () => {
  it("per day: comments, replies, reactions by kind, active readers, moderation, deliveries; totals", async () => {
    const r = await t.api.get("/api/v1/analytics?from=2031-05-09T00:00:00Z&to=2031-05-12T00:00:00Z&interval=day");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      from: "2031-05-09T00:00:00.000Z",
      to: "2031-05-12T00:00:00.000Z",
      interval: "day",
      discussionId: null,
      followers: 2,
      totals: {
        comments: 4,
        replies: 1,
        reactions: { like: 2, love: 1 },
        pageReactions: { up: 1 },
        activeReaders: 4,
        moderationActions: 3,
        webhookDeliveries: { ok: 3, failed: 2 },
        newFollowers: 2,
      },
      buckets: [
        { start: "2031-05-09T00:00:00.000Z", ...zero },
        {
          start: "2031-05-10T00:00:00.000Z",
          comments: 2,
          replies: 1,
          reactions: { like: 2, love: 1 },
          pageReactions: { up: 1 },
          activeReaders: 3,
          moderationActions: 2,
          webhookDeliveries: { ok: 2, failed: 2 },
          newFollowers: 1,
        },
        {
          start: "2031-05-11T00:00:00.000Z",
          comments: 2, // alice's, and dave's once approved
          replies: 0,
          reactions: {}, // bob's toggle-off adds none
          pageReactions: {},
          activeReaders: 3, // alice, bob (un-reacting), dave (pending comment)
          moderationActions: 1,
          webhookDeliveries: { ok: 1, failed: 0 },
          newFollowers: 1,
        },
      ],
    });
  });

  it("per hour, with `from` truncated to the hour", async () => {
    const r = await t.api.get("/api/v1/analytics?from=2031-05-10T07:15:00Z&to=2031-05-10T11:00:00Z&interval=hour");
    expect(r.status).toBe(200);
    expect(r.body.from).toBe("2031-05-10T07:00:00.000Z");
    expect(r.body.buckets.map((b: any) => b.start)).toEqual([
      "2031-05-10T07:00:00.000Z",
      "2031-05-10T08:00:00.000Z",
      "2031-05-10T09:00:00.000Z",
      "2031-05-10T10:00:00.000Z",
    ]);
    expect(r.body.buckets[1]).toMatchObject({ comments: 2, reactions: { like: 1, love: 1 }, pageReactions: { up: 1 }, activeReaders: 3 });
    expect(r.body.buckets[3]).toMatchObject({ comments: 0, reactions: { like: 1 }, activeReaders: 1 });
    expect(r.body.totals.reactions).toEqual({ like: 2, love: 1 });
  });

  it("limited to one discussion (webhook deliveries through their events)", async () => {
    const r = await t.api.get("/api/v1/analytics?from=2031-05-10T00:00:00Z&to=2031-05-12T00:00:00Z&discussionId=d1");
    expect(r.status).toBe(200);
    expect(r.body.discussionId).toBe("d1");
    expect(r.body.totals).toEqual({
      comments: 2,
      replies: 1,
      reactions: { like: 2, love: 1 },
      pageReactions: { up: 1 },
      activeReaders: 3,
      moderationActions: 2,
      webhookDeliveries: { ok: 2, failed: 2 },
      newFollowers: 1,
    });
    expect(r.body.followers).toBe(1);
    const d2 = await t.api.get("/api/v1/analytics?from=2031-05-10T00:00:00Z&to=2031-05-12T00:00:00Z&discussionId=d2");
    expect(d2.body.totals).toMatchObject({ comments: 2, moderationActions: 1, webhookDeliveries: { ok: 0, failed: 0 } });
  });

  it("defaults: interval day, the last 30 days up to now (exclusive)", async () => {
    clock.advance(60_000);
    const r = await t.api.get("/api/v1/analytics");
    expect(r.status).toBe(200);
    expect(r.body.interval).toBe("day");
    expect(r.body.to).toBe(clock.now().toISOString());
    expect(r.body.buckets).toHaveLength(31);
    expect(r.body.totals.comments).toBe(4);
  });

  it("is tenant-scoped", async () => {
    const other = await createTestTenant(server);
    const r = await other.api.get("/api/v1/analytics?from=2031-05-10T00:00:00Z&to=2031-05-12T00:00:00Z");
    expect(r.body.totals).toEqual(zero);
  });

  it("bad from / to / interval / discussionId → 400 invalid_parameter", async () => {
    const cases = [
      ["from=yesterday", "from"],
      ["to=2031-13-01T00:00:00Z", "to"],
      ["interval=week", "interval"],
      ["from=2031-05-11T00:00:00Z&to=2031-05-10T00:00:00Z", "from"],
      ["from=2031-01-01T00:00:00Z&to=2031-05-01T00:00:00Z&interval=hour", "from"],
      ["discussionId=has%20space", "discussionId"],
    ] as const;
    for (const [qs, path] of cases) {
      const r = await t.api.get(`/api/v1/analytics?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.code).toBe("invalid_parameter");
      expect(r.body.errors.map((e: any) => e.path)).toContain(path);
    }
  });
});
