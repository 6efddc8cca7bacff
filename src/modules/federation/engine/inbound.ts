// Inbound activities queued (contract section 28): the inbox (../http-routes.ts) verifies an
// activity's signature, stores it here as a job of the durable delivery queue (webhook_deliveries,
// kind `activitypub_inbound`) and answers 202; the outbound worker (src/outbound/) claims the
// job with a lease and the composer below applies it through the inbox's listeners (inbox.ts), by
// handing Fedify the stored activity as the POST it was (Fedify, built to skip signatures, routes
// it, drops an id it has already applied to that inbox, and calls the listeners). A process that
// dies after the 202 leaves the row, which the lease gives to another worker; a listener that throws
// fails the attempt, retried with the site's `delivery` backoff. A replay (the same activity id to
// the same inbox) is not stored twice: the row's `inboundKey` is unique (the partial index
// webhook_deliveries_inbound_key), and once its row is gone Fedify's own record of the ids it
// applied (a day) still drops it.
import { randomUUID } from "node:crypto";
import type { Sql } from "../../../db/sql.js";
import type { Composed, MessageComposer } from "../../../outbound/composers.js";
import { enqueueMessages } from "../../../outbound/jobs.js";
import type { Federation } from "@fedify/fedify";
import type { FederationData } from "./context.js";

/** The row's message: the inbox it came to, the activity (without its Linked Data signature), who sent it. */
interface InboundJob {
  /** `<inbox URL> <activity id>`, unique among the stored ones (null: an activity without an id) */
  inboundKey: string | null;
  url: string;
  activity: Record<string, unknown>;
  /** the verified signing key's host: the worker's slots count it as the job's target */
  sender: string;
}

const isInboundJob = (v: unknown): v is InboundJob => {
  const j = v as Partial<InboundJob> | null;
  return typeof j?.url === "string" && typeof j.activity === "object" && j.activity !== null;
};

export interface InboundQueue {
  /**
   * Stores a verified activity that came to the inbox at `url` (the job counted to `tenantId`); false
   * when the same activity was already stored for that inbox (a replay). The worker is woken.
   */
  store(tenantId: string, url: URL, activity: Record<string, unknown>, sender: string): Promise<boolean>;
  /** A site holding a remote object (a Note, a Like) the activity names, or followed by an actor it names, else null: whom a shared inbox's activity concerns. */
  tenantHolding(activity: Record<string, unknown>): Promise<string | null>;
  /** The inbox's POSTs are counted while they run (`receiving`): the worker applies in the calm between them. */
  readonly pressure: InboxPressure;
}

/**
 * The inbox's requests come first: a burst of deliveries is answered before its activities are
 * applied, which compete with the inbox for the same thread and the same pool. Each activity the
 * worker applies waits, first, until no inbox request has run for CALM_MS, or for at most
 * MAX_YIELD_MS (so that a steady stream of deliveries still has them applied, MAX_YIELD_MS apart per
 * slot at worst).
 */
export interface InboxPressure {
  receiving<T>(work: () => Promise<T>): Promise<T>;
  calm(): Promise<void>;
}

const CALM_MS = 25;
const MAX_YIELD_MS = 1_000;

export function createInboxPressure(calmMs = CALM_MS, maxYieldMs = MAX_YIELD_MS): InboxPressure {
  let running = 0;
  let lastEnd = 0;
  let waiters: (() => void)[] = [];
  let timer: NodeJS.Timeout | undefined;
  const release = () => {
    timer = undefined;
    if (running > 0) return;
    const quietFor = performance.now() - lastEnd;
    if (quietFor < calmMs) {
      timer = setTimeout(release, calmMs - quietFor);
      return;
    }
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  };
  return {
    async receiving(work) {
      running++;
      try {
        return await work();
      } finally {
        running--;
        lastEnd = performance.now();
        if (running === 0 && waiters.length && !timer) timer = setTimeout(release, calmMs);
      }
    },
    calm() {
      if (running === 0 && performance.now() - lastEnd >= calmMs) return Promise.resolve();
      return new Promise<void>((resolve) => {
        let done = false;
        const go = () => {
          if (done) return;
          done = true;
          clearTimeout(cap);
          resolve();
        };
        const cap = setTimeout(() => {
          waiters = waiters.filter((w) => w !== go);
          go();
        }, maxYieldMs);
        waiters.push(go);
        if (running === 0 && !timer) timer = setTimeout(release, calmMs);
      });
    },
  };
}

/** The http(s) URLs an activity names (its ids, objects, replies' targets), at most `max`, a few levels down. */
function urlsIn(v: unknown, out: Set<string>, max = 50, depth = 0): Set<string> {
  if (out.size >= max || depth > 4) return out;
  if (typeof v === "string") {
    if (/^https?:\/\//.test(v) && v.length <= 2048) out.add(v);
  } else if (Array.isArray(v)) {
    for (const x of v.slice(0, max)) urlsIn(x, out, max, depth + 1);
  } else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) if (k !== "@context" && k !== "content" && k !== "contentMap") urlsIn(x, out, max, depth + 1);
  }
  return out;
}

/**
 * A site that holds a remote object (a Note, a Like) the activity names, else one its actor (or an
 * actor it names) follows; else null (cross-tenant: the shared inbox's).
 */
async function tenantHoldingAny(sql: Sql, activity: Record<string, unknown>): Promise<string | null> {
  const [row] = await sql.query<{ tenantId: string }>(
    `(SELECT tenant_id AS "tenantId" FROM federation_objects WHERE object_id = ANY($1::text[]) LIMIT 1)
     UNION ALL
     (SELECT tenant_id FROM federation_followers WHERE actor_id = ANY($1::text[]) LIMIT 1)
     LIMIT 1`,
    [[...urlsIn(activity, new Set())]],
  );
  return row?.tenantId ?? null;
}

/** The most activities one statement stores. */
const STORE_BATCH = 200;

/**
 * Activities are stored by group commit: one INSERT at a time, each taking every activity that came
 * while the one before ran (at most STORE_BATCH). Alone, an activity is stored at once; in a burst
 * the inbox spends one statement on many of them, not one (and a pooled connection) each.
 */
export function createInboundQueue(deps: { sql: Sql; nudge: () => void; now: () => Date }): InboundQueue {
  interface Waiting {
    id: string;
    tenantId: string;
    message: InboundJob;
    resolve: (stored: boolean) => void;
    reject: (err: unknown) => void;
  }
  let waiting: Waiting[] = [];
  let running = false;
  const flush = async () => {
    running = true;
    try {
      while (waiting.length) {
        const batch = waiting.slice(0, STORE_BATCH);
        waiting = waiting.slice(batch.length);
        try {
          const now = deps.now();
          const stored = await enqueueMessages(deps.sql, "activitypub_inbound", batch, now);
          if (stored.size) deps.nudge();
          for (const w of batch) w.resolve(stored.has(w.id));
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      running = false;
    }
  };
  return {
    store(tenantId, url, activity, sender) {
      const id = typeof activity.id === "string" ? activity.id : null;
      const message: InboundJob = { inboundKey: id === null ? null : `${url.href} ${id}`, url: url.href, activity, sender };
      return new Promise<boolean>((resolve, reject) => {
        waiting.push({ id: randomUUID(), tenantId, message, resolve, reject });
        if (!running) void flush();
      });
    },
    tenantHolding: (activity) => tenantHoldingAny(deps.sql, activity),
    pressure: createInboxPressure(),
  };
}

/**
 * How many inbound activities one process applies at once. Each takes several of the pool's
 * connections in turn (its actor's cached document, the comment's statement), and the inbox's own
 * requests wait for the same pool: a few at a time keep the inbox's answers quick under a burst
 * while the queue drains behind them.
 */
export const INBOUND_APPLY_CONCURRENCY = 4;

/** What applies a stored activity: the federation and its context data, and the inbox it yields to (the engine, engine.ts). */
interface Applier {
  federation: Federation<FederationData>;
  data: FederationData;
  inbound: Pick<InboundQueue, "pressure">;
}

/** The composer of `activitypub_inbound` jobs: applies the stored activity (src/outbound/composers.ts). */
export function createInboundComposer(deps: { engine: () => Applier | undefined; concurrency?: number }): MessageComposer {
  const limit = createSlots(deps.concurrency ?? INBOUND_APPLY_CONCURRENCY);
  return {
    async compose(job): Promise<Composed> {
      if (!isInboundJob(job.message)) return { drop: "not an inbound activity's row" };
      const engine = deps.engine();
      if (!engine) throw new Error("the federation is not built yet");
      return limit(async () => {
        await engine.inbound.pressure.calm();
        return apply(engine, job.message as InboundJob);
      });
    },
  };
}

/** One stored activity handed to Fedify as the POST it was. */
async function apply(engine: Applier, job: InboundJob): Promise<Composed> {
  const request = new Request(job.url, {
    method: "POST",
    headers: { "content-type": "application/activity+json" },
    body: JSON.stringify(job.activity),
  });
  const res = await engine.federation.fetch(request, {
    contextData: engine.data,
    onNotFound: () => new Response(null, { status: 404 }),
  });
  await res.body?.cancel();
  if (res.ok) return { done: "applied" };
  // the site stopped federating since: nothing to apply, as the inbox would now answer
  if (res.status === 404) return { done: "its inbox is no longer served" };
  if (res.status >= 500) throw new Error(`the inbox's listeners failed (HTTP ${res.status})`);
  return { drop: `Fedify refused the activity (HTTP ${res.status})` };
}

/** A limit of `n` calls at once (the others wait their turn, in order). */
function createSlots(n: number): <T>(work: () => Promise<T>) => Promise<T> {
  let busy = 0;
  const queue: (() => void)[] = [];
  return async (work) => {
    if (busy >= n) await new Promise<void>((resolve) => queue.push(resolve));
    else busy++;
    try {
      return await work();
    } finally {
      const next = queue.shift();
      if (next) next();
      else busy--;
    }
  };
}
