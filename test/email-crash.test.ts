// Email across a crash (contract section 15): a worker in a child process (its email pool of the
// outbound queue) is killed with SIGKILL in the middle of a burst of 300 queued messages, each a job
// of kind `email`; another worker takes the rest over once the child's leases end. Nothing is lost: every message arrives and is recorded sent. A message whose SMTP
// transaction the child finished but had not yet recorded is sent again, with the same Message-ID
// (made from the message's id), so the receiving side sees one message: at most one per SMTP
// connection the child had open (4).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestTenant } from "./support/fixtures.js";
import { startServer, TEST_ADMIN_SECRET, type TestServer } from "./support/server.js";
import { isolatedDatabase } from "./support/database.js";
import { startSmtp, type TestSmtp } from "./support/smtp.js";
import { createEmailWorker } from "../src/modules/email/engine/worker.js";

const N = 300;
let smtp: TestSmtp;
let server: TestServer;
let isolated: Awaited<ReturnType<typeof isolatedDatabase>>;
let child: ChildProcess | undefined;
// every child ever spawned, so a run that fails before `child` is assigned leaves none running
const spawned = new Set<ChildProcess>();

beforeAll(async () => {
  smtp = await startSmtp({ delayMs: 5 });
  isolated = await isolatedDatabase("emailcrash");
  server = await startServer({ DATABASE_URL: isolated.url, SMTP_URL: smtp.url });
});
afterAll(async () => {
  for (const proc of spawned) if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  await server?.stop();
  await smtp?.close();
  await isolated?.drop();
});

function startChild(): Promise<ChildProcess> {
  const script = fileURLToPath(new URL("./support/email-crash-worker.mjs", import.meta.url));
  const proc = spawn(process.execPath, [script], {
    env: {
      ...process.env,
      DATABASE_URL: isolated.url,
      ADMIN_JWT_SECRET: TEST_ADMIN_SECRET,
      SMTP_URL: smtp.url,
      LOG_LEVEL: "silent",
      REDIS_URL: "",
      EMAIL_LEASE_MS: "1000",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  spawned.add(proc);
  return new Promise((resolve, reject) => {
    let err = "";
    proc.stdout!.on("data", (c: Buffer) => c.toString().includes("ready") && resolve(proc));
    proc.stderr!.on("data", (c: Buffer) => (err += c.toString()));
    proc.once("exit", (code) => reject(new Error(`the child worker exited (${code}): ${err}`)));
  });
}

it("loses nothing when the sending worker is killed mid-burst; a resend keeps its Message-ID", async () => {
  const t = await createTestTenant(server);
  const sql = server.app.runtime.services.sql;
  const ids = (
    await sql.query<{ id: string }>(
      // each message with its job of the outbound queue (kind `email`, the same id), as the email worker writes them
      `WITH m AS (
         INSERT INTO email_messages (id, tenant_id, reader_id, kind, to_address, subject, text_body, html_body, item_count, state, created_at)
         SELECT gen_random_uuid(), $1, 'r' || i, 'replies', 'r' || i || '@readers.example', 'Reply ' || i, 'text ' || i, '<p>html</p>', 1, 'queued', now()
           FROM generate_series(1, ${N}) i RETURNING id, tenant_id, created_at)
       INSERT INTO webhook_deliveries (id, tenant_id, kind, message, next_attempt_at, created_at, updated_at)
       SELECT id, tenant_id, 'email', '{}'::jsonb, created_at, created_at, created_at FROM m RETURNING id::text`,
      [t.tenantId],
    )
  ).map((r) => r.id);
  child = await startChild();
  await smtp.waitFor(40);
  const exited = new Promise((ok) => child!.once("exit", ok));
  child.kill("SIGKILL");
  await exited;
  child = undefined;
  const beforeTakeover = smtp.received.length;
  expect(beforeTakeover).toBeLessThan(N); // killed in the middle

  // another worker, its clock past the child's 1 s leases (no waiting for them in real time)
  const later = { ...server.app.runtime.services, clock: { now: () => new Date(Date.now() + 2_000) } };
  const worker = createEmailWorker(later, { workerId: "takeover" });
  await worker.runOnce();
  await worker.stop();

  const [sent] = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM email_messages WHERE tenant_id = $1 AND state = 'sent'`, [
    t.tenantId,
  ]);
  expect(sent!.n).toBe(N);
  const byMessageId = new Map<string, number>();
  for (const m of smtp.received) byMessageId.set(m.messageId!, (byMessageId.get(m.messageId!) ?? 0) + 1);
  // every message arrived, under the Message-ID its row's id makes
  expect([...byMessageId.keys()].map((m) => /^<([0-9a-f-]{36})@/.exec(m)?.[1]).sort()).toEqual([...ids].sort());
  const resent = [...byMessageId.values()].filter((n) => n > 1);
  expect(resent.every((n) => n === 2)).toBe(true);
  expect(resent.length).toBeLessThanOrEqual(4);
  // two worker processes started and one killed: on a loaded machine that takes more than the default 30 s
}, 120_000);
