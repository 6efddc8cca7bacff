// The event log partitioned by UTC day (prisma/sql/75-event-partitions.sql, src/modules/retention/engine/retention.ts):
// an insert never fails (a day with no partition goes to DEFAULT and moves into its partition once the
// job makes it), replay across a partition boundary is seamless, and retention drops whole partitions
// while keeping the events a pending webhook delivery still needs. Its own database: the retention
// passes run on a clock of their own and drop what is due in the whole database.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedDatabase } from "./support/database.js";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant } from "./support/fixtures.js";
import { openSse, seqsOf, writeEvent } from "./support/sse.js";
import { eventually } from "./support/receiver.js";
import { manualClock } from "../src/lib/clock.js";
import { PARTITION_DAYS_AHEAD } from "../src/modules/retention/engine/retention.js";

let own: Awaited<ReturnType<typeof isolatedDatabase>>;
let server: TestServer;
const clock = manualClock(new Date("2026-06-10T12:00:00.000Z"));

beforeAll(async () => {
  own = await isolatedDatabase("partitions");
  server = await startServer({ ...own.env, RETENTION_INTERVAL_MS: "0" }, { clock });
});
afterAll(async () => {
  await server?.stop();
  await own?.drop();
});

const prisma = () => server.app.runtime.services.prisma;
const retention = () => server.app.runtime.retention;

/** Which partition holds each of a discussion's events, by seq. */
async function placement(tenantId: string, discussionId: string): Promise<{ seq: number; part: string }[]> {
  return prisma().$queryRaw<{ seq: number; part: string }[]>`
    SELECT seq, tableoid::regclass::text AS part FROM events WHERE tenant_id = ${tenantId} AND discussion_id = ${discussionId} ORDER BY seq`;
}
const partitions = async () =>
  (
    await prisma().$queryRaw<{ name: string }[]>`
      SELECT c.relname::text AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'events'::regclass ORDER BY 1`
  ).map((r) => r.name);

describe("the event log by day", () => {
  it("is a partitioned table whose keys include occurred_at", async () => {
    const [t] = await prisma().$queryRaw<{ kind: string; key: string }[]>`
      SELECT c.relkind::text AS kind, pg_get_constraintdef(k.oid) AS key
        FROM pg_class c JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'p' WHERE c.oid = 'events'::regclass`;
    expect(t).toEqual({ kind: "p", key: "PRIMARY KEY (id, occurred_at)" });
    expect(await partitions()).toContain("events_default");
  });

  it("never fails an insert: a day with no partition goes to DEFAULT, and into its partition once made", async () => {
    const t = await createTestTenant(server);
    await t.api.put("/api/v1/discussions/early", {});
    await writeEvent(server, t.tenantId, "early", { count: 2 }); // 2026-06-10: no partition yet
    expect((await placement(t.tenantId, "early")).map((r) => r.part)).toEqual(["events_default", "events_default"]);

    const r = await retention().runOnce();
    expect(r!.partitionsCreated).toBe(PARTITION_DAYS_AHEAD + 2); // the day before, the day, a week ahead
    expect(await placement(t.tenantId, "early")).toEqual([
      { seq: 1, part: "events_p20260610" },
      { seq: 2, part: "events_p20260610" },
    ]);
    const names = await partitions();
    for (const day of ["20260609", "20260610", "20260617"]) expect(names).toContain(`events_p${day}`);
    // a second pass has nothing to make
    expect((await retention().runOnce())!.partitionsCreated).toBe(0);
  });

  it("replays across a partition boundary: every event once, in order", async () => {
    const t = await createTestTenant(server);
    const id = "boundary";
    await t.api.put(`/api/v1/discussions/${id}`, {});
    const post = async (body: string) => {
      const as = t.as({ key: t.apiKey, identity: await t.identity("writer", { iat: Math.floor(clock.now().getTime() / 1000) }) });
      expect((await as.post(`/api/v1/discussions/${id}/comments`, { body })).status).toBe(201);
    };
    clock.set(new Date("2026-06-10T23:59:58.000Z"));
    for (const body of ["a", "b", "c"]) await post(body);
    clock.set(new Date("2026-06-11T00:00:01.000Z"));
    for (const body of ["d", "e", "f"]) await post(body);
    const placed = await placement(t.tenantId, id);
    expect(placed.map((p) => p.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(placed.map((p) => p.part)).toEqual([...Array(3).fill("events_p20260610"), ...Array(3).fill("events_p20260611")]);

    for (const from of [0, 1, 3]) {
      const es = openSse(`${server.url}/api/v1/stream/${id}`, { "x-api-key": t.apiKey, "last-event-id": String(from) });
      await es.waitForEvents(6 - from);
      expect(es.frames[0]).toMatchObject({ event: "connected", data: { replayed: 6 - from, truncated: false } });
      expect(seqsOf(es.events())).toEqual(Array.from({ length: 6 - from }, (_, i) => from + 1 + i));
      const ids = es.events().map((f) => (f.data as { id: string }).id);
      expect(new Set(ids).size).toBe(ids.length);
      if (from === 3) {
        // and live on: the next event follows with no gap
        await post("g");
        await es.waitForEvents(4);
        expect(seqsOf(es.events())).toEqual([4, 5, 6, 7]);
      }
      es.close();
    }
  });

  it("retention drops a day whole once every window has left it, keeping what a pending delivery needs", async () => {
    clock.set(new Date("2026-06-20T12:00:00.000Z"));
    await retention().runOnce(); // the days around June 20th
    const t = await createTestTenant(server);
    await t.api.put("/api/v1/discussions/aging", {});
    await writeEvent(server, t.tenantId, "aging", { count: 4 });
    expect(new Set((await placement(t.tenantId, "aging")).map((p) => p.part))).toEqual(new Set(["events_p20260620"]));
    const events = await prisma().event.findMany({ where: { tenantId: t.tenantId, discussionId: "aging" }, orderBy: { seq: "asc" } });
    await prisma().webhookEndpoint.create({
      data: { id: `wh_${t.tenantId}`, tenantId: t.tenantId, url: "https://example.com/h", events: ["*"], verified: true },
    });
    const job = (eventId: string, status: "pending" | "succeeded") => ({
      id: randomUUID(),
      tenantId: t.tenantId,
      endpointId: `wh_${t.tenantId}`,
      eventId,
      status,
      nextAttemptAt: new Date("2099-01-01T00:00:00.000Z"), // not claimed meanwhile
    });
    const pending = job(events[1]!.id, "pending");
    const done = job(events[2]!.id, "succeeded");
    await prisma().webhookDelivery.createMany({ data: [pending, done] });

    // a day and a half on: the window (24 h) still reaches into June 20th, nothing goes
    clock.set(new Date("2026-06-21T12:00:00.000Z"));
    await retention().runOnce();
    expect(await partitions()).toContain("events_p20260620");
    expect((await placement(t.tenantId, "aging")).map((p) => p.seq)).toEqual([1, 2, 3, 4]);

    // two days on: all of June 20th (and the older days) is outside every window
    clock.set(new Date("2026-06-22T00:00:01.000Z"));
    const r = await retention().runOnce();
    expect(r!.partitionsDropped).toBeGreaterThanOrEqual(1);
    expect(r!.events).toBeGreaterThanOrEqual(3);
    const names = await partitions();
    expect(names).not.toContain("events_p20260620");
    expect(names).not.toContain("events_p20260610");
    expect(names).toContain("events_p20260621");
    expect(names).toContain("events_p20260629"); // a week ahead of the clock
    // the event the pending job needs is still in the log (in DEFAULT), the done job went with its event
    expect(await placement(t.tenantId, "aging")).toEqual([{ seq: 2, part: "events_default" }]);
    expect((await prisma().webhookDelivery.findMany({ where: { tenantId: t.tenantId } })).map((j) => j.id)).toEqual([pending.id]);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(Number(/retention_deleted_total\{what="event_partitions"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);

    // once delivered, the kept event goes (row by row: DEFAULT is not dropped)
    await prisma().webhookDelivery.update({ where: { id: pending.id }, data: { status: "succeeded" } });
    await retention().runOnce();
    expect(await placement(t.tenantId, "aging")).toEqual([]);
  });

  it("keeps a partition for the longest window of any tenant", async () => {
    clock.set(new Date("2026-07-01T12:00:00.000Z"));
    await retention().runOnce();
    const long = await createTestTenant(server);
    expect((await long.api.patch("/api/v1/settings", { replay: { maxAgeSeconds: 5 * 86_400 } })).status).toBe(200);
    await long.api.put("/api/v1/discussions/long", {});
    await writeEvent(server, long.tenantId, "long", { count: 2 });
    const short = await createTestTenant(server);
    await short.api.put("/api/v1/discussions/short", {});
    await writeEvent(server, short.tenantId, "short", { count: 2 });

    // three days on: outside the default window, inside the 5-day one. The day stays; the tenant with
    // the default (shorter) window has its rows deleted one by one, the other keeps them.
    clock.set(new Date("2026-07-04T12:00:00.000Z"));
    const r = await retention().runOnce();
    expect(await partitions()).toContain("events_p20260701");
    expect(r!.events).toBeGreaterThanOrEqual(2);
    expect((await placement(long.tenantId, "long")).map((p) => p.seq)).toEqual([1, 2]);
    expect(await placement(short.tenantId, "short")).toEqual([]);

    // six days on: the longest window has left July 1st: dropped
    clock.set(new Date("2026-07-07T00:00:01.000Z"));
    await retention().runOnce();
    expect(await partitions()).not.toContain("events_p20260701");
    expect(await placement(long.tenantId, "long")).toEqual([]);
  });

  it("a write of the very day being made waits for it and lands in it, never failed", async () => {
    // a day no partition covers (as today's, when the job has not run for a week)
    clock.set(new Date("2027-03-15T12:00:00.000Z"));
    const t = await createTestTenant(server);
    await t.api.put("/api/v1/discussions/racing", {});
    expect((await placement(t.tenantId, "racing")).map((r) => r.part)).toEqual([]);
    const maker = new pg.Client({ connectionString: own.url });
    const watcher = new pg.Client({ connectionString: own.url });
    await Promise.all([maker.connect(), watcher.connect()]);
    try {
      // the job makes the day and holds it, uncommitted, while the service writes an event of that day
      await maker.query("BEGIN");
      const made = await maker.query<{ n: number }>("SELECT eng_event_partitions_ahead($1::timestamptz, 0) AS n", [clock.now()]);
      expect(made.rows[0]!.n).toBe(2); // the day before and the day
      const write = writeEvent(server, t.tenantId, "racing").then(
        (seqs) => ({ seqs }),
        (err: unknown) => ({ err }),
      );
      // the write waits on a lock of the maker's (before: it waited on the DEFAULT partition's, then failed)
      await eventually(async () => {
        const { rows } = await watcher.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_locks h ON h.locktype = l.locktype AND h.relation = l.relation
            WHERE NOT l.granted AND h.granted AND h.pid = $1 AND l.pid <> $1`,
          [(await maker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid],
        );
        return rows[0]!.n > 0;
      }, 10_000);
      await maker.query("COMMIT");
      expect(await write).toEqual({ seqs: [1] });
      expect((await placement(t.tenantId, "racing")).map((r) => r.part)).toEqual(["events_p20270315"]);
    } finally {
      await maker.query("ROLLBACK").catch(() => undefined);
      await Promise.all([maker.end(), watcher.end()]);
    }
  });
});
