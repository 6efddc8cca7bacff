// npm run bench:email — 10,000 reply emails (contract section 15, issue 25: "sending 10,000 queued
// emails to a local SMTP server takes under 60 s"). An SMTP server on loopback (smtp-server, each
// message drained, not parsed) takes, in the same run:
//  - the floor: nodemailer alone, a pool of 4 connections, 10,000 messages of the same size, 50 at once;
//  - the service: 10,000 readers each with a reply queued (by eng_queue_email, as a reply's write
//    queues it: the item and the reader's compose job), composed into messages by the queue's email
//    pool (mail-queue.ts), each with its job of the outbound queue (kind `email`), and sent by the same
//    pool through the email composer (sender.ts); the two interleave, as they do in service.
// Prints the time from queued replies to sent messages and its ratio against the floor.
import type { AddressInfo } from "node:net";
import nodemailer from "nodemailer";
import { SMTPServer } from "smtp-server";
import { fmtTable, startBenchApp } from "./support.js";

const N = Number(process.env.BENCH_EMAILS ?? 10_000);

let received = 0;
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onData(stream, _session, callback) {
    stream.on("data", () => undefined);
    stream.on("end", () => {
      received++;
      callback();
    });
  },
});
await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;

// the floor: the same library and pool size, no database
const body =
  "Bob wrote on “On rivers”:\n> Rivers remember everything.\n\nRead it and reply: https://daily.example/rivers#comment-x\n".repeat(3);
const floorTransport = nodemailer.createTransport({ url: smtpUrl, pool: true, maxConnections: 4 });
const floorStart = performance.now();
for (let i = 0; i < N; i += 50) {
  await Promise.all(
    Array.from({ length: Math.min(50, N - i) }, (_, k) =>
      floorTransport.sendMail({
        from: "Comments <comments@bench.example>",
        to: `r${i + k}@readers.example`,
        subject: "bob replied to your comment",
        text: body,
        html: `<p>${body}</p>`,
      }),
    ),
  );
}
const floorMs = performance.now() - floorStart;
floorTransport.close();

const env = await startBenchApp({ SMTP_URL: smtpUrl, RUN_EMAIL_WORKER: "0" });
const { sql } = env.app.runtime.services;
const tenantId = (await sql.query<{ id: string }>(`SELECT id FROM tenants LIMIT 1`, []))[0]!.id;
await sql.query(`UPDATE tenants SET settings = settings || '{"email": {"defaultReplies": "immediate"}}' WHERE id = $1`, [tenantId]);
// 100 discussions; reader p<i> wrote comment c<i>, bob replied r<i>; one item per reader, due now
await sql.long(
  `WITH d AS (INSERT INTO discussions (tenant_id, id, title, url, seq, comment_count, created_at, updated_at)
              SELECT $1, 'd' || n, 'On rivers ' || n, 'https://daily.example/d' || n, 0, 0, now(), now() FROM generate_series(0, 99) n),
        r AS (INSERT INTO readers (tenant_id, id, name, email, created_at, updated_at)
              SELECT $1, 'p' || i, 'Reader ' || i, 'p' || i || '@readers.example', now(), now() FROM generate_series(1, $2::int) i
              UNION ALL SELECT $1, 'bob', 'Bob', NULL, now(), now())
   SELECT 1`,
  [tenantId, N],
  120_000,
);
await sql.long(
  `INSERT INTO comments (id, tenant_id, discussion_id, parent_id, depth, author_id, body, status, created_at, published_at)
   SELECT 'c' || i, $1, 'd' || (i % 100), NULL, 0, 'p' || i, 'My thoughts ' || i, 'approved'::"CommentStatus", now(), now() FROM generate_series(1, $2::int) i
   UNION ALL
   SELECT 'r' || i, $1, 'd' || (i % 100), 'c' || i, 1, 'bob', $3, 'approved'::"CommentStatus", now(), now() FROM generate_series(1, $2::int) i`,
  [tenantId, N, body],
  120_000,
);
await sql.long(
  `SELECT count(eng_queue_email($1, 'reply', gen_random_uuid(), 'r' || i, 'd' || (i % 100), ARRAY['p' || i], ARRAY['immediate'], ARRAY[now()], now()))
     FROM generate_series(1, $2::int) i`,
  [tenantId, N],
  120_000,
);
await sql.long(`ANALYZE`, [], 120_000);

const email = env.app.email;
received = 0;
const t0 = performance.now();
const pass = await email.runOnce(); // the email pool claims compose and send jobs until none is due
const totalMs = performance.now() - t0;
const [sent] = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM email_messages WHERE state = 'sent'`, []);
await env.close();
smtp.close();
console.log(
  fmtTable(
    ["what", "messages", "seconds", "messages/s"],
    [
      ["floor: nodemailer alone", N, (floorMs / 1000).toFixed(1), Math.round(N / (floorMs / 1000))],
      ["service: composed and sent", sent!.n, (totalMs / 1000).toFixed(1), Math.round(sent!.n / (totalMs / 1000))],
    ],
  ),
);
console.log(
  `\ncompose and send: ${Math.round((100 * floorMs) / totalMs)} % of the floor's rate; composed ${pass.messages}; ` +
    `messages at the SMTP server: ${received}`,
);
