// The domain's event-appending writes: each is ONE SQL statement calling a database function
// (prisma/sql) that locks the discussion row, changes the rows, appends
// the events with their seq and their webhook jobs, and returns the changed object with the events.
// The discussion lock is held for that one statement. After it commits, the events are published
// and the webhook worker is woken when jobs were queued. Under an Idempotency-Key the same statement
// records the function's result for the key (eng_idempotency_record), and a repeat of a request whose
// answer was lost gets that result back instead of writing again (src/idempotency/records.ts).
// A function's arguments come by name, typed by its generated signature (src/generated/db-functions.ts);
// what it answers is declared in src/events/write-results.ts.
import type { Sql } from "../db/sql.js";
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

/** The arguments of a database function by name, in its definition's order: the statement's parameters. */
export function positionalArgs<F extends DbFunctionName>(fn: F, args: DbArgs<F>): unknown[] {
  const names = DB_FUNCTION_ARGS[fn] as readonly (keyof DbArgs<F>)[];
  const values = new Array<unknown>(names.length);
  for (let i = 0; i < names.length; i++) values[i] = args[names[i]!];
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

/** Who writes: the app's services, and the request's Idempotency-Key when it carries one. */
export interface WriteCaller {
  app: StatementServices;
  idempotency?: IdempotencyScope | undefined;
}

/** The same call, its result recorded for the key in the same statement (the write runs first). */
const RECORDED_TEXT = texts(
  (fn, n) => `SELECT eng_idempotency_record($${n + 1}, $${n + 2}, $${n + 3}, w.r) AS r
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
             SELECT $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, jsonb_build_array(w.r::jsonb), $${n + 6}, $${n + 7} FROM w
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
 * Runs one write function with its arguments by name; returns its `row`. Events are published after
 * the commit.
 */
export async function runWrite<F extends WriteFunction>(caller: WriteCaller, fn: F, args: DbArgs<F>): Promise<WriteRow<F>> {
  const { app, idempotency: scope } = caller;
  const values = positionalArgs(fn, args);
  let result: WriteResult<F>;
  const pending = scope?.pending;
  if (scope && pending) {
    scope.pending = undefined;
    const claiming = values.concat(
      scope.tenantId,
      scope.key,
      scope.owner,
      pending.fingerprint,
      // not locked: the request's one write is done when this commits, and its recorded result is
      // its outcome — a repeat rebuilds the answer from it at once (Idempotent-Replayed), so no
      // second statement keeps the answer
      pending.createdAt,
      pending.createdAt,
      pending.expiresAt,
    );
    try {
      const rows = await rowGate(gateKey(values), () =>
        app.sql.query<{ r: WriteResult<F> }>(CLAIMING_TEXT[fn], claiming, `${fn}_claiming`),
      );
      result = rows[0]!.r;
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
    const rows = await rowGate(gateKey(values), () =>
      scope
        ? app.sql.query<{ r: WriteResult<F> }>(RECORDED_TEXT[fn], values.concat(scope.tenantId, scope.key, scope.owner), `${fn}_recorded`)
        : app.sql.query<{ r: WriteResult<F> }>(WRITE_TEXT[fn], values, fn),
    );
    result = rows[0]!.r;
  } catch (err) {
    throw databaseRefusal(err) ?? err;
  }
  if (scope) scope.writes++;
  afterCommit(app, result.events);
  return result.row;
}

/** The row a write locks: its tenant and its second argument (the discussion, comment or reader). */
const gateKey = (values: unknown[]) => `${String(values[0])}\u0000${String(values[1])}`;

const APPEND_TEXT = `SELECT ${call("eng_append_event")} AS r`;

/** Appends one event as the write functions do (tests and tools); returns it. */
export async function appendEvent(
  app: StatementServices,
  e: { tenantId: string; discussionId: string; type: string; audience?: Audience; readerId?: string | null; data: unknown; at: Date },
): Promise<StoredEvent> {
  const rows = await app.sql.query<{ r: AppendedEvent }>(
    APPEND_TEXT,
    positionalArgs("eng_append_event", {
      tenant: e.tenantId,
      discussion: e.discussionId,
      type: e.type,
      audience: e.audience ?? "all",
      reader: e.readerId ?? null,
      data: jsonText(e.data),
      at: e.at,
    }),
    "eng_append_event",
  );
  const appended = rows[0]!.r;
  afterCommit(app, [appended]);
  return toStored(appended);
}

const toStored = (a: AppendedEvent): StoredEvent => ({ envelope: a.envelope, audience: a.audience, readerId: a.readerId });

function afterCommit(app: StatementServices, appended: AppendedEvent[]): void {
  if (!appended.length) return;
  app.metrics?.eventsAppended.inc(appended.length);
  app.events.publish(appended.map(toStored));
  if (appended.some((a) => a.jobs > 0)) app.events.jobsQueued();
}
