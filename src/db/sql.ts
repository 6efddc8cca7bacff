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
}

export function pgSql(pool: pg.Pool, opts: { named: boolean } = { named: true }): Sql {
  return {
    async query<R>(text: string, values: unknown[], name?: string) {
      const res = await pool.query<R & pg.QueryResultRow>(name && opts.named ? { name, text, values } : { text, values });
      return res.rows;
    },
  };
}

export function pgliteSql(db: PGlite): Sql {
  return {
    async query<R>(text: string, values: unknown[]) {
      const res = await db.query<R>(text, values);
      return res.rows;
    },
  };
}
