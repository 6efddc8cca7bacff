// The outbound pipeline (src/outbound/) with three instances on one database, each running its worker:
// a thousand mixed jobs — webhooks, a federated discussion's activities (each event's job made into
// one delivery per follower inbox), chat alerts — are each delivered exactly once per destination,
// and every worker takes part.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { client } from "./support/client.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { freePort, getAp } from "./support/federating-server.js";
import { isolatedDatabase } from "./support/database.js";
import { startReceiver, type Received, type Receiver } from "./support/receiver.js";
import { createVerifiedEndpoint } from "./support/receiver-app.js";
import { startServer, type TestServer } from "./support/server.js";

const FEDERATED_COMMENTS = 150;
const HELD_COMMENTS = 100;
const FOLLOWERS = 3;

let own: Awaited<ReturnType<typeof isolatedDatabase>>;
const servers: TestServer[] = [];
const receivers: Receiver[] = [];

beforeAll(async () => {
  own = await isolatedDatabase("outbound3");
  // one deployment: three instances behind one PUBLIC_URL (the first one's address)
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 3; i++) {
    servers.push(
      await startServer(
        { ...own.env, PORT: i === 0 ? String(port) : "0", PUBLIC_URL: publicUrl, RUN_WEBHOOK_WORKER: "1" },
        { webhooks: { handshakeTimeoutMs: 3_000, worker: { pollIntervalMs: 50, stopGraceMs: 0, batchSize: 16 } } },
      ),
    );
  }
});

afterAll(async () => {
  for (const s of servers) await s.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await own?.drop();
});

const sql = <R>(text: string, values: unknown[] = []) => servers[0]!.app.runtime.services.sql.query<R>(text, values);
const deliveredBy = async (s: TestServer) => {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  return Number(/^webhook_deliveries_total\{outcome="delivered"\} (\d+)/m.exec(text)?.[1] ?? 0);
};

/** Each request's identity at its destination: a webhook's idempotency key, an activity's id, an alert's comment. */
const keyOf = (r: Received) =>
  (r.headers["x-service-idempotency-key"] as string | undefined) ?? (r.json?.id as string | undefined) ?? JSON.stringify(r.json);

function onceEach(requests: Received[]): { total: number; distinct: number } {
  const keys = requests.map((r) => `${r.path}\n${keyOf(r)}`);
  return { total: keys.length, distinct: new Set(keys).size };
}

it("delivers each of 1,000 mixed jobs exactly once per destination, with three instances' workers claiming at once", async () => {
  const [first] = servers;
  // tenant B federates, with two webhook endpoints and three followers on another server
  const b: TestTenant = await createTestTenant(first!);
  const hooks = [await startReceiver(), await startReceiver()];
  const fediverse = await startReceiver(() => ({ status: 202 }));
  const chat = await startReceiver(() => ({ status: 200, body: "ok" }));
  receivers.push(...hooks, fediverse, chat);
  for (const h of hooks) await createVerifiedEndpoint(b, h);
  expect((await b.api.patch("/api/v1/settings", { federation: { enabled: true, handle: "three_instances" } })).status).toBe(200);
  const actor = `${first!.app.runtime.federation.origin()!.href.replace(/\/$/, "")}/ap/actors/${b.tenantId}`;
  expect((await getAp(actor)).status).toBe(200); // the actor is made on its first look-up
  for (let i = 1; i <= FOLLOWERS; i++) {
    await sql(`INSERT INTO federation_followers (tenant_id, actor_id, inbox, follow_id, created_at) VALUES ($1, $2, $3, $4, now())`, [
      b.tenantId,
      `${fediverse.url}/users/f${i}`,
      `${fediverse.url}/users/f${i}/inbox`,
      `${fediverse.url}/follows/${i}`,
    ]);
  }
  expect((await b.api.put("/api/v1/discussions/launch", { title: "Launch", url: "https://blog.example/launch" })).status).toBe(201);

  // tenant C holds every comment and alerts a chat about each
  const c = await createTestTenant(first!);
  const alerted = await c.api.patch("/api/v1/settings", {
    moderation: "pre",
    alerts: [{ kind: "slack", on: ["pending"], url: `${chat.url}/hooks/slack/SECRET` }],
  });
  expect(alerted.status, JSON.stringify(alerted.body)).toBe(200);
  expect((await c.api.put("/api/v1/discussions/queue", { title: "Queue" })).status).toBe(201);

  // the writes, spread over the three instances and ten readers each
  const writers = async (t: TestTenant, discussion: string, n: number) => {
    const readers = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => client(servers[i % 3]!.url, { key: t.apiKey, identity: await t.identity(`r${i}`) })),
    );
    for (let i = 0; i < n; i += 10) {
      const batch = readers.slice(0, Math.min(10, n - i));
      // as a client does: a 503 (a loaded machine's pool or statement timeout) retried with the same
      // Idempotency-Key, which makes the retry exactly-once too
      const posted = await Promise.all(
        batch.map(async (r, k) => {
          const key = `${discussion}-${i + k}-${randomUUID()}`;
          for (let attempt = 1; ; attempt++) {
            const p = await r.post(
              `/api/v1/discussions/${discussion}/comments`,
              { body: `Comment ${i + k} of ${discussion}` },
              { headers: { "Idempotency-Key": key } },
            );
            if (p.status !== 503 || attempt === 5) return p;
            await new Promise((ok) => setTimeout(ok, 200 * attempt));
          }
        }),
      );
      for (const p of posted) expect(p.status, JSON.stringify(p.body)).toBe(201);
    }
  };
  await Promise.all([writers(b, "launch", FEDERATED_COMMENTS), writers(c, "queue", HELD_COMMENTS)]);

  const jobs = await sql<{ kind: string; n: number }>(
    `SELECT kind::text AS kind, count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = ANY($1) GROUP BY kind ORDER BY kind`,
    [[b.tenantId, c.tenantId]],
  );
  // every job is done, once each: nothing pending, nothing failed, no job attempted twice
  await vi.waitFor(
    async () =>
      expect(
        await sql(
          `SELECT status::text AS status, attempts, count(*)::int AS n FROM webhook_deliveries
            WHERE tenant_id = ANY($1) AND (status <> 'succeeded' OR attempts <> 1) GROUP BY 1, 2`,
          [[b.tenantId, c.tenantId]],
        ),
      ).toEqual([]),
    { timeout: 120_000, interval: 250 },
  );
  const counts = Object.fromEntries(
    (
      await sql<{ kind: string; n: number }>(
        `SELECT kind::text AS kind, count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = ANY($1) GROUP BY kind`,
        [[b.tenantId, c.tenantId]],
      )
    ).map((r) => [r.kind, r.n]),
  );
  expect(jobs.length).toBeGreaterThan(0);
  // one fan-out job per comment and one for the announcement; one delivery per follower of each
  expect(counts.activitypub_fanout).toBe(FEDERATED_COMMENTS + 1);
  expect(counts.activitypub).toBe((FEDERATED_COMMENTS + 1) * FOLLOWERS);
  expect(counts.alert).toBe(HELD_COMMENTS);
  expect(counts.webhook).toBeGreaterThanOrEqual(FEDERATED_COMMENTS * hooks.length);
  const total = Object.values(counts).reduce((a, n) => a + n, 0);
  expect(total).toBeGreaterThanOrEqual(1_000);

  // at each destination, each job arrived exactly once
  for (const h of hooks) {
    const got = onceEach(h.deliveries());
    expect(got.distinct).toBe(got.total);
    expect(got.total).toBe(counts.webhook! / hooks.length);
  }
  const activities = onceEach(fediverse.requests);
  expect(activities).toEqual({ total: counts.activitypub, distinct: counts.activitypub });
  for (let i = 1; i <= FOLLOWERS; i++) {
    const inbox = fediverse.requests.filter((r) => r.path === `/hook/users/f${i}/inbox`);
    expect(inbox.filter((r) => r.json?.type === "Create" && r.json?.object?.type === "Note")).toHaveLength(FEDERATED_COMMENTS);
    expect(inbox.filter((r) => r.json?.type === "Create" && r.json?.object?.type === "Article")).toHaveLength(1);
  }
  const alerts = onceEach(chat.requests);
  expect(alerts).toEqual({ total: HELD_COMMENTS, distinct: HELD_COMMENTS });

  // the three workers shared the work
  const byInstance = await Promise.all(servers.map(deliveredBy));
  for (const n of byInstance) expect(n).toBeGreaterThan(0);
  expect(byInstance.reduce((a, n) => a + n, 0)).toBe(total);
}, 240_000);
