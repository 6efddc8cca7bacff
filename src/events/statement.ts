// The domain's event-appending writes: each is ONE SQL statement calling a database function
// (prisma/sql) that locks the discussion row, changes the rows, appends
// the events with their seq and their webhook jobs, and returns the changed object with the events.
// The discussion lock is held for that one statement. After it commits, the events are published
// and the webhook worker is woken when jobs were queued. Under an Idempotency-Key the same statement
// records the function's result for the key (eng_idempotency_record), and a repeat of a request whose
// answer was lost gets that result back instead of writing again (src/idempotency/records.ts).
// A write runs on a tenant's plain SQL (src/db/tenant-store.ts): the tenant's id is `$1`, bound by the
// store, never passed by the caller, and each statement text (the write, the write recording its
// result, the write claiming its key) passes the tenant guard before it first runs. Feature code calls
// it as `store(ctx).write("eng_…", args)` (src/context/request.ts). The one write that crosses
// tenants (auto-close's eng_auto_lock_discussions) is `writeAcrossTenants`, for engines only.
// A function's arguments come by name, typed by its generated signature (src/generated/db-functions.ts);
// what it answers is declared in src/events/write-results.ts.
import type { Sql } from "../db/sql.js";
import { ACROSS_TENANTS } from "../db/tenant-tables.js";
import { tenantSql, type TenantSql } from "../db/tenant-store.js";
import { DB_FUNCTION_ARGS, jsonText, type DbArgs, type DbFunctionName } from "../generated/db-functions.js";
import { isKeyTaken, type IdempotencyScope, type PendingClaim } from "../idempotency/records.js";
import type { Metrics } from "../lib/metrics.js";
import { databaseRefusal, errors } from "../lib/errors.js";
import { keyGate } from "../lib/key-gate.js";
import type { EventPipeline } from "./pipeline.js";
import type { Audience, StoredEvent } from "./types.js";
import { WRITE_ROWS, type AppendedEvent, type WriteFunction, type WriteResult, type WriteRow } from "./write-results.js";

export interface StatementServices {
  sql: Sql;
  events: EventPipeline;
  metrics?: Pick<Metrics, "eventsAppended">;
}

/** What a write needs after its commit: the event pipeline and the metrics. */
export type WritePipeline = Pick<StatementServices, "events" | "metrics">;

/** The arguments of a database function by name, in its definition's order: the statement's parameters. */
export function positionalArgs<F extends DbFunctionName>(fn: F, args: DbArgs<F>): unknown[] {
  const names = DB_FUNCTION_ARGS[fn] as readonly (keyof DbArgs<F>)[];
  const values = new Array<unknown>(names.length);
  for (let i = 0; i < names.length; i++) values[i] = args[names[i]!];
  return values;
}

/**
 * The write functions that cross tenants (ACROSS_TENANTS, src/db/tenant-tables.ts): run by engines
 * only (`writeAcrossTenants`), never through a tenant's store.
 */
export type AcrossTenantsWrite = "eng_auto_lock_discussions";
/** The write functions of one tenant: the tenant's id is their first argument, bound by the store as `$1`. */
export type TenantWrite = Exclude<WriteFunction, AcrossTenantsWrite>;
/** A tenant write's arguments by name, the tenant's id left out: the store binds it. */
export type TenantWriteArgs<F extends TenantWrite> = Omit<DbArgs<F>, "tenant">;

for (const fn of Object.keys(WRITE_ROWS) as WriteFunction[]) {
  // the store's `$1` is the first argument: a function whose tenant is elsewhere cannot be a tenant write
  const tenantFirst = DB_FUNCTION_ARGS[fn][0] === "tenant";
  if (tenantFirst === ACROSS_TENANTS.has(fn)) throw new Error(`${fn}: a tenant write takes the tenant's id first, and only it`);
}

/** A tenant write's arguments after the tenant's id, in order: `$2`, `$3`, … (the store puts the tenant's id first). */
function argsAfterTenant<F extends TenantWrite>(fn: F, args: TenantWriteArgs<F>): unknown[] {
  const names = DB_FUNCTION_ARGS[fn] as readonly (keyof TenantWriteArgs<F>)[];
  const values = new Array<unknown>(names.length - 1);
  for (let i = 1; i < names.length; i++) values[i - 1] = args[names[i]!];
  return values;
}

const call = (fn: DbFunctionName) => `${fn}(${DB_FUNCTION_ARGS[fn].map((_, i) => `$${i + 1}`).join(", ")})`;
const texts = (build: (fn: WriteFunction, n: number) => string) =>
  Object.fromEntries((Object.keys(WRITE_ROWS) as WriteFunction[]).map((fn) => [fn, build(fn, DB_FUNCTION_ARGS[fn].length)])) as Record<
    WriteFunction,
    string
  >;

/** The plain statement of each write function. */
export const WRITE_TEXT = texts((fn) => `SELECT ${call(fn)} AS r`);

/** The same call, its result recorded for the key (the tenant's `$1`) in the same statement (the write runs first). */
const RECORDED_TEXT = texts(
  (fn, n) => `SELECT eng_idempotency_record($1, $${n + 1}, $${n + 2}, w.r::json) AS r
       FROM (SELECT ${call(fn)} AS r OFFSET 0) w`,
);

/**
 * The same call claiming a key not yet claimed (`IdempotencyScope.pending`): the key's row is
 * inserted with the result, so claim, write and record are one statement. A key already there
 * (another run of the request, an answer kept, an expired key) fails the insert and the statement
 * with it: nothing is written, and the key is then claimed the usual way.
 */
const CLAIMING_TEXT = texts(
  (fn, n) => `WITH w AS MATERIALIZED (SELECT ${call(fn)} AS r),
       k AS (INSERT INTO idempotency_keys (tenant_id, key, owner, fingerprint, locked_until, results, created_at, expires_at)
             SELECT $1, $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, jsonb_build_array(w.r::jsonb), $${n + 5}, $${n + 6} FROM w
             RETURNING 1)
     SELECT w.r FROM w, k`,
);

/**
 * Claims a pending key the usual way (after its write's statement found it taken, or before a
 * write that is not one statement): on "run" the
 * request goes on as its owner (with what an earlier run recorded, if any); otherwise its answer is
 * that claim's (the HTTP layer reads `superseded`) and this throws.
 */
export async function claimPendingKey(scope: IdempotencyScope, pending: PendingClaim): Promise<void> {
  const claim = await pending.claim();
  if (claim.kind !== "run") {
    scope.superseded = claim;
    throw errors.idempotencyInProgress(1);
  }
  scope.owner = claim.scope.owner;
  scope.replay = claim.scope.replay;
  scope.writes = 0;
}

/**
 * Writes in flight at once per (tenant, second argument: the discussion, comment or reader the
 * function locks) in this process. The rest wait here, not on the row's lock in PostgreSQL: on one
 * hot discussion 50 posts at once then cost the database about what 2 do (`npm run bench`, post-hot).
 * Two, not one, so the next statement is already at the lock when the one holding it commits.
 */
export const WRITES_IN_FLIGHT_PER_ROW = 2;
/** How long a write waits for its turn (a statement's own limit, DATABASE_TIMEOUT_MS, is 4 s by default): then 503. */
const ROW_TURN_WAIT_MS = 4_000;
const rowGate = keyGate(WRITES_IN_FLIGHT_PER_ROW, ROW_TURN_WAIT_MS);

/** Writes of this process waiting for their turn on a row now. */
export const writesWaitingForRow = (): number => rowGate.waiting();

/**
 * Runs one tenant write function on the tenant's plain SQL (`sql.tenantId` is `$1`) with its other
 * arguments by name; returns its `row`. Under `scope` (the request's Idempotency-Key) the same
 * statement records its result for the key. Events are published after the commit. Feature code
 * calls it through `store(ctx).write` (src/context/request.ts).
 */
export async function runWrite<F extends TenantWrite>(
  app: WritePipeline,
  sql: TenantSql,
  scope: IdempotencyScope | undefined,
  fn: F,
  args: TenantWriteArgs<F>,
): Promise<WriteRow<F>> {
  const values = argsAfterTenant(fn, args);
  const gate = `${sql.tenantId}\u0000${String(values[0])}`;
  let result: WriteResult<F>;
  if (scope && scope.tenantId !== sql.tenantId) throw new Error("an Idempotency-Key of another tenant than the write's");
  const pending = scope?.pending;
  if (scope && pending) {
    scope.pending = undefined;
    // not locked: the request's one write is done when this commits, and its recorded result is
    // its outcome — a repeat rebuilds the answer from it at once (Idempotent-Replayed), so no
    // second statement keeps the answer
    const claiming = values.concat(scope.key, scope.owner, pending.fingerprint, pending.createdAt, pending.createdAt, pending.expiresAt);
    try {
      const rows = await rowGate(gate, () => sql.query<{ r: WriteResult<F> }>(CLAIMING_TEXT[fn], claiming, `${fn}_claiming`));
      result = resultOf(rows[0]!.r);
      scope.writes++;
      scope.outcomeRecorded = true;
      afterCommit(app, result.events);
      return result.row;
    } catch (err) {
      if (!isKeyTaken(err)) throw databaseRefusal(err) ?? err;
    }
    await claimPendingKey(scope, pending);
  }
  if (scope && scope.writes < scope.replay.length) {
    // this request ran before and committed this write, but its answer was lost: the same result,
    // published again (streams drop a seq they have already sent)
    result = scope.replay[scope.writes++] as WriteResult<F>;
    afterCommit(app, result.events);
    return result.row;
  }
  try {
    const rows = await rowGate(gate, () =>
      scope
        ? sql.query<{ r: WriteResult<F> }>(RECORDED_TEXT[fn], values.concat(scope.key, scope.owner), `${fn}_recorded`)
        : sql.query<{ r: WriteResult<F> }>(WRITE_TEXT[fn], values, fn),
    );
    result = resultOf(rows[0]!.r);
  } catch (err) {
    throw databaseRefusal(err) ?? err;
  }
  if (scope) scope.writes++;
  afterCommit(app, result.events);
  return result.row;
}

/**
 * Runs a write that crosses tenants (auto-close's pass over every tenant's discussions) on the app's
 * raw SQL: for engines only (src/modules/discussions/engine/auto-close.ts), never a request's.
 */
export async function writeAcrossTenants<F extends AcrossTenantsWrite>(
  app: StatementServices,
  fn: F,
  args: DbArgs<F>,
): Promise<WriteRow<F>> {
  let result: WriteResult<F>;
  try {
    const rows = await app.sql.query<{ r: WriteResult<F> }>(WRITE_TEXT[fn], positionalArgs(fn, args), fn);
    result = resultOf(rows[0]!.r);
  } catch (err) {
    throw databaseRefusal(err) ?? err;
  }
  afterCommit(app, result.events);
  return result.row;
}

/**
 * A write's result as its statement answers it: json, which the driver parses, or the JSON text a
 * function answers without building json (eng_post_comment), parsed here once.
 */
function resultOf<T>(r: T | string): T {
  return typeof r === "string" ? (JSON.parse(r) as T) : r;
}

const APPEND_TEXT = `SELECT ${call("eng_append_event")} AS r`;

/** Appends one event as the write functions do (tests and tools), on the tenant's plain SQL; returns it. */
export async function appendEvent(
  app: StatementServices,
  e: { tenantId: string; discussionId: string; type: string; audience?: Audience; readerId?: string | null; data: unknown; at: Date },
): Promise<StoredEvent> {
  const [, ...rest] = positionalArgs("eng_append_event", {
    tenant: e.tenantId,
    discussion: e.discussionId,
    type: e.type,
    audience: e.audience ?? "all",
    reader: e.readerId ?? null,
    data: jsonText(e.data),
    at: e.at,
  });
  const rows = await tenantSql(app.sql, e.tenantId).query<{ r: AppendedEvent }>(APPEND_TEXT, rest, "eng_append_event");
  const appended = rows[0]!.r;
  afterCommit(app, [appended]);
  return toStored(appended);
}

const toStored = (a: AppendedEvent): StoredEvent => ({ envelope: a.envelope, audience: a.audience, readerId: a.readerId });

function afterCommit(app: WritePipeline, appended: AppendedEvent[]): void {
  if (!appended.length) return;
  app.metrics?.eventsAppended.inc(appended.length);
  app.events.publish(appended.map(toStored));
  if (appended.some((a) => a.jobs > 0)) app.events.jobsQueued();
}
