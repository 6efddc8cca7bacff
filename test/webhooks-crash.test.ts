// At-least-once across a crash: a worker in a child process is killed with SIGKILL while its
// deliveries are in flight; another worker takes the jobs over once the leases expire. Every event
// arrives, with the same idempotency key and a new delivery id. Leases are short (10 s by default)
// and renewed while a worker holds its jobs: a dead worker's jobs are back within 15 s, a live
// worker keeps an attempt that runs longer than its lease.
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { eventually, startReceiver, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint, makeEvents, startWebhookServer } from "./support/receiver-app.js";
import { isolatedDatabase } from "./support/database.js";
import { spawnReady } from "./support/process.js";

// The whole test runs ~73 years ahead (server and child alike), so the workers of other test
// files, on the real clock, never find these jobs due and cannot take them from the child.
const OFFSET_MS = Date.parse("2099-06-01T00:00:00.000Z") - Date.now();
/** set by a test to stand for time passed after a crash: the server's clock (its worker's among them) stands still there */
let frozenAtMs: number | undefined;
const clock = { now: () => new Date(frozenAtMs ?? Date.now() + OFFSET_MS) };
const LEASE_MS = 2_000;
/** a dead worker's jobs must be sent again within this of the crash */
const CRASH_BOUND_MS = 15_000;

let server: TestServer;
let t: TestTenant;
let databaseUrl: string;
let receiver: Receiver;
let child: ChildProcess | undefined;

async function startChildWorker(leaseMs: number | null = LEASE_MS): Promise<{ proc: ChildProcess; workerId: string }> {
  const script = fileURLToPath(new URL("./support/receiver-crash-worker.mjs", import.meta.url));
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    ADMIN_JWT_SECRET: TEST_ADMIN_SECRET,
    ALLOW_HTTP_WEBHOOKS: "1",
    LOG_LEVEL: "silent",
    REDIS_URL: "",
    CLOCK_OFFSET_MS: String(OFFSET_MS),
    ...(leaseMs === null ? {} : { WORKER_LEASE_MS: String(leaseMs) }),
  };
  const { proc, ready } = await spawnReady(script, env, 45_000); // a node start: 3 s quiet, 20+ s under load
  return { proc, workerId: ready };
}

let isolated: Awaited<ReturnType<typeof isolatedDatabase>> | undefined;
beforeAll(async () => {
  isolated = await isolatedDatabase("crash");
  databaseUrl = isolated.url;
  server = await startWebhookServer({ RUN_WEBHOOK_WORKER: "0", DATABASE_URL: databaseUrl }, { clock });
  t = await createTestTenant(server);
  const first = new Set<string>();
  receiver = await startReceiver((req) => {
    if (req.event === "verification") return { status: 200, body: { challenge: req.json.challenge } };
    const key = req.headers["x-service-idempotency-key"] as string;
    if (first.has(key)) return { status: 200 };
    first.add(key);
    return { hang: true }; // the first attempt of every event never gets an answer
  });
});
afterAll(async () => {
  child?.kill("SIGKILL");
  await server?.stop();
  await receiver?.close();
  await isolated?.drop();
});

describe("worker crash", () => {
  it("kill -9 mid-delivery loses nothing: the lease expires and another worker delivers again", async () => {
    const ep = await createVerifiedEndpoint(t, receiver);
    const started = await startChildWorker();
    child = started.proc;
    const n = 4;
    const ids = await makeEvents(server, t, "crash-1", n);
    await receiver.waitFor(() => receiver.deliveries().length === n, 10_000);
    const prisma = server.app.runtime.services.prisma;
    const held = await prisma.webhookDelivery.findMany({ where: { endpointId: ep.webhookId } });
    expect(held.map((j) => [j.status, j.lockedBy])).toEqual(ids.map(() => ["pending", started.workerId]));

    const exited = new Promise((ok) => child!.once("exit", ok));
    child.kill("SIGKILL");
    await exited;
    child = undefined;

    server.app.runtime.services.webhooks.worker.start();
    await eventually(async () => {
      const done = await prisma.webhookDelivery.count({ where: { endpointId: ep.webhookId, status: "succeeded" } });
      return done === n;
    }, 15_000);

    const byKey = new Map<string, typeof receiver.requests>();
    for (const d of receiver.deliveries()) {
      const key = d.headers["x-service-idempotency-key"] as string;
      byKey.set(key, [...(byKey.get(key) ?? []), d]);
    }
    expect([...byKey.keys()].sort()).toEqual(ids.map((id) => `discussion_${ids.indexOf(id) % 2 ? "unlocked" : "locked"}:${id}`).sort());
    for (const [key, [crashed, retried, ...rest]] of byKey) {
      expect(rest, key).toEqual([]);
      expect(retried, key).toBeDefined();
      expect(retried!.raw).toBe(crashed!.raw);
      expect(retried!.headers["x-service-delivery-id"]).not.toBe(crashed!.headers["x-service-delivery-id"]);
      // the new worker waited for the dead one's lease instead of sending alongside it
      expect(retried!.at - crashed!.at, key).toBeGreaterThanOrEqual(LEASE_MS - 500);
    }
    const log = await prisma.webhookAttempt.findMany({ where: { endpointId: ep.webhookId } });
    expect(log.map((a) => [a.attempt, a.statusCode])).toEqual(ids.map(() => [1, 200])); // the killed attempt left no outcome
  });

  it("a live worker keeps its lease while an attempt runs longer than the lease: a second worker sends nothing again", async () => {
    // renewed every third of the lease (500 ms): a loaded machine's pauses of a few hundred ms must not
    // lose it, as they did a 300 ms lease renewed every 100 ms; the attempts still run three leases long
    const RENEWED_LEASE_MS = 1_500;
    const ATTEMPT_MS = 3 * RENEWED_LEASE_MS;
    const s = server.app.runtime.services;
    await s.webhooks.worker.stop(); // only the two workers below
    const tenant = await createTestTenant(server);
    const slow = await startReceiver((req) =>
      req.event === "verification" ? { status: 200, body: { challenge: req.json.challenge } } : { status: 200, delayMs: ATTEMPT_MS },
    );
    const workers = ["lease-a", "lease-b"].map((workerId) =>
      s.webhooks.createWorker({ leaseMs: RENEWED_LEASE_MS, pollIntervalMs: 10, workerId, stopGraceMs: 0 }),
    );
    try {
      const ep = await createVerifiedEndpoint(tenant, slow);
      workers[0]!.start();
      const ids = await makeEvents(server, tenant, "renew-1", 3);
      await slow.waitFor(() => slow.deliveries().length === 3, 5_000);
      workers[1]!.start(); // polls every 10 ms while the attempts run three leases long
      await eventually(
        async () => (await s.prisma.webhookDelivery.count({ where: { endpointId: ep.webhookId, status: "succeeded" } })) === 3,
        15_000,
      );
      expect(slow.deliveries()).toHaveLength(3);
      const log = await s.prisma.webhookAttempt.findMany({ where: { endpointId: ep.webhookId } });
      expect(log.map((a) => [a.eventId, a.attempt, a.statusCode]).sort()).toEqual(ids.map((id) => [id, 1, 200]).sort());
      for (const a of log) expect(a.durationMs).toBeGreaterThanOrEqual(ATTEMPT_MS - 100); // not cut to the lease
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await slow.close();
      s.webhooks.worker.start();
    }
  });

  it("kill -9 mid-burst with the default lease: every job arrives, none later than 15 s after the crash", { timeout: 60_000 }, async () => {
    const prisma = server.app.runtime.services.prisma;
    const survivor = server.app.runtime.services.webhooks.worker;
    await survivor.stop(); // the child alone works the burst
    const tenant = await createTestTenant(server);
    const receiver50 = await startReceiver((req) =>
      req.event === "verification" ? { status: 200, body: { challenge: req.json.challenge } } : { status: 200, delayMs: 50 },
    );
    try {
      const ep = await createVerifiedEndpoint(tenant, receiver50);
      const started = await startChildWorker(null); // the worker's default lease and renewal
      child = started.proc;
      const n = 300;
      expect((await tenant.api.put("/api/v1/discussions/burst", {})).status).toBe(201);
      await server.app.runtime.services.sql.query(
        `SELECT eng_append_event($1, 'burst', 'discussion_locked', 'all', NULL, json_build_object('n', i), $2) FROM generate_series(1, $3::int) i`,
        [tenant.tenantId, clock.now(), n],
      );
      await receiver50.waitFor(() => receiver50.deliveries().length >= 40, 10_000);
      const exited = new Promise((ok) => child!.once("exit", ok));
      child.kill("SIGKILL");
      await exited;
      child = undefined;
      const crashedAt = clock.now().getTime(); // the child's clock when it died
      const held = await prisma.webhookDelivery.findMany({
        where: { endpointId: ep.webhookId, status: "pending", lockedBy: started.workerId },
      });
      expect(held.length).toBeGreaterThan(0); // killed with claims in hand
      // the dead worker's claims run out within the bound: its last renewal leased them no further
      for (const job of held) expect(job.lockedUntil!.getTime() - crashedAt, job.eventId!).toBeLessThanOrEqual(CRASH_BOUND_MS);

      // Another worker whose clock stands still at 15 s after the crash finds every dead claim free and
      // sends every job: nothing renewed the leases after the crash. Its clock does not move while it
      // claims and sends, so how long a loaded machine takes to send the burst cannot push a send past
      // the bound, and a lease longer than the bound would leave jobs it never finds due.
      frozenAtMs = crashedAt + CRASH_BOUND_MS;
      survivor.start();
      await eventually(
        async () => (await prisma.webhookDelivery.count({ where: { endpointId: ep.webhookId, status: "succeeded" } })) === n,
        40_000,
      );
      const events = await prisma.event.findMany({ where: { tenantId: tenant.tenantId, discussionId: "burst" }, select: { id: true } });
      const keyOf = (d: { headers: Record<string, unknown> }) => String(d.headers["x-service-idempotency-key"]).split(":")[1]!;
      expect(new Set(receiver50.deliveries().map(keyOf))).toEqual(new Set(events.map((e) => e.id))); // each at least once
      for (const job of held) {
        const sent = receiver50.deliveries().filter((d) => keyOf(d) === job.eventId);
        const last = Date.parse(String(sent[sent.length - 1]!.headers["x-service-timestamp"]));
        expect(last - crashedAt, job.eventId!).toBeLessThanOrEqual(CRASH_BOUND_MS);
      }
    } finally {
      frozenAtMs = undefined;
      await receiver50.close();
    }
  });
});
