// Plain SQL on the same connections Prisma uses, for the hot paths where Prisma's per-statement
// cost shows (src/modules/comments/read.ts, src/events/statement.ts): the pg pool of adapter-pg, or the embedded PGlite instance.
// Named prepared statements on PostgreSQL (parsed and planned once per connection), except behind a
// transaction-mode pooler, where a statement prepared in one server session is missing (or already
// there) in the next transaction's: there `name` is ignored (src/db/pooler.ts).
import type pg from "pg";
import type { PGlite } from "@electric-sql/pglite";

export interface Sql {
  /** Runs one statement; `name` makes it a named prepared statement where the driver has them. */
  query<R>(text: string, values: unknown[], name?: string): Promise<R[]>;
  /**
   * Runs one statement of maintenance work (an import's recount, ANALYZE) with a limit of its own
   * instead of the request limit (DATABASE_TIMEOUT_MS), server and client side alike: in a
   * transaction of its own with `SET LOCAL statement_timeout`.
   */
  long<R>(text: string, values: unknown[], timeoutMs: number): Promise<R[]>;
}

export function pgSql(pool: pg.Pool, opts: { named: boolean } = { named: true }): Sql {
  return {
    async query<R>(text: string, values: unknown[], name?: string) {
      const res = await pool.query<R & pg.QueryResultRow>(name && opts.named ? { name, text, values } : { text, values });
      return res.rows;
    },
    async long<R>(text: string, values: unknown[], timeoutMs: number) {
      const ms = Math.max(1, Math.round(timeoutMs));
      const client = await pool.connect();
      try {
        // behind a pooler BEGIN gets the request limit (src/db/pooler.ts): the SET LOCAL after it wins
        await client.query("BEGIN");
        await client.query(`SET LOCAL statement_timeout = ${ms}`);
        // pg's own read timeout (the pool's query_timeout) is per query: this one gets the longer limit
        const res = await client.query<R & pg.QueryResultRow>({ text, values, query_timeout: ms + 500 } as pg.QueryConfig);
        await client.query("COMMIT");
        return res.rows;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
  };
}

export function pgliteSql(db: PGlite): Sql {
  const query = async <R>(text: string, values: unknown[]) => (await db.query<R>(text, values)).rows;
  // the embedded database has no statement timeout: a long statement is just a statement
  return { query, long: query };
}
