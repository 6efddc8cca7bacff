// The domain's event-appending writes: each is ONE SQL statement calling a database function
// (prisma/functions.sql) that locks the discussion row, changes the rows, appends
// the events with their seq and their webhook jobs, and returns the changed object with the events.
// The discussion lock is held for that one statement. After it commits, the events are published
// and the webhook worker is woken when jobs were queued. Under an Idempotency-Key the same statement
// records the function's result for the key (eng_idempotency_record), and a repeat of a request whose
// answer was lost gets that result back instead of writing again (src/idempotency/records.ts).
import type { Sql } from "../db/sql.js";
import { isKeyTaken, type IdempotencyScope, type PendingClaim } from "../idempotency/records.js";
import type { Metrics } from "../lib/metrics.js";
import { databaseRefusal, errors } from "../lib/errors.js";
import { keyGate } from "../lib/key-gate.js";
import type { EventPipeline } from "./pipeline.js";
import type { Audience, EventEnvelope, StoredEvent } from "./types.js";

export interface StatementServices {
  sql: Sql;
  events: EventPipeline;
  metrics?: Pick<Metrics, "eventsAppended">;
}

interface AppendedEvent {
  envelope: EventEnvelope;
  audience: Audience;
  readerId: string | null;
  jobs: number;
}

/** The write functions and how many arguments each takes. */
export const WRITE_FUNCTIONS = {
  eng_post_comment: 12,
  eng_edit_comment: 9,
  eng_delete_comment: 5,
  eng_set_comment_status: 4,
  eng_set_comment_pinned: 4,
  eng_toggle_reaction: 8,
  eng_set_discussion_state: 5,
  eng_report_comment: 11,
  eng_ban_reader: 8,
  eng_erase_reader_batch: 7,
  eng_append_event: 7,
} as const;
export type WriteFunction = keyof typeof WRITE_FUNCTIONS;

const TEXT = Object.fromEntries(
  Object.entries(WRITE_FUNCTIONS).map(([fn, n]) => [
    fn,
    `SELECT ${fn}(${Array.from({ length: n }, (_, i) => `$${i + 1}`).join(", ")}) AS r`,
  ]),
) as Record<WriteFunction, string>;

/** Who writes: the app's services, and the request's Idempotency-Key when it carries one. */
export interface WriteCaller {
  app: StatementServices;
  idempotency?: IdempotencyScope | undefined;
}

/** The same call, its result recorded for the key in the same statement (the write runs first). */
const RECORDED_TEXT = Object.fromEntries(
  Object.entries(WRITE_FUNCTIONS).map(([fn, n]) => [
    fn,
    `SELECT eng_idempotency_record($${n + 1}, $${n + 2}, $${n + 3}, w.r) AS r
       FROM (SELECT ${fn}(${Array.from({ length: n }, (_, i) => `$${i + 1}`).join(", ")}) AS r OFFSET 0) w`,
  ]),
) as Record<WriteFunction, string>;

/**
 * The same call claiming a key not yet claimed (`IdempotencyScope.pending`): the key's row is
 * inserted with the result, so claim, write and record are one statement. A key already there
 * (another run of the request, an answer kept, an expired key) fails the insert and the statement
 * with it: nothing is written, and the key is then claimed the usual way.
 */
const CLAIMING_TEXT = Object.fromEntries(
  Object.entries(WRITE_FUNCTIONS).map(([fn, n]) => [
    fn,
    `WITH w AS MATERIALIZED (SELECT ${fn}(${Array.from({ length: n }, (_, i) => `$${i + 1}`).join(", ")}) AS r),
       k AS (INSERT INTO idempotency_keys (tenant_id, key, owner, fingerprint, locked_until, results, created_at, expires_at)
             SELECT $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, jsonb_build_array(w.r::jsonb), $${n + 6}, $${n + 7} FROM w
             RETURNING 1)
     SELECT w.r FROM w, k`,
  ]),
) as Record<WriteFunction, string>;

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

/** Runs one write function; returns its `row`. Events are published after the commit. */
export async function runWrite<Row>(caller: WriteCaller, fn: WriteFunction, args: unknown[]): Promise<Row> {
  const { app, idempotency: scope } = caller;
  if (args.length !== WRITE_FUNCTIONS[fn]) throw new Error(`${fn} takes ${WRITE_FUNCTIONS[fn]} arguments`);
  let result: { row: Row; events: AppendedEvent[] };
  const pending = scope?.pending;
  if (scope && pending) {
    scope.pending = undefined;
    const claimArgs = [
      scope.tenantId,
      scope.key,
      scope.owner,
      pending.fingerprint,
      pending.lockedUntil,
      pending.createdAt,
      pending.expiresAt,
    ];
    try {
      const rows = await rowGate(gateKey(args), () =>
        app.sql.query<{ r: typeof result }>(CLAIMING_TEXT[fn], [...args, ...claimArgs], `${fn}_claiming`),
      );
      result = rows[0]!.r;
      scope.writes++;
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
    result = scope.replay[scope.writes++] as typeof result;
    afterCommit(app, result.events);
    return result.row;
  }
  try {
    const rows = await rowGate(gateKey(args), () =>
      scope
        ? app.sql.query<{ r: typeof result }>(RECORDED_TEXT[fn], [...args, scope.tenantId, scope.key, scope.owner], `${fn}_recorded`)
        : app.sql.query<{ r: typeof result }>(TEXT[fn], args, fn),
    );
    result = rows[0]!.r;
  } catch (err) {
    throw databaseRefusal(err) ?? err;
  }
  if (scope) scope.writes++;
  afterCommit(app, result.events);
  return result.row;
}

const gateKey = (args: unknown[]) => `${String(args[0])}\u0000${String(args[1])}`;

/** Appends one event as the write functions do (tests and tools); returns it. */
export async function appendEvent(
  app: StatementServices,
  e: { tenantId: string; discussionId: string; type: string; audience?: Audience; readerId?: string | null; data: unknown; at: Date },
): Promise<StoredEvent> {
  const rows = await app.sql.query<{ r: AppendedEvent }>(
    TEXT.eng_append_event,
    [e.tenantId, e.discussionId, e.type, e.audience ?? "all", e.readerId ?? null, JSON.stringify(e.data), e.at],
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
