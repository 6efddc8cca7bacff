/**
 * The delivery worker: claims due jobs (jobs.ts), runs up to `concurrency` deliveries at once
 * (deliver.ts) and sleeps until nudged (a local commit created jobs), a slot frees up while it is
 * saturated, or `pollIntervalMs` passes (retries coming due, jobs created by other instances).
 * Any number of workers may run against one database (see jobs.ts for why claims never collide).
 * The same worker sends the queue's other kind of job, the chat alerts (composers.ts).
 *
 * Time comes from the injected clock; `runOnce()` processes everything due now and returns, so
 * tests can drive a worker step by step with a manual clock.
 *
 * It crosses tenants: it is no tenant's request, and it claims whatever jobs are due, of every
 * tenant, on the app's raw SQL (a job carries its tenant, whose settings and endpoint it reads).
 */
import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import type { SecretBox } from "../lib/secret-box.js";
import type { Sql } from "../db/sql.js";
import { createCompletionWriter } from "./completions.js";
import { deliverJob, type DeliveryResult } from "./deliver.js";
import type { WebhookHttpClient } from "./http-client.js";
import { batchContext } from "./job-context.js";
import { claimJobs, releaseJob, type ClaimedRow, type JobKind } from "./jobs.js";
import { createLeaseKeeper } from "./leases.js";
import { createSlots } from "./slots.js";
import type { MessageComposers } from "./composers.js";

export interface WorkerOptions {
  /**
   * HTTP attempts in flight at once. Default 64. A slot frees as soon as the receiver has answered;
   * recording the outcome continues in the background (at most 4 × concurrency outcomes pending).
   */
  concurrency: number;
  /** Most jobs taken per claim. Default 64. */
  batchSize: number;
  /**
   * Fairness: at most this many attempts in flight at once for one endpoint (default 16) and for one
   * tenant (default 32) in this worker, so an endpoint that never answers, or a tenant with a
   * backlog, cannot take every slot from the others. The worker holds up to three times as many
   * claimed jobs again, ready to start when a slot frees (slots.ts); a failed attempt gives its
   * endpoint's ready jobs back.
   */
  maxPerEndpoint: number;
  maxPerTenant: number;
  /** Longest sleep between claims when nothing nudges the worker. Default 250 ms. */
  pollIntervalMs: number;
  /**
   * How long a claim holds a job without renewal: a crashed worker's jobs come back after at most
   * this. A live worker renews the lease of every job it holds every `renewEveryMs` (leases.ts), so
   * an attempt may run its whole attemptTimeoutMs (up to 60 s) under a shorter lease. Default 10 s.
   */
  leaseMs: number;
  /** How often held leases are renewed. Default a third of leaseMs. */
  renewEveryMs?: number;
  /** On stop, how long in-flight attempts may finish before they are aborted and given back. Default 10 s. */
  stopGraceMs: number;
  /** Shown in `locked_by` for operators. Default host:pid:random. */
  workerId: string;
  /** Jitter source for backoff. */
  random: () => number;
  /** The kinds of job this worker claims (default every kind): a kind with a pool of its own is left to that pool's worker. */
  kinds?: readonly JobKind[];
}

export const DEFAULT_WORKER_OPTIONS: Omit<WorkerOptions, "workerId"> = {
  concurrency: 64,
  batchSize: 64,
  maxPerEndpoint: 16,
  maxPerTenant: 32,
  pollIntervalMs: 250,
  leaseMs: 10_000,
  stopGraceMs: 10_000,
  random: Math.random,
};

export interface WorkerDeps {
  /** told of every delivery's result and how long it took (metrics) */
  onResult?: (result: DeliveryResult, seconds: number) => void;
  prisma: PrismaClient;
  /** plain SQL on the same pool (the hot statements: claims, outcomes, lease renewals) */
  sql: Sql;
  clock: Clock;
  log: Logger;
  http: WebhookHttpClient;
  secretBox: SecretBox;
  /** what composes the jobs of each other kind (composers.ts): the chat alerts' */
  composers: MessageComposers;
}

export interface WebhookWorker {
  readonly id: string;
  readonly running: boolean;
  start(): void;
  stop(): Promise<void>;
  /** New jobs may be due: claim now instead of at the next poll. */
  nudge(): void;
  /** Processes every job due now (in batches) and waits for them; returns how many were claimed. */
  runOnce(): Promise<number>;
}

/**
 * Claimed jobs a worker may hold per slot (in flight + ready). One claim runs at a time and takes
 * what has room when it starts; while it runs (tens of ms on a loaded database) the ready jobs keep
 * the slots busy, so they must cover a claim's round trip at the endpoint's pace: with 16 slots and
 * 64 held, a 25 ms claim keeps up with about 1,000 deliveries/s (with 32 held, about 300/s).
 */
const HOLD_FACTOR = 4;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function createWebhookWorker(deps: WorkerDeps, options: Partial<WorkerOptions> = {}): WebhookWorker {
  const o: WorkerOptions = {
    ...DEFAULT_WORKER_OPTIONS,
    workerId: `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`,
    ...options,
  };
  const debug = deps.log.isLevelEnabled("debug");
  const deliveryDeps = {
    ...deps,
    random: o.random,
    completions: createCompletionWriter(deps.sql),
    nudge: () => nudge(),
  };
  const leases = createLeaseKeeper({
    sql: deps.sql,
    clock: deps.clock,
    leaseMs: o.leaseMs,
    everyMs: o.renewEveryMs ?? Math.max(10, Math.floor(o.leaseMs / 3)),
    onError: (err) => deps.log.warn({ err }, "webhook worker could not renew its leases"),
  });
  /**
   * Attempts in flight are capped by concurrency / maxPerEndpoint / maxPerTenant; the worker holds up
   * to HOLD_FACTOR times as many claimed jobs, the rest ready to start the moment a slot frees
   * (slots.ts). Claims count what is held against these caps.
   */
  const slots = createSlots(o);
  const maxHeld = HOLD_FACTOR * o.concurrency;
  const endpointHeldCap = HOLD_FACTOR * o.maxPerEndpoint;
  const tenantHeldCap = HOLD_FACTOR * o.maxPerTenant;
  /** While saturated, claim again only once this many jobs may be held again (not one claim per finished job). */
  const refillAt = Math.max(1, Math.floor(Math.min(o.concurrency, o.batchSize) / 4));
  /**
   * The same for an endpoint (or tenant) that was held back by its fairness cap: when it may hold
   * this many more jobs, claim at once rather than at the next poll. Without this, one endpoint's
   * backlog drains at its cap per poll interval.
   */
  const endpointRefill = Math.max(1, Math.floor(o.maxPerEndpoint / 4));
  const tenantRefill = Math.max(1, Math.floor(o.maxPerTenant / 4));
  /** the last claim left due jobs behind because of a fairness cap (not because none were due) */
  let capLimited = false;
  /** an endpoint / tenant that was at its cap has enough room again to be worth a claim */
  const endpointHasRoom = (id: string) => (slots.heldEndpoints.get(id) ?? 0) <= endpointHeldCap - endpointRefill;
  const tenantHasRoom = (id: string) => (slots.heldTenants.get(id) ?? 0) <= tenantHeldCap - tenantRefill;
  /** every claimed job until its outcome is recorded (stop() waits for these) */
  const inflight = new Set<Promise<void>>();
  const shift = (m: Map<string, number>, k: string, d: number) => m.set(k, (m.get(k) ?? 0) + d);
  let abort = new AbortController();
  setMaxListeners(0, abort.signal);
  let running = false;
  let loopDone: Promise<void> = Promise.resolve();
  let wakeRequested = false;
  let wake: (() => void) | null = null;
  let waitingForSlot = false;

  function nudge(): void {
    wakeRequested = true;
    wake?.();
  }

  function waitForWake(ms: number): Promise<void> {
    if (wakeRequested) {
      wakeRequested = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wake = null;
        wakeRequested = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      wake = done;
    });
  }

  /** How many more jobs may be held, or 0 while too many outcomes wait to be recorded (backpressure from the database). */
  function canClaim(): number {
    if (inflight.size - slots.held() >= 4 * o.concurrency) return 0;
    return maxHeld - slots.held();
  }

  function claim(
    limit: number,
    endpoints: ReadonlyMap<string, number> = slots.heldEndpoints,
    tenants: ReadonlyMap<string, number> = slots.heldTenants,
  ): Promise<ClaimedRow[]> {
    const now = deps.clock.now();
    return claimJobs(deps.sql, {
      now,
      leaseUntil: new Date(now.getTime() + o.leaseMs),
      limit,
      workerId: o.workerId,
      maxPerEndpoint: endpointHeldCap,
      maxPerTenant: tenantHeldCap,
      busyEndpoints: endpoints,
      busyTenants: tenants,
      ...(o.kinds ? { kinds: o.kinds } : {}),
    });
  }

  /**
   * Starts the jobs' deliveries as slots allow (the others wait, ready, in `slots`); each one is
   * tracked in `inflight` until it has been recorded.
   */
  function dispatch(rows: ClaimedRow[]): Promise<void>[] {
    const { jobs, context } = batchContext(rows);
    const signal = abort.signal;
    return jobs.map((job) => {
      leases.hold(job.id, job.claimToken);
      const turn = slots.take(job);
      let slotHeld = true;
      let started = false;
      const freeSlot = () => {
        if (!slotHeld) return;
        slotHeld = false;
        slots.done(job, started);
        if (waitingForSlot) {
          if (canClaim() >= refillAt) nudge();
        } else if (capLimited && (endpointHasRoom(job.endpointId) || tenantHasRoom(job.tenantId))) {
          nudge(); // this endpoint (or tenant) has room again and may have more due
        }
      };
      const p: Promise<void> = (async () => {
        try {
          started = await turn;
          if (!started) {
            // given back unstarted (the worker is stopping, or its endpoint just failed: a new claim
            // reads the endpoint's state again)
            await releaseJob(deps.sql, job);
            deps.onResult?.("released", 0);
            return;
          }
          const t0 = performance.now();
          const result: DeliveryResult = await deliverJob(deliveryDeps, job, context, signal, freeSlot);
          if (result !== "delivered") slots.cancelReady(job.endpointId);
          deps.onResult?.(result, (performance.now() - t0) / 1000);
          if (debug) deps.log.debug({ jobId: job.id, endpointId: job.endpointId, result }, "webhook job done");
        } catch (err) {
          deps.log.error({ err, jobId: job.id, endpointId: job.endpointId }, "webhook delivery failed unexpectedly");
          await releaseJob(deps.sql, job).catch(() => undefined); // else the lease brings it back
        }
      })().finally(() => {
        inflight.delete(p);
        leases.release(job.id);
        freeSlot();
        if (waitingForSlot && canClaim() >= refillAt) nudge();
      });
      inflight.add(p);
      return p;
    });
  }

  async function loop(): Promise<void> {
    let errorBackoffMs = 0;
    while (running) {
      const free = canClaim();
      waitingForSlot = free < refillAt;
      if (waitingForSlot) {
        await waitForWake(o.pollIntervalMs);
        continue;
      }
      const limit = Math.min(free, o.batchSize);
      // what the claim sees as held (slots keep freeing while it runs)
      const epAtClaim = new Map(slots.heldEndpoints);
      const tAtClaim = new Map(slots.heldTenants);
      let jobs: ClaimedRow[];
      try {
        capLimited = false;
        jobs = await claim(limit, epAtClaim, tAtClaim);
        errorBackoffMs = 0;
      } catch (err) {
        if (!running) break;
        errorBackoffMs = Math.min(5_000, Math.max(100, errorBackoffMs * 2));
        deps.log.warn({ err, retryInMs: errorBackoffMs }, "webhook worker could not claim jobs");
        await sleep(errorBackoffMs);
        continue;
      }
      if (jobs.length) void dispatch(jobs); // tracked in `inflight` until recorded
      if (jobs.length === limit) continue; // a full batch: more are probably due
      // A short batch may still have left due jobs behind: those of an endpoint or tenant that the
      // claim counted at its cap. Their freed slots wake the loop (freeSlot) instead of the poll.
      for (const j of jobs) {
        if (j.endpointId !== null) shift(epAtClaim, j.endpointId, 1); // an alert has no endpoint cap in the claim
        shift(tAtClaim, j.tenantId, 1);
      }
      const cappedEndpoints = [...epAtClaim].filter(([, n]) => n >= endpointHeldCap).map(([k]) => k);
      const cappedTenants = [...tAtClaim].filter(([, n]) => n >= tenantHeldCap).map(([k]) => k);
      capLimited = cappedEndpoints.length > 0 || cappedTenants.length > 0;
      // a capped endpoint's slots that came back while the claim ran did not wake the loop: claim now
      if (cappedEndpoints.some(endpointHasRoom) || cappedTenants.some(tenantHasRoom)) continue;
      await waitForWake(o.pollIntervalMs);
    }
  }

  const worker: WebhookWorker = {
    id: o.workerId,
    get running() {
      return running;
    },
    start() {
      if (running) return;
      running = true;
      abort = new AbortController();
      setMaxListeners(0, abort.signal); // one listener per attempt in flight
      loopDone = loop();
    },
    async stop() {
      running = false;
      nudge();
      await loopDone;
      slots.cancelReady(); // not started: given back at once
      if (inflight.size) {
        const grace = new Promise<void>((r) => setTimeout(r, o.stopGraceMs).unref());
        await Promise.race([Promise.allSettled([...inflight]), grace]);
      }
      abort.abort(); // attempts still running are cut and their jobs given back
      await Promise.allSettled([...inflight]);
      leases.stop();
    },
    nudge,
    async runOnce() {
      if (!running && abort.signal.aborted) {
        abort = new AbortController(); // stopped before: attempts must not start aborted
        setMaxListeners(0, abort.signal);
      }
      let claimed = 0;
      for (let round = 0; round < 100; round++) {
        const jobs = await claim(o.batchSize);
        if (!jobs.length) break;
        claimed += jobs.length;
        await Promise.all(dispatch(jobs));
      }
      return claimed;
    },
  };
  return worker;
}
