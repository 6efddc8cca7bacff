// Bounded storage (src/modules/retention/engine/retention.ts), driven by the injectable clock: events outside every
// replay window go unless a pending delivery still needs them, old delivery-log rows and stale
// tickets go, one instance at a time, and the work shows in the metrics.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { manualClock } from "../src/lib/clock.js";
import { isolatedDatabase } from "./support/database.js";

const clock = manualClock(new Date("2026-11-01T00:00:00.000Z"));
let server: TestServer;
let t: TestTenant;

// A database of this file's own: the retention pass works on every tenant's rows by its clock (here
// 2026-11-01) — on the run's shared database it would make and drop other files' day partitions of
// the event log under their writes.
let isolated: Awaited<ReturnType<typeof isolatedDatabase>> | undefined;
beforeAll(async () => {
  isolated = await isolatedDatabase("retention");
  server = await startServer({ RETENTION_INTERVAL_MS: "0", ...isolated.env }, { clock });
  t = await createTestTenant(server);
  // a tenant with the default window (a day): t's hour is then shorter than the longest window, and
  // its events go row by row once older than it; the longest window's events go with their day's
  // partition (test/event-partitions.test.ts)
  await createTestTenant(server);
});
afterAll(async () => {
  await server?.stop();
  await isolated?.drop();
});

const iat = () => Math.floor(clock.now().getTime() / 1000);

describe("retention", () => {
  it("deletes what no window, setting or pending delivery needs, and nothing else", async () => {
    const prisma = server.app.runtime.services.prisma;
    expect(
      (await t.api.patch("/api/v1/settings", { replay: { maxEvents: 3, maxAgeSeconds: 3600 }, retention: { deliveryLogDays: 1 } })).status,
    ).toBe(200);
    const as = t.as({ key: t.apiKey, identity: await t.identity("keeper", { iat: iat() }) });
    for (let i = 1; i <= 5; i++) expect((await as.post("/api/v1/discussions/ret/comments", { body: `c${i}` })).status).toBe(201);
    const seqs = async () =>
      (await prisma.event.findMany({ where: { tenantId: t.tenantId, discussionId: "ret" }, orderBy: { seq: "asc" } })).map((e) => e.seq);
    expect(await seqs()).toEqual([1, 2, 3, 4, 5]);

    // seq 1 is still needed by a pending delivery; two attempts, one older than a day; a ticket
    const first = await prisma.event.findFirstOrThrow({ where: { tenantId: t.tenantId, discussionId: "ret", seq: 1 } });
    await prisma.webhookEndpoint.create({
      data: { id: "wh_ret", tenantId: t.tenantId, url: "https://example.com/h", events: ["*"], verified: true },
    });
    await prisma.webhookDelivery.create({ data: { id: randomUUID(), tenantId: t.tenantId, endpointId: "wh_ret", eventId: first.id } });
    const attempt = (createdAt: Date) => ({
      id: randomUUID(),
      tenantId: t.tenantId,
      endpointId: "wh_ret",
      eventId: first.id,
      eventType: "comment_created",
      idempotencyKey: "k",
      deliveryId: randomUUID(),
      attempt: 1,
      durationMs: 1,
      createdAt,
    });
    await prisma.webhookAttempt.createMany({ data: [attempt(new Date(clock.now().getTime() - 2 * 86_400_000)), attempt(clock.now())] });
    expect((await t.api.post("/api/v1/stream/ticket", { discussionId: "ret" })).status).toBe(201);

    const r1 = await server.app.runtime.retention.runOnce();
    // (the job is global: other test files' rows may go in the same pass, so counts are lower bounds)
    expect(r1!.events).toBeGreaterThanOrEqual(1);
    expect(r1!.attempts).toBeGreaterThanOrEqual(1);
    expect(await seqs()).toEqual([1, 3, 4, 5]);
    expect(await prisma.webhookAttempt.count({ where: { tenantId: t.tenantId } })).toBe(1);

    // two hours on: every event is older than maxAgeSeconds (only the needed one stays), the ticket is stale
    clock.advance(2 * 3_600_000);
    const r2 = await server.app.runtime.retention.runOnce();
    expect(r2!.events).toBeGreaterThanOrEqual(3);
    expect(r2!.tickets).toBeGreaterThanOrEqual(1);
    expect(await prisma.streamTicket.count({ where: { tenantId: t.tenantId } })).toBe(0);
    expect(await seqs()).toEqual([1]);
    // the list and the seq are untouched: comments are not events
    expect((await t.api.get("/api/v1/discussions/ret/comments")).body.items).toHaveLength(5);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(Number(/retention_deleted_total\{what="events"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(4);
  });

  it("runs on one instance at a time (advisory lock)", async () => {
    const c = new pg.Client({ connectionString: isolated!.env.DATABASE_URL });
    await c.connect();
    try {
      await c.query("BEGIN");
      await c.query("SELECT pg_advisory_xact_lock(4207311878)");
      expect(await server.app.runtime.retention.runOnce()).toBeNull();
      await c.query("COMMIT");
      expect(await server.app.runtime.retention.runOnce()).not.toBeNull();
    } finally {
      await c.end();
    }
  });
});
