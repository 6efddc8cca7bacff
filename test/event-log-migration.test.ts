// An installation's populated, unpartitioned event log partitioned online (src/db/event-log-partitioning.ts,
// run by migratePostgres as `engagement migrate` and a server's start do) while writers keep posting
// comments through the real server over HTTP: every write is answered, every acknowledged comment's
// event is in the log exactly once, each discussion's seqs run 1..head with none twice, a transaction
// holding the table delays the switch without stopping the writers, and afterwards replay and the
// webhook worker read the partitioned log. A database of its own, migrated as the release before left it.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migratePostgres } from "../src/db/migrate.js";
import { EVENT_LOG_PARTITION_MIGRATION, type PartitioningStep } from "../src/db/event-log-partitioning.js";
import type { TestServer } from "./support/server.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startWebhookServer, createVerifiedEndpoint } from "./support/receiver-app.js";
import { eventually, startReceiver, type Receiver } from "./support/receiver.js";
import { openSse, seqsOf } from "./support/sse.js";

const admin = inject("adminDatabaseUrl");
const name = `eng_test_evmig_${Date.now()}_${process.pid}`;
const direct = (() => {
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
})();
/** through the project's pooler when it has one, as test/support/database.ts does */
const env = ((): Record<string, string> => {
  if (inject("databaseDirectUrl") === undefined) return { DATABASE_URL: direct };
  const viaPooler = new URL(inject("databaseUrl"));
  viaPooler.pathname = `/${name}`;
  return { DATABASE_URL: viaPooler.toString(), DATABASE_DIRECT_URL: direct };
})();

const DISCUSSIONS = ["m0", "m1", "m2", "m3"];
const BULK = 40_000;
let server: TestServer;
let receiver: Receiver;
let t: TestTenant;
let db: pg.Client;

beforeAll(async () => {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  // the schema with one events table: every migration but the one that partitions it (the server is
  // this release's code, which calls the functions later migrations define)
  await migratePostgres(direct, { before: `!${EVENT_LOG_PARTITION_MIGRATION}` });
  db = new pg.Client({ connectionString: direct });
  await db.connect();
  server = await startWebhookServer({ ...env, RETENTION_INTERVAL_MS: "0" });
  receiver = await startReceiver();
  t = await createTestTenant(server);
  await createVerifiedEndpoint(t, receiver, { events: ["comment_created"] });
  for (const d of DISCUSSIONS) await t.api.put(`/api/v1/discussions/${d}`, {});
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await server?.stop();
  await db?.end();
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.end();
});

describe("partitioning a populated event log online", () => {
  it("loses no event and doubles none while comments are posted over HTTP, and replay and webhooks read it after", async () => {
    // populated: the tenant's own comments and a bulk of another tenant's older events
    const acked: string[] = [];
    const failures: string[] = [];
    const post = async (i: number, n: number) => {
      const as = { key: t.apiKey, identity: await t.identity(`writer-${i}`) };
      const r = await t.as(as).post(`/api/v1/discussions/${DISCUSSIONS[n % DISCUSSIONS.length]}/comments`, { body: `w${i} #${n}` });
      if (r.status === 201) acked.push(r.body.id as string);
      else failures.push(`${r.status} ${JSON.stringify(r.body)}`);
    };
    for (let n = 0; n < 12; n++) await post(0, n);
    await db.query(
      `INSERT INTO events (id, tenant_id, discussion_id, seq, type, payload, occurred_at)
       SELECT gen_random_uuid(), 'bulk-tenant', 'bulk-' || (g % 200), g, 'comment_created', '{"data":{}}'::jsonb,
              -- one row dated ten days ahead (a clock ahead, or a test's): the boundary must still hold it
              now() - interval '1 second' * g + CASE WHEN g = 1 THEN interval '10 days' ELSE interval '0' END
         FROM generate_series(1, ${BULK}) g`,
    );

    // writers post until told to stop
    let stop = false;
    const writers = [1, 2, 3].map(async (i) => {
      for (let n = 0; !stop; n++) await post(i, n);
    });
    /** resolves once `more` further posts were acknowledged */
    const acks = async (more: number) => {
      const target = acked.length + more;
      await eventually(() => acked.length >= target, 60_000);
    };

    const log: string[] = [];
    const steps: PartitioningStep[] = [];
    let blocker: pg.Client | undefined;
    let released: Promise<void> | undefined;
    await migratePostgres(direct, {
      log: (m) => log.push(m),
      onStep: async (s) => {
        steps.push(s);
        if (s === "indexes") await acks(5); // the service answers between the steps
        if (s === "validated") {
          await acks(5);
          // a transaction reading the log, open while the switch wants its lock: the switch waits for it
          // (tried again every half second), the writers do not. It ends once the switch has waited and
          // ten more posts were answered meanwhile (ending it after the posts alone let ten fast posts
          // end it before the switch first asked for its lock)
          blocker = new pg.Client({ connectionString: direct });
          await blocker.connect();
          await blocker.query("BEGIN");
          await blocker.query("SELECT count(*) FROM events WHERE tenant_id = 'bulk-tenant'");
          const waited = () => log.some((m) => m.includes("switching waits for a lock"));
          released = eventually(waited, 60_000).then(async () => {
            await acks(10);
            await blocker!.query("COMMIT");
            await blocker!.end();
          });
        }
      },
    });
    await released;
    await acks(10); // and after the switch
    stop = true;
    await Promise.all(writers);

    expect(failures).toEqual([]);
    expect(steps).toEqual(["foreign-key", "indexes", "check", "validated", "switched"]);
    expect(log.some((m) => m.includes("switching waits for a lock"))).toBe(true);

    // the partitioned log, the old table its partition of everything before the boundary
    const { rows: shape } = await db.query<{ kind: string; parts: string[] }>(
      `SELECT c.relkind::text AS kind,
              ARRAY(SELECT p.relname::text FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid WHERE i.inhparent = c.oid ORDER BY 1) AS parts
         FROM pg_class c WHERE c.oid = 'events'::regclass`,
    );
    expect(shape[0]!.kind).toBe("p");
    expect(shape[0]!.parts).toEqual(expect.arrayContaining(["events_legacy", "events_default"]));
    const { rows: applied } = await db.query(`SELECT 1 FROM _prisma_migrations WHERE migration_name = $1 AND finished_at IS NOT NULL`, [
      EVENT_LOG_PARTITION_MIGRATION,
    ]);
    expect(applied).toHaveLength(1);

    // every acknowledged comment's event exactly once, nothing else
    const { rows: created } = await db.query<{ id: string; n: number }>(
      `SELECT COALESCE(envelope::json, payload) #>> '{data,comment,id}' AS id, count(*)::int AS n FROM events
        WHERE tenant_id = $1 AND type = 'comment_created' GROUP BY 1`,
      [t.tenantId],
    );
    expect(created.filter((r) => r.n !== 1)).toEqual([]);
    expect(created.map((r) => r.id).sort()).toEqual([...acked].sort());
    expect(new Set(acked).size).toBe(acked.length);
    // each discussion's seqs: 1..head, none twice, none missing
    const { rows: seqs } = await db.query<{ id: string; head: number; n: number; distinct: number; max: number }>(
      `SELECT d.id, d.seq AS head, count(e.*)::int AS n, count(DISTINCT e.seq)::int AS distinct, COALESCE(max(e.seq), 0) AS max
         FROM discussions d LEFT JOIN events e ON e.tenant_id = d.tenant_id AND e.discussion_id = d.id
        WHERE d.tenant_id = $1 GROUP BY d.id, d.seq`,
      [t.tenantId],
    );
    for (const s of seqs) expect(s).toEqual({ id: s.id, head: s.head, n: s.head, distinct: s.head, max: s.head });
    const { rows: bulk } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE tenant_id = 'bulk-tenant'`);
    expect(bulk[0]!.n).toBe(BULK);

    // replay from the start of a discussion reads it whole, in order
    const head = seqs.find((s) => s.id === "m0")!.head;
    expect(head).toBeGreaterThan(10);
    const es = openSse(`${server.url}/api/v1/stream/m0`, { "x-api-key": t.apiKey, "last-event-id": "0" });
    await es.waitForEvents(head);
    expect(seqsOf(es.events())).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    es.close();

    // the webhook worker delivered every acknowledged comment, before and after the switch
    await eventually(() => new Set(receiver.deliveries().map((d) => d.json?.data?.comment?.id as string)).size >= acked.length, 60_000);
    expect(new Set(receiver.deliveries().map((d) => d.json?.data?.comment?.id as string))).toEqual(new Set(acked));

    // and the retention job keeps the partitions of the migrated log
    const r = await server.app.runtime.retention.runOnce();
    expect(r).not.toBeNull();
  }, 300_000);
});
