// Reads of the event log by seq: the current head of a discussion, events after a seq (catch-up
// after a missed bus message), and the replay window after a Last-Event-ID (contract section 4).
// These are system reads across the request boundary, so every query names the tenant itself.
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Sql } from "../db/sql.js";
import { ENVELOPE_TEXT, envelopeOf } from "./stored-envelope.js";
import type { Audience, StoredEvent } from "./types.js";

export interface ReplayWindow {
  /** at most this many of the newest events are kept for replay */
  maxEvents: number;
  /** and only those younger than this */
  maxAgeSeconds: number;
}

export interface ReplayResult {
  events: StoredEvent[];
  /** the requested id is older than what the window keeps: some events were skipped */
  truncated: boolean;
}

export interface DiscussionKey {
  tenantId: string;
  discussionId: string;
}

export interface EventLogReader {
  /** The discussion's last seq (every event up to it has committed), or null when it does not exist. */
  head(tenantId: string, discussionId: string): Promise<number | null>;
  /** Events with seq > afterSeq in seq order, at most `limit`. */
  after(tenantId: string, discussionId: string, afterSeq: number, limit: number): Promise<StoredEvent[]>;
  /** The events a client that last saw `after` missed, up to `head`, within the window. */
  replay(key: DiscussionKey, after: number, head: number, window: ReplayWindow, now: Date): Promise<ReplayResult>;
  /** Heads of many discussions in one query (missing ones are left out). */
  heads(keys: DiscussionKey[]): Promise<Map<string, number>>;
  /**
   * The first read of a stream on a discussion this instance has no channel for, in one statement:
   * its head (null when it does not exist) and, when `after` is given, the replay up to that head.
   */
  opening(key: DiscussionKey, after: number | null, window: ReplayWindow, now: Date): Promise<OpeningRead>;
}

export interface OpeningRead extends ReplayResult {
  head: number | null;
}

/** A discussion's key in maps (neither a tenant id nor a discussion id can hold a space). */
export const headKey = (tenantId: string, discussionId: string): string => `${tenantId} ${discussionId}`;

const EVENT_COLUMNS = { seq: true, envelope: true, payload: true, audience: true, readerId: true, occurredAt: true } as const;

/** The replay range as plain SQL (a named prepared statement): a reconnect storm runs it often. */
const REPLAY_RANGE = `SELECT seq, ${ENVELOPE_TEXT} AS envelope, audience, reader_id AS "readerId", occurred_at AS "occurredAt"
  FROM events WHERE tenant_id = $1 AND discussion_id = $2 AND seq > $3 AND seq <= $4 ORDER BY seq`;
const HEAD = `SELECT seq FROM discussions WHERE tenant_id = $1 AND id = $2`;
/** The head and the replay window after $3 (null: none) of at most $4 events, in one statement. */
const OPENING = `SELECT d.seq AS head, e.seq, e.envelope, e.audience, e.reader_id AS "readerId", e.occurred_at AS "occurredAt"
  FROM discussions d
  LEFT JOIN LATERAL (
    SELECT seq, ${ENVELOPE_TEXT} AS envelope, audience, reader_id, occurred_at FROM events
     WHERE tenant_id = d.tenant_id AND discussion_id = d.id AND seq > GREATEST($3::int, d.seq - $4::int) AND seq <= d.seq
  ) e ON $3::int IS NOT NULL
 WHERE d.tenant_id = $1 AND d.id = $2
 ORDER BY e.seq`;

interface EventRow {
  seq: number;
  envelope: string;
  audience: string;
  readerId: string | null;
  occurredAt: Date;
}

/**
 * The replay window applied to the rows of (max(after, head − maxEvents), head]: from the first one
 * younger than maxAgeSeconds on (occurredAt comes from each writer's clock, so it is only roughly
 * ordered by seq: cut once). Truncated when the first kept event is not the one right after `after`.
 */
function windowed(rows: EventRow[], after: number, head: number, window: ReplayWindow, now: Date): ReplayResult {
  if (after >= head) return { events: [], truncated: false };
  const cutoff = now.getTime() - window.maxAgeSeconds * 1000;
  const start = rows.findIndex((r) => r.occurredAt.getTime() >= cutoff);
  const kept = start < 0 ? [] : rows.slice(start);
  const first = kept[0]?.seq;
  return { events: kept.map(storedEventFromRow), truncated: first === undefined || first > after + 1 };
}

/**
 * One read of the log as a statement and what its rows become: what the reader runs, and what a
 * statement with more in it embeds (a ticket's redemption, src/stream-engine/ticket-redemption.ts).
 */
export interface LogRead<T> {
  text: string;
  values: unknown[];
  /** the prepared statement's name */
  name: string;
  result(rows: Record<string, unknown>[]): T;
}

/** The head and the replay window after `after` (null: none) in one statement; null head: no such discussion. */
export function openingRead(
  { tenantId, discussionId }: DiscussionKey,
  after: number | null,
  window: ReplayWindow,
  now: Date,
): LogRead<OpeningRead> {
  return {
    text: OPENING,
    values: [tenantId, discussionId, after, window.maxEvents],
    name: "stream_opening",
    result(rows) {
      const head = (rows[0]?.head as number | null | undefined) ?? null;
      if (head === null || after === null) return { head, events: [], truncated: false };
      const events = (rows as unknown as ({ seq: number | null } & EventRow)[]).filter((r) => r.seq !== null);
      return { head, ...windowed(events, after, head, window, now) };
    },
  };
}

/** The events after `after` up to `head` within the window; a result without a read when none can be in it. */
export function replayRead(
  { tenantId, discussionId }: DiscussionKey,
  after: number,
  head: number,
  window: ReplayWindow,
  now: Date,
): LogRead<ReplayResult> | ReplayResult {
  if (after >= head) return { events: [], truncated: false };
  // the newest maxEvents events, then the age cut
  const lower = Math.max(after, head - window.maxEvents);
  const result = (rows: Record<string, unknown>[]) => windowed(rows as unknown as EventRow[], after, head, window, now);
  if (lower >= head) return result([]);
  return { text: REPLAY_RANGE, values: [tenantId, discussionId, lower, head], name: "stream_replay", result };
}

export const isRead = <T>(r: LogRead<T> | T): r is LogRead<T> =>
  typeof r === "object" && r !== null && typeof (r as Partial<LogRead<T>>).text === "string";

/** Runs the read, or hands back the result that needed none. */
export async function runRead<T>(sql: Sql, read: LogRead<T> | T): Promise<T> {
  if (!isRead(read)) return read;
  return read.result(await sql.query<Record<string, unknown>>(read.text, read.values, read.name));
}

export function createEventLogReader(prisma: PrismaClient, sql: Sql): EventLogReader {
  return {
    async head(tenantId, discussionId) {
      const [d] = await sql.query<{ seq: number }>(HEAD, [tenantId, discussionId], "stream_head");
      return d ? d.seq : null;
    },

    async after(tenantId, discussionId, afterSeq, limit) {
      const rows = await prisma.event.findMany({
        where: { tenantId, discussionId, seq: { gt: afterSeq } },
        orderBy: { seq: "asc" },
        take: limit,
        select: EVENT_COLUMNS,
      });
      return rows.map(storedEventFromRow);
    },

    replay: (key, after, head, window, now) => runRead(sql, replayRead(key, after, head, window, now)),

    opening: (key, after, window, now) => runRead(sql, openingRead(key, after, window, now)),

    async heads(keys) {
      const out = new Map<string, number>();
      if (keys.length === 0) return out;
      const tenants = keys.map((k) => k.tenantId);
      const ids = keys.map((k) => k.discussionId);
      const rows = await prisma.$queryRaw<{ tenant_id: string; id: string; seq: number }[]>`
        SELECT d.tenant_id, d.id, d.seq
        FROM discussions d
        JOIN unnest(${tenants}::text[], ${ids}::text[]) AS k(tenant_id, id)
          ON d.tenant_id = k.tenant_id AND d.id = k.id`;
      for (const r of rows) out.set(headKey(r.tenant_id, r.id), Number(r.seq));
      return out;
    },
  };
}

function storedEventFromRow(row: { envelope: string | null; payload?: unknown; audience: string; readerId: string | null }): StoredEvent {
  return { envelope: envelopeOf(row), audience: row.audience as Audience, readerId: row.readerId };
}

/**
 * Identical replays share one read: after a deploy, thousands of clients of one discussion reconnect
 * with the same Last-Event-ID within a few seconds (a reconnect storm), and each would otherwise
 * read the same rows. A read is shared while it is in flight and for `keepMs` after it finished
 * (events up to `head` never change; the age window moves by at most `keepMs`). Keyed by discussion,
 * range and window; times come from the `now` each caller passes (the injectable clock).
 */
export function coalescingReplays(reader: EventLogReader, opts: { keepMs?: number; maxKept?: number } = {}): EventLogReader {
  const keepMs = opts.keepMs ?? 1_000;
  const maxKept = opts.maxKept ?? 10_000;
  interface Shared {
    result: Promise<ReplayResult>;
    /** when the read was asked for (the caller's clock) */
    readAt: number;
    done: boolean;
  }
  const shared = new Map<string, Shared>();
  const fresh = (e: Shared, at: number) => !e.done || at - e.readAt < keepMs;
  return {
    ...reader,
    replay(key, after, head, window, now) {
      const id = `${headKey(key.tenantId, key.discussionId)} ${after} ${head} ${window.maxEvents} ${window.maxAgeSeconds}`;
      const at = now.getTime();
      const hit = shared.get(id);
      if (hit && fresh(hit, at)) return hit.result;
      if (shared.size >= maxKept) for (const [k, e] of shared) if (!fresh(e, at)) shared.delete(k);
      const entry: Shared = { result: reader.replay(key, after, head, window, now), readAt: at, done: false };
      entry.result.then(
        () => void (entry.done = true),
        () => void (shared.get(id) === entry && shared.delete(id)), // a failed read is not kept
      );
      if (shared.size < maxKept) shared.set(id, entry);
      return entry.result;
    },
  };
}
