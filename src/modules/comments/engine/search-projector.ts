// The search projector: comment search's documents (comment_search, src/modules/comments/search.ts)
// kept as a projection of the event log, off the write path. It follows each discussion's events by
// seq from the discussion's row of search_positions, as a stream follows them (seq order is commit
// order, and every event up to the discussion's head has committed); each step is one call of
// eng_search_project (prisma/sql/72-search.sql, two statements) over a batch of discussions: their
// position rows locked in one order, the comments their new events name made into documents from their
// rows, the positions moved on. Steps start at most every STEP_INTERVAL_MS, so a burst of writes is
// projected in few steps. Any number of instances run it; a discussion's row lock makes each
// event applied once, whichever takes it. A discussion whose events the log no longer holds (its
// retention dropped their days while the projector was behind) has its documents made again from its
// comments (eng_search_rebuild).
// What to project: the discussions of the events this instance committed, handed over by the event
// pipeline after the commit (src/events/pipeline.ts), so a new comment is found within milliseconds;
// and a sweep for the discussions whose head is past their position (the events of an instance that
// stopped before projecting them, of an instance that runs no projector, of a step that failed):
// every pollMs (SEARCH_POLL_MS) the next SWEEP_DISCUSSIONS discussions in key order, round and round,
// so a sweep's cost is bounded whatever the number of discussions (every one is looked at once in
// discussions / SWEEP_DISCUSSIONS × pollMs); all of them at start. One instance sweeps at a time (a
// transaction-scoped advisory lock: a sweep elsewhere at the same moment reads nothing).
// Under engine/: a step crosses tenants (a batch holds any tenant's discussions), so it runs on the
// app's raw SQL.
import type { Logger } from "pino";
import type { Sql } from "../../../db/sql.js";
import type { SearchProjection } from "../../../context/services.js";
import type { Metrics } from "../../../lib/metrics.js";

/** discussions one step takes */
const STEP_DISCUSSIONS = 100;
/** events one step applies at most of a discussion (what is left goes in the next): a step stays well within a statement's limit */
const STEP_EVENTS = 200;
/**
 * the least time from one step's start to the next's: a step costs the database about the same over
 * one discussion's one event as over a hundred discussions' dozens (two statements), so under a burst
 * of writes the events of this window go in one step (npm run bench: the hot rows), while the first
 * event after a quiet spell is projected at once
 */
const STEP_INTERVAL_MS = 25;
/** the limit of a discussion's documents made again whole (its events gone from the log): a statement of its own */
const REBUILD_TIMEOUT_MS = 10 * 60_000;
/** discussions one sweep looks at (the next ones in key order) */
const SWEEP_DISCUSSIONS = 10_000;
/** after a failed step, the wait before its discussions are tried again */
const RETRY_MS = 1_000;
/** the sweeps' advisory lock: one instance sweeps at a time */
const SWEEP_LOCK_ID = 3_918_445_101;

const STEP = "SELECT eng_search_project($1::text[], $2::text[], $3::int) AS r";
const REBUILD = "SELECT eng_search_rebuild($1, $2::text[]) AS n";
/**
 * The next discussions in key order after ($2, $3), each with whether its head is past its position
 * (one without a position row has none: 0); with $1, only while no other instance sweeps (else none:
 * the lock is asked once, before any row is read).
 */
const SWEEP = `SELECT d.tenant_id AS "tenantId", d.id AS "discussionId", d.seq > COALESCE(p.seq, 0) AS behind
  FROM discussions d
  LEFT JOIN search_positions p ON p.tenant_id = d.tenant_id AND p.discussion_id = d.id
                              AND (p.tenant_id, p.discussion_id) > ($2::text, $3::text)
 WHERE (SELECT CASE WHEN $1::boolean THEN pg_try_advisory_xact_lock(${SWEEP_LOCK_ID}::bigint) ELSE true END)
   AND (d.tenant_id, d.id) > ($2::text, $3::text)
 ORDER BY d.tenant_id, d.id
 LIMIT ${SWEEP_DISCUSSIONS}`;

export interface DiscussionKey {
  tenantId: string;
  discussionId: string;
}

export interface SearchProjector extends SearchProjection {
  /** Follows the log from now on: the sweep at once, then every pollMs, and the pipeline's discussions. */
  start(): void;
  /** Stops following; a step under way ends first. */
  stop(): Promise<void>;
  /** A sweep and the steps it needs, now, whether or not the projector runs (the CLI, tests): the events passed. */
  catchUp(): Promise<number>;
  /** events this projector has passed (applied, or passed over as naming no comment) */
  readonly projected: number;
}

export interface SearchProjectorDeps {
  sql: Sql;
  log: Logger;
  metrics: Pick<Metrics, "searchProjected" | "searchProjectionLag">;
}

const keyOf = (k: DiscussionKey) => `${k.tenantId} ${k.discussionId}`;

export function createSearchProjector(deps: SearchProjectorDeps, opts: { pollMs: number }): SearchProjector {
  const pending = new Map<string, DiscussionKey>();
  let started = false;
  /** stop() was called: no drain begins after it */
  let stopping = false;
  let projected = 0;
  let timer: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  /** the drain under way: it answers whether it emptied `pending` (false: a step failed) */
  let running: Promise<boolean> | null = null;
  /** when the last step started (Date.now()) */
  let lastStep = 0;
  /** callers of `passed`, told when a drain ends */
  let waiters: (() => void)[] = [];

  async function step(keys: DiscussionKey[]): Promise<void> {
    const rows = await deps.sql.query<{ r: { events: number; more: [string, string][]; gaps: [string, string][]; lags: number[] } }>(
      STEP,
      [keys.map((k) => k.tenantId), keys.map((k) => k.discussionId), STEP_EVENTS],
      "eng_search_project",
    );
    const { events, more, gaps, lags } = rows[0]!.r;
    projected += events;
    if (events > 0) deps.metrics.searchProjected.inc(events);
    for (const lag of lags) deps.metrics.searchProjectionLag.observe(Math.max(0, lag));
    for (const [tenantId, discussionId] of more) pending.set(keyOf({ tenantId, discussionId }), { tenantId, discussionId });
    // discussions whose events the log no longer holds: their documents made again from their comments
    const byTenant = new Map<string, string[]>();
    for (const [tenantId, discussionId] of gaps) byTenant.set(tenantId, [...(byTenant.get(tenantId) ?? []), discussionId]);
    for (const [tenantId, discussions] of byTenant) {
      deps.log.info({ tenantId, discussions: discussions.length }, "search projection: events no longer in the log, documents made again");
      await deps.sql.long(REBUILD, [tenantId, discussions], REBUILD_TIMEOUT_MS);
    }
  }

  /** Steps until nothing is pending; a failed step's discussions are tried again after RETRY_MS (or by the next sweep). */
  async function drain(): Promise<boolean> {
    try {
      while (pending.size > 0) {
        const wait = lastStep + STEP_INTERVAL_MS - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        lastStep = Date.now();
        const keys = [...pending.values()].slice(0, STEP_DISCUSSIONS);
        for (const k of keys) pending.delete(keyOf(k));
        try {
          await step(keys);
        } catch (err) {
          deps.log.warn({ err, discussions: keys.length }, "search projection step failed; its discussions are tried again");
          for (const k of keys) pending.set(keyOf(k), k);
          if (started) {
            clearTimeout(retry);
            retry = setTimeout(() => void settle(), RETRY_MS);
            retry.unref();
          }
          return false;
        }
      }
      return true;
    } finally {
      const told = waiters;
      waiters = [];
      for (const w of told) w();
    }
  }

  /** Drains until nothing is pending (one drain at a time; a nudge during one is taken by it or the next). */
  async function settle(): Promise<void> {
    for (;;) {
      if (running) {
        await running;
        continue;
      }
      if (pending.size === 0 || stopping) return;
      running = drain().finally(() => (running = null));
      if (!(await running)) return;
    }
  }

  /** where the sweep goes on from: the last discussion it looked at (the start: before every key) */
  let sweptTo: [string, string] = ["", ""];

  /**
   * The next SWEEP_DISCUSSIONS discussions looked at, and the steps those behind need; `alone`: only
   * while no other instance sweeps. Answers whether it came to the last discussion (the next starts over).
   */
  async function sweepNext(alone: boolean): Promise<boolean> {
    const rows = await deps.sql.query<DiscussionKey & { behind: boolean }>(SWEEP, [alone, ...sweptTo], "search_sweep");
    for (const k of rows) if (k.behind) pending.set(keyOf(k), { tenantId: k.tenantId, discussionId: k.discussionId });
    await settle();
    const last = rows.at(-1);
    const ended = rows.length < SWEEP_DISCUSSIONS;
    sweptTo = ended || !last ? ["", ""] : [last.tenantId, last.discussionId];
    return ended;
  }

  /** Every discussion looked at, from the first (at start, the CLI, tests). */
  async function sweepAll(alone: boolean): Promise<void> {
    sweptTo = ["", ""];
    while (!(await sweepNext(alone)));
  }

  let swept = false;
  const tick = () => {
    timer = undefined;
    (swept ? sweepNext(true) : sweepAll(true).then(() => void (swept = true)))
      .catch((err: unknown) => deps.log.warn({ err }, "search projection sweep failed"))
      .finally(() => {
        if (started) {
          timer = setTimeout(tick, opts.pollMs);
          timer.unref();
        }
      });
  };

  return {
    get projected() {
      return projected;
    },
    nudge(keys) {
      if (!started) return;
      for (const k of keys) pending.set(keyOf(k), { tenantId: k.tenantId, discussionId: k.discussionId });
      if (pending.size > 0) void settle().catch((err: unknown) => deps.log.warn({ err }, "search projection failed"));
    },
    passed(ms) {
      return new Promise((resolve) => {
        const t = setTimeout(resolve, ms);
        if (started) {
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        }
      });
    },
    start() {
      if (started) return;
      started = true;
      stopping = false;
      timer = setTimeout(tick, 0);
      timer.unref();
    },
    async stop() {
      started = false;
      stopping = true;
      clearTimeout(timer);
      clearTimeout(retry);
      timer = undefined;
      while (running) await running;
    },
    async catchUp() {
      const before = projected;
      await sweepAll(false);
      return projected - before;
    },
  };
}
