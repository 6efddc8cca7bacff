/**
 * One delivery attempt of a claimed job (API.md §0 "Delivery", "Signature", "Delivery rules"):
 * gate on the endpoint's breaker, sign the stored envelope, POST it, then record the attempt, the
 * job's next state (retry with backoff + jitter, Retry-After, or final) and the breaker outcome.
 * A job of another kind (a chat alert) has its request composed by its feature (composers.ts) and
 * goes through the same POST, next state and recording, without a breaker or a signature.
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
import { deferJob, releaseJob, splitJob, type ClaimedJob, type JobOutcome } from "./jobs.js";
import { currentSigningKey, validSecrets } from "./secrets.js";
import { signPayload, standardWebhooksHeaders } from "./signature.js";
import type { BatchContext } from "./job-context.js";
import type { Composed, MessageComposers } from "./composers.js";
import { resolveTunables, type DeliveryTunables } from "./tunables.js";

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
  /** what composes the request of each other kind of job (composers.ts) */
  composers: MessageComposers;
  /** wakes the worker: a job split into jobs due now */
  nudge?: () => void;
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
  if (job.kind !== "webhook") return deliverMessage(deps, job, batch, signal, answered);
  const endpoint = batch.endpoints.get(job.endpointId);
  const event = job.eventId === null ? undefined : batch.events.get(job.eventId);
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
  const outcome = nextState(result, attempt, tunables, done, deps.random);

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

/** The job's state after an attempt: done, failed for good (its last attempt), or due again after its backoff or Retry-After. */
function nextState(result: Attempt, attempt: number, tunables: DeliveryTunables, done: Date, random: () => number): JobOutcome {
  if (result.ok) return { status: "succeeded", nextAttemptAt: done, lastError: null };
  if (attempt >= tunables.maxAttempts) return { status: "failed", nextAttemptAt: done, lastError: result.error };
  const backoff = retryDelayMs(attempt, tunables.backoffBaseMs, random);
  const honoured =
    result.statusCode === 429 || result.statusCode === 503 ? parseRetryAfter(result.retryAfter, done, tunables.breakerCooldownMs) : null;
  return { status: "pending", nextAttemptAt: new Date(done.getTime() + Math.max(backoff, honoured ?? 0)), lastError: result.error };
}

/**
 * A job of another kind (an alert): its feature composes the request (composers.ts), which is sent,
 * retried and recorded as a webhook job's is, with the tenant's `delivery` settings (no endpoint
 * overrides, no breaker, no signature). A job whose feature says it sends nothing ends failed with
 * that reason, no request made. A request with a fallback (composers.ts) that is answered 400 or 401
 * is sent once more with the fallback's headers, in the same attempt.
 */
async function deliverMessage(
  deps: DeliveryDeps,
  job: ClaimedJob,
  batch: BatchContext,
  signal: AbortSignal,
  answered: () => void,
): Promise<DeliveryResult> {
  const snapshot = batch.messages.get(job.id);
  if (!snapshot || job.kind === "webhook") {
    await releaseJob(deps.sql, job);
    return "released";
  }
  const start = deps.clock.now();
  const tunables = { ...resolveTunables(snapshot.tenantSettings, null), ...deps.composers[job.kind].tunables };
  const failure = (error: string): Attempt => ({
    ok: false,
    statusCode: null,
    durationMs: 0,
    error: error.slice(0, 500),
    retryAfter: undefined,
  });
  let composed: Composed;
  try {
    composed = await deps.composers[job.kind].compose({ ...snapshot, attempts: job.attempts, claimToken: job.claimToken }, start);
  } catch (err) {
    // counted as a failed attempt: retried after its backoff like one
    deps.log.warn({ err, jobId: job.id, kind: job.kind }, "a delivery could not be composed");
    return record(deps, job, start, failure(`compose: ${err instanceof Error ? err.message : String(err)}`), tunables, answered);
  }
  if ("drop" in composed) return record(deps, job, start, failure(composed.drop), { ...tunables, maxAttempts: 1 }, answered);
  if ("fail" in composed) return record(deps, job, start, failure(composed.fail), tunables, answered);
  if ("defer" in composed) {
    answered();
    await deferJob(deps.sql, job, composed.defer);
    return "held";
  }
  if ("split" in composed) {
    answered();
    let made: number | null;
    try {
      made = await splitJob(deps.sql, job, composed.split, deps.clock.now());
    } catch (err) {
      deps.log.error({ err, jobId: job.id, kind: job.kind }, "a job's deliveries were not queued; it is retried after its lease");
      return "unrecorded";
    }
    if (made === null) return "lost_claim";
    if (made > 0) deps.nudge?.();
    return "delivered";
  }
  if ("done" in composed) {
    const durationMs = deps.clock.now().getTime() - start.getTime();
    return record(deps, job, start, { ok: true, statusCode: null, durationMs, error: null, retryAfter: undefined }, tunables, answered);
  }
  const post = (headers: Record<string, string> | undefined) =>
    send(
      deps,
      {
        url: composed.url,
        body: composed.body,
        timeoutMs: tunables.attemptTimeoutMs,
        headers: { "content-type": "application/json", ...headers },
      },
      signal,
    );
  let result = await post(composed.headers);
  // a double knock: the receiver refused the first signature, the same POST goes once more signed the other way
  const knocked = composed.fallback !== undefined && result !== "aborted" && (result.statusCode === 400 || result.statusCode === 401);
  if (knocked) result = await post(await composed.fallback!.headers());
  if (result === "aborted") {
    answered();
    await releaseJob(deps.sql, job);
    return "released";
  }
  const composer = deps.composers[job.kind];
  if (composer.settled) {
    await composer
      .settled({ ok: result.ok, statusCode: result.statusCode, url: composed.url, fallback: knocked }, deps.clock.now())
      .catch((err: unknown) =>
        deps.log.warn({ err, jobId: job.id, kind: job.kind }, "a delivery's outcome was not counted for its target"),
      );
  }
  return record(deps, job, start, result, tunables, answered);
}

/** Records another kind's attempt and the job's next state (its row keeps them: no attempt log). */
async function record(
  deps: DeliveryDeps,
  job: ClaimedJob,
  start: Date,
  result: Attempt,
  tunables: DeliveryTunables,
  answered: () => void,
): Promise<DeliveryResult> {
  answered();
  const attempt = job.attempts + 1;
  const outcome = nextState(result, attempt, tunables, deps.clock.now(), deps.random);
  const log = {
    deliveryId: randomUUID(),
    eventType: job.kind,
    idempotencyKey: `${job.kind}:${job.id}`,
    attempt,
    statusCode: result.statusCode,
    durationMs: result.durationMs,
    error: result.error,
    at: start,
  };
  let kept: boolean;
  try {
    kept = await deps.completions.complete(job, log, outcome);
  } catch (err) {
    deps.log.error({ err, jobId: job.id, kind: job.kind }, "delivery outcome not recorded; the job is retried after its lease");
    return "unrecorded";
  }
  if (!kept) return "lost_claim";
  return result.ok ? "delivered" : outcome.status === "failed" ? "failed" : "retry";
}
