// The outbound federation floor: a minimal hand-written fan-out and delivery loop to measure the
// service's outbound pipeline against in the same run (npm run bench:federation-out). It makes one
// durable job per follower's inbox in one statement (its own table, the activity's body in each
// row, as the service's `activitypub` jobs carry theirs), then CONCURRENCY loops, each: claim ONE
// job with FOR UPDATE SKIP LOCKED, sign the request as RFC 9421 (a Content-Digest, the signature
// base of @method, @target-uri, @authority and content-digest, RSASSA-PKCS1-v1_5 SHA-256 by an
// RSA-2048 key in memory: the service's key size), POST it over a keep-alive node:http agent, mark
// it done; until no job is left. No retries, no breaker, no proof made, no URL policy, no double
// knock: the least work a signed delivery can be.
// Env: DATABASE_URL, TENANT_ID, BODY (the activity's JSON), KEY_ID, CONCURRENCY (16).
// Prints `done {"delivered","cpuMs"}` (its own CPU time, fan-out and loops), then keeps its database
// sessions until its stdin closes (the bench reads their CPU time first) and exits.
import { createHash, generateKeyPairSync, sign } from "node:crypto";
import http from "node:http";
import pg from "pg";
import { post, reportDone } from "./delivery.js";

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const body = process.env.BODY!;
const keyId = process.env.KEY_ID!;
const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: CONCURRENCY, application_name: "eng-floor" });
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

const CLAIM = `
  UPDATE floor_ap_jobs j SET status = 'sending'
    FROM (SELECT id FROM floor_ap_jobs WHERE status = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) p
   WHERE j.id = p.id
  RETURNING j.id, j.inbox, j.body`;
const DONE = `UPDATE floor_ap_jobs SET status = 'done', attempts = attempts + 1 WHERE id = $1`;

let delivered = 0;
async function loop(): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ id: string; inbox: string; body: string }>({ name: "floor_claim", text: CLAIM });
    const job = rows[0];
    if (!job) return;
    const inbox = new URL(job.inbox);
    const digest = `sha-256=:${createHash("sha256").update(job.body).digest("base64")}:`;
    const created = Math.floor(Date.now() / 1000);
    const params = `("@method" "@target-uri" "@authority" "content-digest");alg="rsa-v1_5-sha256";keyid="${keyId}";created=${created}`;
    const base = [
      `"@method": POST`,
      `"@target-uri": ${inbox.href}`,
      `"@authority": ${inbox.host}`,
      `"content-digest": ${digest}`,
      `"@signature-params": ${params}`,
    ].join("\n");
    const signature = sign("sha256", Buffer.from(base), privateKey).toString("base64");
    const status = await post(agent, inbox, job.body, {
      "content-type": "application/activity+json",
      "content-length": String(Buffer.byteLength(job.body)),
      date: new Date().toUTCString(),
      "content-digest": digest,
      "signature-input": `sig1=${params}`,
      signature: `sig1=:${signature}:`,
    });
    if (status < 200 || status >= 300) throw new Error(`the inbox answered ${status}`);
    await pool.query({ name: "floor_done", text: DONE, values: [job.id] });
    delivered++;
  }
}

const cpu = process.cpuUsage();
await pool.query(`CREATE TABLE IF NOT EXISTS floor_ap_jobs (id bigserial PRIMARY KEY, inbox text NOT NULL, body text NOT NULL,
  status text NOT NULL DEFAULT 'pending', attempts int NOT NULL DEFAULT 0)`);
await pool.query(`TRUNCATE floor_ap_jobs`);
await pool.query(`INSERT INTO floor_ap_jobs (inbox, body) SELECT inbox, $2 FROM federation_followers WHERE tenant_id = $1`, [
  process.env.TENANT_ID,
  body,
]);
await Promise.all(Array.from({ length: CONCURRENCY }, loop));
await reportDone(cpu, delivered);
agent.destroy();
await pool.end();
