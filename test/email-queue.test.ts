// Email on the outbound queue (contract section 15; docs/architecture.md, "The outbound pipeline"):
// every queued message is a job of webhook_deliveries (kind `email`, the job's id the message's),
// written by the statement that writes the message. An SMTP server that cannot be reached is the
// queue's failed attempt: retried with backoff (30 s doubling), and its breaker opens after 10 in a
// row, holding its messages (no attempt counted) for a cooldown; once the server is back each message
// is delivered once. Two instances' email pools send each message once; erasing a reader takes their
// queued message's job. A reply's write queues its reader's compose job (kind `email_compose`) with
// the item, one pending per reader: a reply committed while the compose runs is never left without
// one, and a compose retried after its end was lost sends nothing twice. Driven pass by pass (app.email.runOnce) under a manual clock, on a database
// of its own (the passes take what is due in the whole database).
import { createServer, type Server } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../src/lib/clock.js";
import { startServer, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { createTestTenant, type TestTenant } from "./support/fixtures.js";
import { startSmtp, type TestSmtp } from "./support/smtp.js";
import { createEmailWorker } from "../src/modules/email/engine/worker.js";

const SEC = 1000;
const MIN = 60_000;
const clock = manualClock(new Date());
let server: TestServer;
let own: Awaited<ReturnType<typeof isolatedDatabase>>;
/** the port of an SMTP server that is down (its connections cut at once) until a test starts it there */
let port: number;
let smtp: TestSmtp | undefined;
let down: Server | undefined;
const listenDown = (at: number) =>
  new Promise<Server>((resolve) => {
    const s = createServer((socket) => socket.destroy());
    s.listen(at, "127.0.0.1", () => resolve(s));
  });
const closeDown = () => new Promise<void>((resolve) => (down ? down.close(() => resolve()) : resolve()));

beforeAll(async () => {
  down = await listenDown(0);
  port = (down.address() as { port: number }).port;
  own = await isolatedDatabase("email_queue");
  server = await startServer({ ...own.env, SMTP_URL: `smtp://127.0.0.1:${port}`, PUBLIC_URL: "https://comments.example" }, { clock });
});
afterAll(async () => {
  await server?.stop();
  await smtp?.close();
  await closeDown();
  await own?.drop();
});

const sql = <R>(q: string, values: unknown[] = []) => server.app.runtime.services.sql.query<R>(q, values);
const pass = () => server.app.email.runOnce();

interface JobRow {
  kind: string;
  status: string;
  attempts: number;
  due: Date;
  lastError: string | null;
  state: string;
  messageAttempts: number;
  readerId: string;
}
const jobsOf = (tenantId: string) =>
  sql<JobRow>(
    `SELECT d.kind::text AS kind, d.status::text AS status, d.attempts, d.next_attempt_at AS due, d.last_error AS "lastError",
            m.state, m.attempts AS "messageAttempts", m.reader_id AS "readerId"
       FROM email_messages m LEFT JOIN webhook_deliveries d ON d.id = m.id
      WHERE m.tenant_id = $1 ORDER BY m.created_at, m.id`,
    [tenantId],
  );

/** `n` queued messages of a tenant, each with its job, as the email worker writes them (due now) */
async function queued(t: TestTenant, n: number, prefix: string): Promise<void> {
  await sql(
    `WITH m AS (
       INSERT INTO email_messages (id, tenant_id, reader_id, kind, to_address, subject, text_body, html_body, item_count, state, created_at)
       SELECT gen_random_uuid(), $1, $2 || i, 'replies', $2 || i || '@readers.example', 'Reply ' || i, 'text ' || i, '<p>html</p>', 1, 'queued', $3
         FROM generate_series(1, $4::int) i RETURNING id, tenant_id, created_at)
     INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
     SELECT id, tenant_id, 'email', '{}'::jsonb, created_at, created_at, created_at FROM m`,
    [t.tenantId, prefix, clock.now(), n],
  );
}

async function smtpUp(): Promise<TestSmtp> {
  await closeDown();
  down = undefined;
  smtp = await startSmtp({ port });
  return smtp;
}
async function smtpDown(): Promise<void> {
  server.app.runtime.email.close(); // its pooled connections, which the server's close would wait for
  await smtp?.close();
  smtp = undefined;
  down = await listenDown(port);
}

describe("email on the outbound queue", () => {
  it("queues a reply email as a job of kind email; the queue retries an unreachable server with backoff and delivers it once it is back", async () => {
    const t = await createTestTenant(server, "The Daily");
    expect((await t.api.patch("/api/v1/settings", { email: { defaultReplies: "immediate" } })).status).toBe(200);
    expect((await t.api.put("/api/v1/discussions/q", { title: "On queues", url: "https://daily.example/q" })).status).toBe(201);
    const iat = Math.floor(clock.now().getTime() / 1000);
    const ann = await t.reader("ann", { name: "ann", email: "ann@readers.example", iat });
    const parent = await ann.post("/api/v1/discussions/q/comments", { body: "A thought" });
    const bob = await t.reader("bob", { name: "bob", iat });
    expect((await bob.post("/api/v1/discussions/q/comments", { body: "Queued for ann", parentId: parent.body.id })).status).toBe(201);
    clock.advance(3 * MIN);

    // composed into a message and its job; the server cannot be reached: a failed attempt, due again after 30–45 s
    expect(await pass()).toMatchObject({ messages: 1, sent: 0, retried: 1 });
    let [job] = await jobsOf(t.tenantId);
    expect(job).toMatchObject({ kind: "email", status: "pending", attempts: 1, state: "queued", messageAttempts: 1 });
    expect(job!.lastError).toBe("The SMTP server could not be reached.");
    const wait = job!.due.getTime() - clock.now().getTime();
    expect(wait).toBeGreaterThanOrEqual(30 * SEC);
    expect(wait).toBeLessThanOrEqual(45 * SEC);
    expect(await pass()).toMatchObject({ messages: 0, sent: 0, retried: 0 }); // not due yet

    clock.advance(46 * SEC);
    expect(await pass()).toMatchObject({ sent: 0, retried: 1 });
    [job] = await jobsOf(t.tenantId);
    expect(job).toMatchObject({ status: "pending", attempts: 2 });
    expect(job!.due.getTime() - clock.now().getTime()).toBeGreaterThanOrEqual(60 * SEC); // doubled

    const up = await smtpUp();
    try {
      expect(await pass()).toMatchObject({ sent: 0 }); // back, but the message is not due yet
      clock.advance(91 * SEC);
      expect(await pass()).toMatchObject({ sent: 1, retried: 0 });
      [job] = await jobsOf(t.tenantId);
      expect(job).toMatchObject({ status: "succeeded", attempts: 3, state: "sent", messageAttempts: 3, lastError: null });
      clock.advance(10 * MIN);
      expect(await pass()).toMatchObject({ messages: 0, sent: 0 });
      expect(up.received.map((m) => m.subject)).toEqual(["bob replied to your comment on “On queues”"]);
      // erasing a reader takes their queued message and its job
      await queued(t, 1, "gone");
      expect((await t.api.del("/api/v1/readers/gone1")).status).toBeLessThan(300);
      expect(
        await sql(`SELECT 1 FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'email' AND status = 'pending'`, [t.tenantId]),
      ).toEqual([]);
    } finally {
      await smtpDown();
    }
  });

  it("opens the SMTP server's breaker after 10 failed attempts in a row: its messages wait, no attempt counted, then go once", async () => {
    const t = await createTestTenant(server, "Breaker");
    await queued(t, 10, "b");
    expect(await pass()).toMatchObject({ retried: 10, sent: 0 });
    const [breaker] = await sql<{ failures: number; until: Date | null }>(
      `SELECT consecutive_failures AS failures, circuit_open_until AS until FROM smtp_servers WHERE server = $1`,
      [`127.0.0.1:${port}`],
    );
    expect(breaker!.failures).toBe(10);
    expect(breaker!.until!.getTime()).toBe(clock.now().getTime() + MIN);

    // one more message while the circuit is open: held until the cooldown ends, not attempted
    await queued(t, 1, "late");
    expect(await pass()).toMatchObject({ retried: 0, sent: 0 });
    const late = (await jobsOf(t.tenantId)).find((j) => j.readerId === "late1")!;
    expect(late).toMatchObject({ status: "pending", attempts: 0, state: "queued" });
    expect(late.due.getTime()).toBe(breaker!.until!.getTime());

    const up = await smtpUp();
    try {
      clock.advance(2 * MIN);
      expect(await pass()).toMatchObject({ sent: 11, retried: 0 });
      expect(up.received).toHaveLength(11);
      const [closed] = await sql<{ failures: number; until: Date | null }>(
        `SELECT consecutive_failures AS failures, circuit_open_until AS until FROM smtp_servers WHERE server = $1`,
        [`127.0.0.1:${port}`],
      );
      expect(closed).toEqual({ failures: 0, until: null });
      expect((await jobsOf(t.tenantId)).every((j) => j.status === "succeeded" && j.state === "sent")).toBe(true);
    } finally {
      await smtpDown();
    }
  });

  it("two instances' email pools send each message once", async () => {
    const t = await createTestTenant(server, "Two");
    await queued(t, 40, "two");
    const up = await smtpUp();
    try {
      const workers = ["a", "b"].map((id) => createEmailWorker(server.app.runtime.services, { workerId: `instance-${id}` }));
      const results = await Promise.all(workers.map((w) => w.runOnce()));
      await Promise.all(workers.map((w) => w.stop()));
      expect(results.reduce((n, r) => n + r.sent, 0)).toBe(40);
      expect(up.received).toHaveLength(40);
      expect(new Set(up.received.map((m) => m.messageId)).size).toBe(40);
      const jobs = await jobsOf(t.tenantId);
      expect(jobs.filter((j) => j.kind === "email" && j.status === "succeeded" && j.attempts === 1 && j.state === "sent")).toHaveLength(40);
    } finally {
      await smtpDown();
    }
  });
});

describe("compose jobs", () => {
  const composeJobs = (tenantId: string) =>
    sql<{ id: string; status: string; due: Date; readerId: string; key: string | null }>(
      `SELECT id::text, status::text AS status, next_attempt_at AS due, message ->> 'readerId' AS "readerId", message ->> 'composeKey' AS key
         FROM webhook_deliveries WHERE tenant_id = $1 AND kind = 'email_compose' ORDER BY created_at, id`,
      [tenantId],
    );
  const outboxOf = (tenantId: string) =>
    sql<{ itemCount: number }>(`SELECT item_count AS "itemCount" FROM email_messages WHERE tenant_id = $1 ORDER BY created_at`, [tenantId]);

  /** a tenant whose readers want replies at once, a thread by ann (who has an address), and a way for others to reply to her */
  async function thread(name: string) {
    const t = await createTestTenant(server, name);
    expect((await t.api.patch("/api/v1/settings", { email: { defaultReplies: "immediate" } })).status).toBe(200);
    expect((await t.api.put("/api/v1/discussions/c", { title: "On composing", url: "https://daily.example/c" })).status).toBe(201);
    const iat = Math.floor(clock.now().getTime() / 1000);
    const ann = await t.reader("ann", { name: "ann", email: "ann@readers.example", iat });
    const parent = (await ann.post("/api/v1/discussions/c/comments", { body: "A thought" })).body.id as string;
    const reply = async (who: string, body: string) => {
      const r = await (await t.reader(who, { name: who, iat })).post("/api/v1/discussions/c/comments", { body, parentId: parent });
      expect(r.status).toBe(201);
    };
    return { t, reply };
  }

  it("is queued by the reply's write, due with its item, one pending per reader; a retried compose sends nothing twice", async () => {
    const { t, reply } = await thread("Compose");
    await reply("bob", "First");
    const [job] = await composeJobs(t.tenantId);
    expect(job).toMatchObject({ status: "pending", readerId: "ann" });
    expect(job!.due.getTime() - clock.now().getTime()).toBe(2 * MIN);
    clock.advance(MIN);
    await reply("cyd", "Second");
    expect(await composeJobs(t.tenantId)).toHaveLength(1); // the pending job takes both
    clock.advance(MIN + SEC);
    const up = await smtpUp();
    try {
      expect(await pass()).toMatchObject({ messages: 1, sent: 1 });
      expect(await outboxOf(t.tenantId)).toEqual([{ itemCount: 2 }]);
      const [done] = await composeJobs(t.tenantId);
      expect(done).toMatchObject({ status: "succeeded", key: null });
      // its end lost (a worker that died after composing): claimed again, it composes nothing
      await sql(`UPDATE webhook_deliveries SET status = 'pending', locked_until = NULL, claim_token = NULL WHERE id = $1::uuid`, [
        done!.id,
      ]);
      expect(await pass()).toMatchObject({ messages: 0, sent: 0 });
      expect(up.received).toHaveLength(1);
      // a reply after the compose: a job of its own
      await reply("bob", "Third");
      expect((await composeJobs(t.tenantId)).filter((j) => j.status === "pending")).toHaveLength(1);
      // erasing the reader takes their compose jobs (which name them)
      expect((await t.api.del("/api/v1/readers/ann")).status).toBeLessThan(300);
      expect(await composeJobs(t.tenantId)).toEqual([]);
    } finally {
      await smtpDown();
    }
  });

  it("never leaves an item without a job: a write waits for a compose holding the job, and the compose waits for a write holding it", async () => {
    const { t, reply } = await thread("Race");
    await reply("bob", "First");
    const [job] = await composeJobs(t.tenantId);
    const queueItem = (c: pg.Client, comment: string) =>
      c.query(
        `SELECT eng_queue_email($1, 'reply', NULL, $2, 'c', ARRAY['ann'], ARRAY['immediate'], ARRAY[$3::timestamptz], $4::timestamptz)`,
        [t.tenantId, comment, new Date(clock.now().getTime() + 2 * MIN), clock.now()],
      );
    const a = new pg.Client({ connectionString: own.url });
    const b = new pg.Client({ connectionString: own.url });
    await a.connect();
    await b.connect();
    /** resolves once the client's statement waits on a lock (fails if it never does) */
    const blocked = async (c: pg.Client) => {
      const { rows } = await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      return async () => {
        for (let i = 0; i < 200; i++) {
          const [row] = await sql<{ wait: string | null }>(`SELECT wait_event_type AS wait FROM pg_stat_activity WHERE pid = $1`, [
            rows[0]!.pid,
          ]);
          if (row?.wait === "Lock") return;
          await new Promise((r) => setTimeout(r, 25));
        }
        throw new Error("the statement never waited on a lock");
      };
    };
    const aBlocked = await blocked(a);
    const bBlocked = await blocked(b);
    try {
      // a compose that has taken the key (uncommitted): a write queuing for the same reader waits for
      // it, then queues a job of its own, since the compose cannot have seen its item
      await a.query("BEGIN");
      await a.query(`UPDATE webhook_deliveries SET message = message - 'composeKey' WHERE id = $1::uuid`, [job!.id]);
      const write = queueItem(b, "late");
      await bBlocked();
      await a.query("COMMIT");
      await write;
      expect((await composeJobs(t.tenantId)).filter((j) => j.key !== null)).toHaveLength(1);

      // a write holding the pending job (uncommitted): a compose taking the key waits for it, and
      // then takes its item
      const [pending] = (await composeJobs(t.tenantId)).filter((j) => j.key !== null);
      await b.query("BEGIN");
      await queueItem(b, "held");
      const compose = a.query(`UPDATE webhook_deliveries SET message = message - 'composeKey' WHERE id = $1::uuid RETURNING id`, [
        pending!.id,
      ]);
      await aBlocked();
      await b.query("COMMIT");
      await compose;
      const items = await a.query(`SELECT comment_id FROM email_items WHERE tenant_id = $1 AND reader_id = 'ann' ORDER BY comment_id`, [
        t.tenantId,
      ]);
      expect(items.rows.map((r: { comment_id: string }) => r.comment_id)).toContain("held");
    } finally {
      await a.end();
      await b.end();
    }
  });
});
