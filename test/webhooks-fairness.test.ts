// Fair delivery: one tenant's endpoint that never answers, with a backlog of 1,000 jobs, does not
// delay another tenant's deliveries (per-endpoint and per-tenant caps in the worker).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTenant } from "./support/fixtures.js";
import type { TestServer } from "./support/server.js";
import { startReceiver, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint, startWebhookServer } from "./support/receiver-app.js";
import { DEFAULT_WORKER_OPTIONS } from "../src/outbound/worker.js";
import { isolatedDatabase } from "./support/database.js";

let server: TestServer;
let dropDatabase: (() => Promise<void>) | undefined;
const receivers: Receiver[] = [];

// On a database of its own: the per-endpoint cap is per worker, and the workers of other files'
// servers on the shared database would claim A's backlog too (two workers: 32 attempts in flight).
beforeAll(async () => {
  const isolated = await isolatedDatabase("fairness");
  dropDatabase = () => isolated.drop();
  server = await startWebhookServer({ DATABASE_URL: isolated.url });
});
afterAll(async () => {
  for (const r of receivers) r.release();
  await server?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await dropDatabase?.();
});

describe("webhook fairness", () => {
  it("tenant B's delivery arrives within 1 s of commit while tenant A has 1,000 jobs for a receiver that never answers", async () => {
    const a = await createTestTenant(server);
    const b = await createTestTenant(server);
    // A's receiver verifies, then hangs every delivery.
    const stuck = await startReceiver((req) =>
      req.event === "verification" ? { status: 200, body: { challenge: req.json?.challenge } } : { hang: true },
    );
    const fine = await startReceiver();
    receivers.push(stuck, fine);
    // attempts that outlast the test (the default 10 s may pass on a loaded machine, freeing slots):
    // every delivery A's receiver counts below is one still in flight
    await createVerifiedEndpoint(a, stuck, { delivery: { attemptTimeoutMs: 60_000 } });
    await createVerifiedEndpoint(b, fine);

    // 1,000 events (and so 1,000 jobs) for A in one statement, through the write functions.
    const services = server.app.runtime.services;
    expect((await a.api.put("/api/v1/discussions/backlog", {})).status).toBe(201);
    await services.sql.query(
      `SELECT eng_append_event($1, 'backlog', 'discussion_locked', 'all', NULL, json_build_object('n', i), now()) FROM generate_series(1, 1000) i`,
      [a.tenantId],
    );
    services.webhooks.worker.nudge();
    // A's endpoint is busy with hanging attempts (up to its share of the worker's slots)
    await stuck.waitFor((reqs) => reqs.filter((r) => r.event !== "verification").length >= 4, 10_000);

    expect((await b.api.put("/api/v1/discussions/fair", {})).status).toBe(201);
    expect((await b.api.post("/api/v1/discussions/fair/lock")).status).toBe(200);
    const committed = Date.now(); // the lock's event committed before its answer came back
    await fine.waitFor((reqs) => reqs.some((r) => r.event === "discussion_locked"), 5_000);
    const arrived = fine.deliveries().find((r) => r.event === "discussion_locked")!.at;
    expect(arrived - committed).toBeLessThan(1_000);
    // and A never held more than its endpoint's share of the worker's slots
    expect(stuck.deliveries().length).toBeLessThanOrEqual(DEFAULT_WORKER_OPTIONS.maxPerEndpoint);
  });
});

describe("webhook drain under the fairness caps", () => {
  // A worker that polls only once a minute: the backlog below can only drain in time if slots freed
  // by a capped endpoint (or tenant) wake the worker. Before that, one endpoint drained
  // maxPerEndpoint jobs per poll interval. On a database of its own: no other file's worker may
  // claim these jobs.
  let databaseUrl: string;
  beforeAll(async () => {
    const isolated = await isolatedDatabase("drain");
    databaseUrl = isolated.url;
    return () => isolated.drop(); // after the describe's tests (each stops its own server)
  });
  for (const caps of [
    { maxPerEndpoint: 2, maxPerTenant: 32 },
    { maxPerEndpoint: 8, maxPerTenant: 2 },
  ]) {
    it(`one endpoint's backlog of 40 drains without waiting for polls (per endpoint ${caps.maxPerEndpoint}, per tenant ${caps.maxPerTenant})`, async () => {
      const slow = await startWebhookServer({ DATABASE_URL: databaseUrl }, { webhooks: { worker: { pollIntervalMs: 60_000, ...caps } } });
      const receiver = await startReceiver();
      try {
        const t = await createTestTenant(slow);
        await createVerifiedEndpoint(t, receiver);
        expect((await t.api.put("/api/v1/discussions/drain", {})).status).toBe(201);
        await slow.app.runtime.services.sql.query(
          `SELECT eng_append_event($1, 'drain', 'discussion_locked', 'all', NULL, json_build_object('n', i), now()) FROM generate_series(1, 40) i`,
          [t.tenantId],
        );
        slow.app.runtime.services.webhooks.worker.nudge();
        await receiver.waitFor((reqs) => reqs.filter((r) => r.event === "discussion_locked").length >= 40, 15_000);
        const seen = new Set(
          receiver
            .deliveries()
            .filter((r) => r.event === "discussion_locked")
            .map((r) => r.json?.data?.n),
        );
        expect(seen.size).toBe(40);
      } finally {
        await slow.stop();
        await receiver.close();
      }
    });
  }
});

describe("per-endpoint concurrency", () => {
  it("WEBHOOK_MAX_PER_ENDPOINT sets how many attempts one endpoint has in flight", async () => {
    const isolated = await isolatedDatabase("perendpoint");
    const capped = await startWebhookServer({ DATABASE_URL: isolated.url, WEBHOOK_MAX_PER_ENDPOINT: "3" });
    const hanging = await startReceiver((req) =>
      req.event === "verification" ? { status: 200, body: { challenge: req.json?.challenge } } : { hang: true },
    );
    try {
      const t = await createTestTenant(capped);
      await createVerifiedEndpoint(t, hanging);
      expect((await t.api.put("/api/v1/discussions/capped", {})).status).toBe(201);
      await capped.app.runtime.services.sql.query(
        `SELECT eng_append_event($1, 'capped', 'discussion_locked', 'all', NULL, json_build_object('n', i), now()) FROM generate_series(1, 10) i`,
        [t.tenantId],
      );
      capped.app.runtime.services.webhooks.worker.nudge();
      await hanging.waitFor((reqs) => reqs.filter((r) => r.event === "discussion_locked").length >= 3, 5_000);
      await new Promise((ok) => setTimeout(ok, 300)); // polls come and go: no fourth attempt starts
      expect(hanging.deliveries()).toHaveLength(3);
    } finally {
      hanging.release();
      await capped.stop();
      await hanging.close();
      await isolated.drop();
    }
  });
});
