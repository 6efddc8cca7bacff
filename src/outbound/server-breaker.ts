// A breaker per remote server, shared by every tenant whose jobs reach it: the fediverse's domains
// (federation_domains: src/modules/federation/engine/delivery.ts) and the SMTP servers (smtp_servers:
// src/modules/email/engine/sender.ts). Attempts that could not reach the server, or that it turned
// away whole, are counted in a row; at `threshold` of them the circuit opens for `cooldownMinMs`, and
// at each further threshold's worth again, each time twice as long (at most `cooldownMaxMs`); its
// jobs wait meanwhile without counting an attempt (the composer answers `defer`). One attempt it
// answers closes it. Tables of no tenant (src/db/tenant-guard.ts), read and written by engine code only.
// Each process reads a server's row at most once a `readMs` (a burst to one server reads it once, not
// once a delivery): an outcome here updates what it knows at once, another instance's reaches it
// within that time; an answer from a server it knows closed (no failure counted) writes nothing.
import type { Sql } from "../db/sql.js";

/** The breakers' tables and the column that names a server in each. */
const TABLES = { federation_domains: "domain", smtp_servers: "server" } as const;
export type ServerBreakerTable = keyof typeof TABLES;

export interface ServerBreakerState {
  /** while the circuit is open: when its jobs may be tried again */
  until: Date | null;
  /** failed attempts in a row */
  failures: number;
}

export interface ServerBreakerRules {
  threshold: number;
  cooldownMinMs: number;
  cooldownMaxMs: number;
}

export const SERVER_BREAKER_RULES: Readonly<ServerBreakerRules> = Object.freeze({
  threshold: 10,
  cooldownMinMs: 60_000,
  cooldownMaxMs: 3_600_000,
});

/** How long a server's breaker, as read or as last settled here, is taken as it is. */
export const BREAKER_READ_MS = 1_000;
/** servers whose breaker a process keeps (the least recently read go first) */
const KEPT_MAX = 10_000;

export interface ServerBreaker {
  /** The server's breaker at `now` (the worker's clock), as read within BREAKER_READ_MS. */
  state(server: string, now: Date): Promise<ServerBreakerState>;
  /** An attempt's outcome: `healthy` (answered) closes the circuit and clears the count; else it is counted. */
  settle(server: string, healthy: boolean, now: Date): Promise<void>;
}

export function createServerBreaker(sql: Sql, table: ServerBreakerTable, rules: ServerBreakerRules = SERVER_BREAKER_RULES): ServerBreaker {
  const column = TABLES[table];
  const kept = new Map<string, ServerBreakerState & { at: number }>();
  const known = (server: string, now: Date) => {
    const k = kept.get(server);
    return k && Math.abs(now.getTime() - k.at) < BREAKER_READ_MS ? k : undefined;
  };
  const keep = (server: string, state: ServerBreakerState, now: Date) => {
    kept.delete(server);
    if (kept.size >= KEPT_MAX) kept.delete(kept.keys().next().value as string);
    kept.set(server, { ...state, at: now.getTime() });
  };
  const read = `SELECT circuit_open_until AS until, consecutive_failures AS failures FROM ${table} WHERE ${column} = $1`;
  const closed = `UPDATE ${table} SET consecutive_failures = 0, circuit_open_until = NULL, updated_at = $2::timestamptz
                   WHERE ${column} = $1 AND consecutive_failures > 0`;
  const failed = `INSERT INTO ${table} AS s (${column}, consecutive_failures, updated_at) VALUES ($1, 1, $2::timestamptz)
     ON CONFLICT (${column}) DO UPDATE SET consecutive_failures = s.consecutive_failures + 1, updated_at = EXCLUDED.updated_at,
       circuit_open_until = CASE WHEN (s.consecutive_failures + 1) % $3::int = 0
         THEN $2::timestamptz + make_interval(secs => LEAST($5::float8, $4::float8 * power(2, (s.consecutive_failures + 1) / $3::int - 1)) / 1000)
         ELSE s.circuit_open_until END
     RETURNING circuit_open_until AS until, consecutive_failures AS failures`;
  return {
    async state(server, now) {
      const k = known(server, now);
      if (k) return { until: k.until, failures: k.failures };
      const [row] = await sql.query<ServerBreakerState>(read, [server], `${table}_breaker_state`);
      const state = { until: row?.until ?? null, failures: row?.failures ?? 0 };
      keep(server, state, now);
      return state;
    },
    async settle(server, healthy, now) {
      if (healthy) {
        if (known(server, now)?.failures === 0) return;
        await sql.query(closed, [server, now], `${table}_breaker_closed`);
        keep(server, { until: null, failures: 0 }, now);
        return;
      }
      const [row] = await sql.query<ServerBreakerState>(
        failed,
        [server, now, rules.threshold, rules.cooldownMinMs, rules.cooldownMaxMs],
        `${table}_breaker_failed`,
      );
      if (row) keep(server, row, now);
      else kept.delete(server);
    },
  };
}
