// An installation's event log that is still one populated table becomes the partitioned log online
// (docs/scaling.md, "Partitioning an existing log"): run by src/db/migrate.ts just before the migration
// that partitions the log, on the direct connection, while the running instances keep writing.
//
//  1. the webhook jobs' foreign key to events goes (a short lock);
//  2. CREATE INDEX CONCURRENTLY the keys the partition needs, a unique (id, occurred_at) and
//     (tenant_id, discussion_id, seq): writers go on while they are built;
//  3. a CHECK (occurred_at < boundary) added NOT VALID (a short lock), then VALIDATEd (a scan under
//     SHARE UPDATE EXCLUSIVE: reads and writes go on). The boundary is a UTC midnight at least two days
//     ahead, so that every row written until the switch still satisfies it;
//  4. the switch, in one transaction (eng_partition_event_log): the table is renamed events_legacy,
//     the partitioned events is created and events_legacy attached as its partition of everything
//     before the boundary. The validated CHECK and the matching indexes make that catalogue work only:
//     no scan, no index build, milliseconds.
// Every step that takes a lock waits for it at most LOCK_TIMEOUT_MS (under PostgreSQL's 1 s
// deadlock_timeout, so that a writer is never the one a deadlock check aborts) and is tried again
// after a pause: a long transaction on events delays the switch instead of queueing every writer
// behind it. Nothing is copied, so no event can be lost or doubled; each step can be run again.
import type pg from "pg";

/** The migration this runs before (prisma/migrations/<name>). */
export const EVENT_LOG_PARTITION_MIGRATION = "20261126065000_events_partitioned_by_day";

const LOCK_TIMEOUT_MS = 500;
const DAYS_AHEAD = 7;

export type PartitioningStep = "foreign-key" | "indexes" | "check" | "validated" | "switched";

export interface OnlinePartitioningOptions {
  /** told after each step (the test pauses there to write and read in between) */
  onStep?: (step: PartitioningStep) => Promise<void> | void;
  /** a lock not had within the timeout: how many tries (default 120) and the pause between them */
  attempts?: number;
  pauseMs?: number;
  log?: (msg: string) => void;
}

/** Whether the log is one populated table (a new or an empty one is replaced by the migration itself). */
export async function needsOnlinePartitioning(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ kind: string | null }>(
    "SELECT (SELECT relkind::text FROM pg_class WHERE oid = to_regclass('public.events')) AS kind",
  );
  if (rows[0]?.kind !== "r") return false;
  const { rows: any } = await client.query<{ any: boolean }>("SELECT EXISTS (SELECT 1 FROM events) AS any");
  return any[0]?.any === true;
}

const isLockTimeout = (err: unknown) => (err as { code?: string }).code === "55P03";

export async function partitionEventLogOnline(client: pg.Client, opts: OnlinePartitioningOptions = {}): Promise<void> {
  const attempts = opts.attempts ?? 120;
  const pauseMs = opts.pauseMs ?? 250;
  const log = opts.log ?? (() => undefined);
  /** One transaction that takes locks, with the lock timeout, tried again while a lock is not had. */
  const briefly = async (what: string, statements: string[]) => {
    for (let i = 1; ; i++) {
      try {
        await client.query("BEGIN");
        await client.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
        for (const s of statements) await client.query(s);
        await client.query("COMMIT");
        return;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        if (!isLockTimeout(err) || i >= attempts) throw err;
        log(`event log partitioning: ${what} waits for a lock (try ${i})`);
        await new Promise((ok) => setTimeout(ok, pauseMs));
      }
    }
  };
  const step = async (s: PartitioningStep) => {
    log(`event log partitioning: ${s}`);
    await opts.onStep?.(s);
  };

  const { rows: fk } = await client.query("SELECT 1 FROM pg_constraint WHERE conname = 'webhook_deliveries_event_id_fkey'");
  if (fk.length)
    await briefly("dropping the foreign key", [
      "ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_event_id_fkey",
    ]);
  await step("foreign-key");

  // an index a killed CREATE INDEX CONCURRENTLY left invalid is built again
  for (const [name, definition] of [
    ["events_legacy_key", "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS events_legacy_key ON events (id, occurred_at)"],
    ["events_legacy_seq_idx", "CREATE INDEX CONCURRENTLY IF NOT EXISTS events_legacy_seq_idx ON events (tenant_id, discussion_id, seq)"],
  ] as const) {
    const { rows } = await client.query<{ valid: boolean }>("SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)", [
      `public.${name}`,
    ]);
    if (rows[0] && !rows[0].valid) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    await client.query(definition);
  }
  await step("indexes");

  // the boundary: a validated CHECK's from an earlier run if still two days ahead, else a new one
  const { rows: checks } = await client.query<{ bound: Date | null; valid: boolean; ahead: boolean }>(
    `SELECT b.bound, c.convalidated AS valid, b.bound >= now() + interval '2 days' AS ahead
       FROM pg_constraint c
      CROSS JOIN LATERAL (SELECT (regexp_match(pg_get_constraintdef(c.oid), '''([^'']+)'''))[1]::timestamptz AS bound) b
      WHERE c.conrelid = 'public.events'::regclass AND c.conname = 'events_legacy_range'`,
  );
  const kept = checks[0]?.ahead === true ? checks[0] : undefined;
  if (!kept) {
    const { rows } = await client.query<{ bound: string }>(
      // three days past the later of now and the newest row (a row dated ahead, by a clock or a test's, still fits)
      "SELECT ((date_trunc('day', GREATEST(now(), (SELECT max(occurred_at) FROM events)) AT TIME ZONE 'UTC') + interval '3 days') AT TIME ZONE 'UTC')::text AS bound",
    );
    const bound = rows[0]!.bound;
    await briefly("adding the CHECK", [
      "ALTER TABLE events DROP CONSTRAINT IF EXISTS events_legacy_range",
      `ALTER TABLE events ADD CONSTRAINT events_legacy_range CHECK (occurred_at < '${bound}'::timestamptz) NOT VALID`,
    ]);
  }
  await step("check");
  if (!kept?.valid) await client.query("ALTER TABLE events VALIDATE CONSTRAINT events_legacy_range");
  await step("validated");

  await briefly("switching", ["SELECT eng_partition_event_log()", `SELECT eng_event_partitions_ahead(now(), ${DAYS_AHEAD})`]);
  await step("switched");
}
