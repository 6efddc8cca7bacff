/**
 * One delivery attempt of a claimed job (API.md §0 "Delivery", "Signature", "Delivery rules"):
 * gate on the endpoint's breaker, sign the stored envelope, POST it, then record the attempt, the
 * job's next state (retry with backoff + jitter, Retry-After, or final) and the breaker outcome.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Sql } from "../db/sql.js";
import type { Clock } from "../lib/clock.js";
import type { SecretBox } from "../lib/secret-box.js";
import { parseRetryAfter, retryDelayMs } from "./backoff.js";
import { claimTrial, recordFailure, recordSuccess } from "./endpoint-state.js";
import { canAttempt } from "./breaker.js";
import { DeliveryError, type WebhookHttpClient } from "./http-client.js";
import type { CompletionWriter } from "./completions.js";
import { releaseJob, type ClaimedJob, type JobOutcome } from "./jobs.js";
import { currentSigningKey, validSecrets } from "./secrets.js";
import { signPayload, standardWebhooksHeaders } from "./signature.js";
import type { BatchContext } from "./job-context.js";

export interface DeliveryDeps {
  prisma: PrismaClient;
  sql: Sql;
  clock: Clock;
  http: WebhookHttpClient;
  secretBox: SecretBox;
  log: Logger;
  random: () => number;
  /** Writes attempt outcomes (batched). */
  completions: CompletionWriter;
}

/**
 * "lost_claim": the lease had passed to another claim before the outcome was written;
 * "unrecorded": the attempt was made but its outcome could not be written: the job stays claimed
 * until its lease expires and is then attempted again (never re-sent at once in a tight loop).
 */
export type DeliveryResult = "delivered" | "retry" | "failed" | "held" | "released" | "lost_claim" | "unrecorded";

interface Attempt {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  retryAfter: string | string[] | undefined;
}

const isOk = (status: number | undefined) => status !== undefined && status >= 200 && status < 300;

async function send(
  deps: DeliveryDeps,
  req: { url: string; body: string; headers: Record<string, string>; timeoutMs: number },
  signal: AbortSignal,
): Promise<Attempt | "aborted"> {
  try {
    const res = await deps.http.post({ ...req, signal });
    const ok = isOk(res.statusCode);
    return {
      ok,
      statusCode: res.statusCode,
      durationMs: res.durationMs,
      error: ok ? null : `HTTP ${res.statusCode}`,
      retryAfter: res.headers["retry-after"],
    };
  } catch (err) {
    if (signal.aborted) return "aborted";
    if (!(err instanceof DeliveryError)) throw err;
    // A 2xx whose body is too large to read was still accepted by the receiver.
    if (err.kind === "response_too_large" && isOk(err.statusCode)) {
      return { ok: true, statusCode: err.statusCode ?? null, durationMs: err.durationMs, error: null, retryAfter: undefined };
    }
    const what = err.kind === "timeout" ? `no response within ${req.timeoutMs} ms` : err.message;
    return {
      ok: false,
      statusCode: err.statusCode ?? null,
      durationMs: err.durationMs,
      error: `${err.kind}: ${what}`.slice(0, 500),
      retryAfter: err.headers?.["retry-after"],
    };
  }
}

/**
 * Runs one claimed job. `answered` is called once the HTTP attempt is over (the worker frees its
 * concurrency slot then; recording the outcome needs no HTTP slot).
 */
export async function deliverJob(
  deps: DeliveryDeps,
  job: ClaimedJob,
  batch: BatchContext,
  signal: AbortSignal,
  answered: () => void = () => undefined,
): Promise<DeliveryResult> {
  const endpoint = batch.endpoints.get(job.endpointId);
  const event = batch.events.get(job.eventId);
  const start = deps.clock.now();
  const decision = endpoint ? canAttempt(endpoint.breaker, start) : "no";
  if (!endpoint || !event || !endpoint.verified || decision === "no") {
    // Deleted, unverified (url changed), disabled or held since the claim: the job waits, untouched.
    await releaseJob(deps.sql, job);
    return "released";
  }
  const tunables = endpoint.tunables;
  if (decision === "trial" && !(await claimTrial(deps.prisma, endpoint.id, start, tunables))) {
    await releaseJob(deps.sql, job); // held while open: no attempt, nothing counted, nothing dropped
    return "held";
  }
  const key = currentSigningKey(deps.secretBox, endpoint.secrets);
  if (!key) throw new Error(`webhook endpoint ${endpoint.id} has no signing secret`);

  const body = JSON.stringify(event.payload);
  const signed = signPayload({ secret: key.secret, timestamp: start, rawBody: body, kid: key.kid });
  const deliveryId = randomUUID();
  const idempotencyKey = `${event.type}:${event.id}`;
  const standard = standardWebhooksHeaders({
    id: idempotencyKey,
    timestamp: start,
    rawBody: body,
    secrets: validSecrets(deps.secretBox, endpoint.secrets, start),
  });
  const timeoutMs = tunables.attemptTimeoutMs; // the worker renews the lease meanwhile (leases.ts)
  const result = await send(
    deps,
    {
      url: endpoint.url,
      body,
      timeoutMs,
      headers: {
        "content-type": "application/json",
        "x-service-signature": signed.header,
        "x-service-timestamp": signed.timestampIso,
        "x-service-event": event.type,
        "x-service-delivery-id": deliveryId,
        "x-service-idempotency-key": idempotencyKey,
        ...standard,
      },
    },
    signal,
  );
  answered();
  if (result === "aborted") {
    await releaseJob(deps.sql, job); // worker stopping: give the job back for another worker
    return "released";
  }

  const attempt = job.attempts + 1;
  const done = deps.clock.now();
  let outcome: JobOutcome;
  if (result.ok) {
    outcome = { status: "succeeded", nextAttemptAt: done, lastError: null };
  } else if (attempt >= tunables.maxAttempts) {
    outcome = { status: "failed", nextAttemptAt: done, lastError: result.error };
  } else {
    const backoff = retryDelayMs(attempt, tunables.backoffBaseMs, deps.random);
    const honoured =
      result.statusCode === 429 || result.statusCode === 503 ? parseRetryAfter(result.retryAfter, done, tunables.breakerCooldownMs) : null;
    outcome = { status: "pending", nextAttemptAt: new Date(done.getTime() + Math.max(backoff, honoured ?? 0)), lastError: result.error };
  }

  const record = {
    deliveryId,
    eventType: event.type,
    idempotencyKey,
    attempt,
    statusCode: result.statusCode,
    durationMs: result.durationMs,
    error: result.error,
    at: start,
  };
  const clean = endpoint.breaker.state === "active" && endpoint.breaker.consecutiveFailures === 0;
  let kept: boolean;
  try {
    // The endpoint's new state (circuit open, disabled on 410) is written BEFORE the job is released:
    // released first, another worker could claim and send it again in between.
    if (!result.ok) await recordFailure(deps.prisma, endpoint.id, done, tunables, result.statusCode === 410);
    else if (!clean) await recordSuccess(deps.prisma, endpoint.id, done);
    kept = await deps.completions.complete(job, record, outcome);
  } catch (err) {
    deps.log.error({ err, jobId: job.id, endpointId: endpoint.id }, "webhook outcome not recorded; the job is retried after its lease");
    return "unrecorded";
  }
  if (!kept) return "lost_claim";
  return result.ok ? "delivered" : outcome.status === "failed" ? "failed" : "retry";
}
