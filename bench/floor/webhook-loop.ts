// The webhook floor: a minimal hand-written delivery loop to measure the worker
// against in the same run (npm run bench:webhooks). CONCURRENCY loops, each: claim ONE queued job
// of the endpoint with FOR UPDATE SKIP LOCKED (its event's payload read in the same statement),
// sign it (X-Service-Signature + the Standard Webhooks headers, the service's HMAC scheme), POST it
// over a keep-alive node:http agent, mark it done; until no job is left. No attempt log, no retries,
// no breaker, no fairness, no URL policy: the least work a delivery can be.
// Env: DATABASE_URL, ENDPOINT_ID, SECRET, KID, TARGET_URL, CONCURRENCY (16).
// Prints `done {"delivered","cpuMs"}` (its own CPU time over the loops), then keeps its database
// connections until its stdin closes (the bench reads their CPU time first) and exits.
import { createHmac, randomUUID } from "node:crypto";
import http from "node:http";
import pg from "pg";
import { post, reportDone } from "./delivery.js";

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const endpointId = process.env.ENDPOINT_ID!;
const secret = process.env.SECRET!;
const kid = process.env.KID!;
const target = new URL(process.env.TARGET_URL!);
const key = Buffer.from(secret, "utf8");
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: CONCURRENCY, application_name: "eng-floor" });
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

// ordered as the (endpoint_id, status, next_attempt_at) index is (the order is next_attempt_at's, the
// other two are fixed): with ORDER BY next_attempt_at alone the planner took the (status,
// next_attempt_at) index and filtered on the endpoint, walking every other endpoint's pending jobs
const CLAIM = `
  UPDATE webhook_deliveries d
     SET locked_until = now() + interval '90 seconds', claim_token = gen_random_uuid(), locked_by = 'floor'
    FROM (SELECT id FROM webhook_deliveries
           WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at <= now()
             AND (locked_until IS NULL OR locked_until <= now())
           ORDER BY endpoint_id, status, next_attempt_at LIMIT 1
             FOR UPDATE SKIP LOCKED) p, events ev
   WHERE d.id = p.id AND ev.id = d.event_id
  RETURNING d.id::text, d.claim_token::text AS token, ev.id::text AS event_id, ev.type, ev.payload`;
const DONE = `
  UPDATE webhook_deliveries SET status = 'succeeded', attempts = attempts + 1, locked_until = NULL,
         claim_token = NULL, locked_by = NULL, updated_at = now()
   WHERE id = $1::uuid AND claim_token = $2::uuid`;

let delivered = 0;
async function loop(): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ id: string; token: string; event_id: string; type: string; payload: unknown }>({
      name: "floor_claim",
      text: CLAIM,
      values: [endpointId],
    });
    const job = rows[0];
    if (!job) return;
    const body = JSON.stringify(job.payload);
    const now = new Date();
    const iso = now.toISOString();
    const t = Math.floor(now.getTime() / 1000);
    const id = `${job.type}:${job.event_id}`;
    const v1 = createHmac("sha256", key).update(`${iso}.`).update(body).digest("hex");
    const std = createHmac("sha256", key).update(`${id}.${t}.`).update(body).digest("base64");
    const status = await post(agent, target, body, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      "x-service-signature": `t=${t},v1=${v1},kid=${kid}`,
      "x-service-timestamp": iso,
      "x-service-event": job.type,
      "x-service-delivery-id": randomUUID(),
      "x-service-idempotency-key": id,
      "webhook-id": id,
      "webhook-timestamp": String(t),
      "webhook-signature": `v1,${std}`,
    });
    if (status < 200 || status >= 300) throw new Error(`receiver answered ${status}`);
    await pool.query({ name: "floor_done", text: DONE, values: [job.id, job.token] });
    delivered++;
  }
}

const cpu = process.cpuUsage();
await Promise.all(Array.from({ length: CONCURRENCY }, loop));
await reportDone(cpu, delivered);
agent.destroy();
await pool.end();
