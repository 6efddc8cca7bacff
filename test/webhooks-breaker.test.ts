// The circuit breaker and auto-disable, driven step by step with a manual clock and worker.runOnce(),
// on a database of its own: a far-future worker would treat other files' job leases as expired.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import type { TestServer } from "./support/server.js";
import { client } from "./support/client.js";
import { startReceiver, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint, makeEvents, startWebhookServer } from "./support/receiver-app.js";
import { isolatedDatabase } from "./support/database.js";
import { manualClock } from "../src/lib/clock.js";
import { signAdminToken } from "../src/auth/admin-jwt.js";

const clock = manualClock(new Date("2099-01-01T00:00:00.000Z"));
let databaseUrl: string;
let server: TestServer;
let t: TestTenant;
let receiver: Receiver;
let status = 500;

const worker = () => server.app.runtime.services.webhooks.worker;
const prisma = () => server.app.runtime.services.prisma;
const sent = () => receiver.deliveries().length;
/** Moves the clock and runs the worker once; returns how many attempts went out. */
async function step(ms: number): Promise<number> {
  clock.advance(ms);
  const before = sent();
  await worker().runOnce();
  return sent() - before;
}
const endpointRow = (id: string) => prisma().webhookEndpoint.findUniqueOrThrow({ where: { id } });

let isolated: Awaited<ReturnType<typeof isolatedDatabase>> | undefined;
beforeAll(async () => {
  isolated = await isolatedDatabase("breaker");
  databaseUrl = isolated.url;
  server = await startWebhookServer({ RUN_WEBHOOK_WORKER: "0", DATABASE_URL: databaseUrl }, { clock });
  t = await createTestTenant(server);
  receiver = await startReceiver((req) =>
    req.event === "verification" ? { status: 200, body: { challenge: req.json.challenge } } : { status },
  );
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  await isolated?.drop();
});

describe("circuit breaker", () => {
  it("opens after breakerThreshold failures, holds every job without attempts, trials after the cooldown, closes on success", async () => {
    status = 500;
    const ep = await createVerifiedEndpoint(t, receiver, {
      delivery: { maxAttempts: 20, backoffBaseMs: 1000, breakerThreshold: 3, breakerCooldownMs: 60_000, disableThreshold: 50 },
    });
    const [e1] = await makeEvents(server, t, "breaker-1", 1);

    expect(await step(0)).toBe(1);
    const job = await prisma().webhookDelivery.findFirstOrThrow({ where: { endpointId: ep.webhookId } });
    const delay = job.nextAttemptAt.getTime() - clock.now().getTime();
    expect(delay).toBeGreaterThanOrEqual(1000); // base × 2^0 …
    expect(delay).toBeLessThanOrEqual(1500); //   … + at most 50 %
    expect(await step(999)).toBe(0); // not due yet (the delay is at least 1000)
    expect(await step(501)).toBe(1);
    expect(await step(3000)).toBe(1); // third consecutive failure opens the circuit
    let row = await endpointRow(ep.webhookId);
    expect(row).toMatchObject({ state: "circuit_open", consecutiveFailures: 3 });
    expect(row.circuitOpenUntil?.getTime()).toBe(clock.now().getTime() + 60_000);
    expect((await t.api.get(`/api/v1/webhooks/${ep.webhookId}`)).body.state).toBe("circuit_open");

    // events keep being queued while open, and nothing is attempted
    const more = await makeEvents(server, t, "breaker-1", 2);
    expect(await prisma().webhookDelivery.count({ where: { endpointId: ep.webhookId, status: "pending" } })).toBe(3);
    expect(await step(10_000)).toBe(0);
    expect(await step(49_999)).toBe(0);
    expect((await endpointRow(ep.webhookId)).consecutiveFailures).toBe(3); // held jobs count nothing

    // cooldown over: exactly one trial; it fails, the circuit opens again
    expect(await step(1)).toBe(1);
    row = await endpointRow(ep.webhookId);
    expect(row).toMatchObject({ state: "circuit_open", consecutiveFailures: 4 });
    expect(await step(30_000)).toBe(0);

    // the next trial succeeds: closed, and every held job goes out
    status = 200;
    expect(await step(30_000)).toBe(3);
    row = await endpointRow(ep.webhookId);
    expect(row).toMatchObject({ state: "active", consecutiveFailures: 0, circuitOpenUntil: null });
    const jobs = await prisma().webhookDelivery.findMany({ where: { endpointId: ep.webhookId } });
    expect(jobs.map((j) => j.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(new Set(jobs.map((j) => j.eventId))).toEqual(new Set([e1, ...more]));
    // attempts: e1's three, the failed trial, and one success per event; none while held
    expect(jobs.reduce((n, j) => n + j.attempts, 0)).toBe(7);
    expect(await prisma().webhookAttempt.count({ where: { endpointId: ep.webhookId } })).toBe(7);
  });

  it("disables at disableThreshold; only the console re-enables it; its queued jobs then go out", async () => {
    status = 500;
    const t = await createTestTenant(server);
    const token = await signAdminToken({
      secret: server.app.runtime.services.adminJwtSecret,
      tenantId: t.tenantId,
      ttlSeconds: 86_400, // ADMIN_JWT_MAX_TTL; the steps below move the clock about an hour
      now: clock.now(),
    });
    const admin = client(server.url, { admin: token });
    const ep = await createVerifiedEndpoint(t, receiver, {
      delivery: { maxAttempts: 20, backoffBaseMs: 1000, breakerThreshold: 2, breakerCooldownMs: 10_000, disableThreshold: 4 },
    });
    const [e1] = await makeEvents(server, t, "disable-1", 1);
    expect(await step(0)).toBe(1); // 1
    expect(await step(1500)).toBe(1); // 2 → open
    expect(await step(10_000)).toBe(1); // trial → 3, reopened
    expect(await step(10_000)).toBe(1); // trial → 4 → disabled
    const row = await endpointRow(ep.webhookId);
    expect(row.state).toBe("disabled");
    expect(row.disabledAt).not.toBeNull();
    expect((await t.api.get(`/api/v1/webhooks/${ep.webhookId}`)).body.state).toBe("disabled");

    expect(await step(3_600_000)).toBe(0); // no cooldown brings it back
    await makeEvents(server, t, "disable-1", 1); // and no new jobs while disabled
    expect(await prisma().webhookDelivery.count({ where: { endpointId: ep.webhookId } })).toBe(1);
    // re-enabling takes the admin JWT (the API key, even with manage_webhooks, is refused)
    expect((await t.api.post(`/api/v1/admin/webhooks/${ep.webhookId}/enable`)).status).toBe(401);
    status = 200;
    const enabled = await admin.post(`/api/v1/admin/webhooks/${ep.webhookId}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ webhookId: ep.webhookId, state: "active", verified: true });
    expect(await endpointRow(ep.webhookId)).toMatchObject({ consecutiveFailures: 0, disabledAt: null, circuitOpenUntil: null });
    expect(await step(0)).toBe(1);
    const last = receiver.deliveries().at(-1)!;
    expect(last.json.id).toBe(e1);
    expect((await prisma().webhookDelivery.findFirstOrThrow({ where: { endpointId: ep.webhookId } })).status).toBe("succeeded");
  });

  it("a commit wakes a running worker at once (no waiting for the poll)", async () => {
    status = 200;
    const s = await startWebhookServer({ DATABASE_URL: databaseUrl }, { clock, webhooks: { worker: { pollIntervalMs: 60_000 } } });
    try {
      const tt = await createTestTenant(s);
      const r = await startReceiver();
      await createVerifiedEndpoint(tt, r);
      await new Promise((ok) => setTimeout(ok, 100)); // the worker is asleep for the next minute
      const started = Date.now();
      await makeEvents(s, tt, "nudge-1", 1);
      // well inside the worker's minute of sleep (under load a delivery takes a second or more)
      await r.waitFor(() => r.deliveries().length === 1, 20_000);
      expect(Date.now() - started).toBeLessThan(20_000);
      await r.close();
    } finally {
      await s.stop();
    }
  });
});
