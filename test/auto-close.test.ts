// Auto-close (contract section 21, src/modules/discussions/engine/auto-close.ts), driven by the injectable
// clock: a discussion older than its tenant's autoLockAfterDays is locked as by POST …/lock, with one
// discussion_locked event and an audit entry by the system; younger ones, and tenants with the
// setting at 0, are left; two passes at once (as on two instances) lock each discussion once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { manualClock } from "../src/lib/clock.js";
import { isolatedDatabase } from "./support/database.js";
import { createAutoCloseJob } from "../src/modules/discussions/engine/auto-close.js";

const DAY = 86_400_000;
const clock = manualClock(new Date("2026-11-01T00:00:00.000Z"));
let server: TestServer;
let t: TestTenant;
let other: TestTenant;

// A database of this file's own: auto-close passes over every tenant's discussions, here by a clock
// of 2026-11 — its writes, dated then, must not meet another file's pass over the shared database.
let isolated: Awaited<ReturnType<typeof isolatedDatabase>> | undefined;
beforeAll(async () => {
  isolated = await isolatedDatabase("auto_close");
  server = await startServer({ AUTO_CLOSE_INTERVAL_MS: "0", ...isolated.env }, { clock });
  t = await createTestTenant(server);
  other = await createTestTenant(server);
});
afterAll(async () => {
  await server?.stop();
  await isolated?.drop();
});

const iat = () => Math.floor(clock.now().getTime() / 1000);
/** A reader of `tenant` whose identity is issued now (by the test's clock). */
const readerOf = async (tenant: TestTenant, sub: string) =>
  tenant.as({ key: tenant.apiKey, identity: await tenant.identity(sub, { iat: iat() }) });
const lockedEvents = (tenant: TestTenant, discussionId: string) =>
  server.app.runtime.services.prisma.event.count({ where: { tenantId: tenant.tenantId, discussionId, type: "discussion_locked" } });
const state = async (tenant: TestTenant, id: string) => (await tenant.api.get(`/api/v1/discussions/${id}`)).body.state as string;

describe("auto-close", () => {
  it("is a setting: 0 (off) by default, 0..36500 days", async () => {
    expect((await t.api.get("/api/v1/settings")).body.autoLockAfterDays).toBe(0);
    const bad = await t.api.patch("/api/v1/settings", { autoLockAfterDays: -1 });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].path).toBe("autoLockAfterDays");
    expect((await t.api.patch("/api/v1/settings", { autoLockAfterDays: 30 })).body.autoLockAfterDays).toBe(30);
  });

  it("locks a discussion once it is older than autoLockAfterDays, once, audited; others are left", async () => {
    expect((await (await readerOf(t, "ac-reader")).post("/api/v1/discussions/ac-old/comments", { body: "first" })).status).toBe(201);
    expect((await (await readerOf(other, "ac-reader")).post("/api/v1/discussions/ac-off/comments", { body: "first" })).status).toBe(201);
    clock.advance(29 * DAY);
    expect((await (await readerOf(t, "ac-reader")).post("/api/v1/discussions/ac-new/comments", { body: "first" })).status).toBe(201);

    // day 29: nothing is old enough
    expect(await server.app.autoClose.runOnce()).toBe(0);
    expect(await state(t, "ac-old")).toBe("open");

    // day 30 and a minute: the old one is locked, as by POST …/lock
    clock.advance(DAY + 60_000);
    expect(await server.app.autoClose.runOnce()).toBe(1);
    expect(await state(t, "ac-old")).toBe("locked");
    expect(await state(t, "ac-new")).toBe("open");
    expect(await state(other, "ac-off")).toBe("open"); // its tenant's setting is 0
    expect(await lockedEvents(t, "ac-old")).toBe(1);
    const refused = await (await readerOf(t, "ac-reader")).post("/api/v1/discussions/ac-old/comments", { body: "too late" });
    expect([refused.status, refused.body.code]).toEqual([409, "discussion_locked"]);
    const audit = await server.app.runtime.services.prisma.auditEntry.findMany({
      where: { tenantId: t.tenantId, action: "discussion.lock" },
    });
    expect(audit).toEqual([
      expect.objectContaining({ actorType: "system", actorId: "auto-close", resourceId: "ac-old", details: { autoLockAfterDays: 30 } }),
    ]);

    // again: nothing more, no second event;
    expect(await server.app.autoClose.runOnce()).toBe(0);
    expect(await lockedEvents(t, "ac-old")).toBe(1);
  });

  it("two passes at once, as on two instances, lock each discussion once", async () => {
    clock.advance(40 * DAY);
    const reader = await readerOf(t, "ac-reader2");
    const ids = Array.from({ length: 12 }, (_, i) => `ac-many-${i}`);
    for (const id of ids) expect((await reader.post(`/api/v1/discussions/${id}/comments`, { body: "x" })).status).toBe(201);
    clock.advance(31 * DAY);
    const { services } = server.app.runtime;
    const jobs = [0, 1, 2].map(() => createAutoCloseJob({ app: services, clock, log: services.log }));
    const locked = await Promise.all(jobs.map((j) => j.runOnce()));
    // ac-new (30 days old by now) and the twelve, each by exactly one pass
    expect(locked.reduce((a, b) => a + b, 0) + (await server.app.autoClose.runOnce())).toBe(13);
    for (const id of [...ids, "ac-new"]) {
      expect(await state(t, id)).toBe("locked");
      expect(await lockedEvents(t, id)).toBe(1);
    }
  });
});
