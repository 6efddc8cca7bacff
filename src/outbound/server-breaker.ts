// A breaker per remote server, shared by every tenant whose jobs reach it: the fediverse's domains
// (federation_domains: src/modules/federation/engine/delivery.ts) and the SMTP servers (smtp_servers:
// src/modules/email/engine/sender.ts). Attempts that could not reach the server, or that it turned
// away whole, are counted in a row; at `threshold` of them the circuit opens for `cooldownMinMs`, and
// at each further threshold's worth again, each time twice as long (at most `cooldownMaxMs`); its
// jobs wait meanwhile without counting an attempt (the composer answers `defer`). One attempt it
// answers closes it. Tables of no tenant (src/db/tenant-guard.ts), read and written by engine code only.
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

export interface ServerBreaker {
  state(server: string): Promise<ServerBreakerState>;
  /** An attempt's outcome: `healthy` (answered) closes the circuit and clears the count; else it is counted. */
  settle(server: string, healthy: boolean, now: Date): Promise<void>;
}

export function createServerBreaker(sql: Sql, table: ServerBreakerTable, rules: ServerBreakerRules = SERVER_BREAKER_RULES): ServerBreaker {
  const column = TABLES[table];
  const read = `SELECT circuit_open_until AS until, consecutive_failures AS failures FROM ${table} WHERE ${column} = $1`;
  const closed = `UPDATE ${table} SET consecutive_failures = 0, circuit_open_until = NULL, updated_at = $2::timestamptz
                   WHERE ${column} = $1 AND consecutive_failures > 0`;
  const failed = `INSERT INTO ${table} AS s (${column}, consecutive_failures, updated_at) VALUES ($1, 1, $2::timestamptz)
     ON CONFLICT (${column}) DO UPDATE SET consecutive_failures = s.consecutive_failures + 1, updated_at = EXCLUDED.updated_at,
       circuit_open_until = CASE WHEN (s.consecutive_failures + 1) % $3::int = 0
         THEN $2::timestamptz + make_interval(secs => LEAST($5::float8, $4::float8 * power(2, (s.consecutive_failures + 1) / $3::int - 1)) / 1000)
         ELSE s.circuit_open_until END`;
  return {
    async state(server) {
      const [row] = await sql.query<ServerBreakerState>(read, [server], `${table}_breaker_state`);
      return { until: row?.until ?? null, failures: row?.failures ?? 0 };
    },
    async settle(server, healthy, now) {
      if (healthy) await sql.query(closed, [server, now], `${table}_breaker_closed`);
      else await sql.query(failed, [server, now, rules.threshold, rules.cooldownMinMs, rules.cooldownMaxMs], `${table}_breaker_failed`);
    },
  };
}
