// Long maintenance statements (src/db/sql.ts `long`): on a pool whose request limit is short, as
// every instance's is (DATABASE_TIMEOUT_MS, server side and client side), a plain statement past it is
// cut, while `long` runs the same statement to its end under its own limit, and is still cut past that.
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { pgSql } from "../src/db/sql.js";

const pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 2, statement_timeout: 300, query_timeout: 800 });
afterAll(() => pool.end());

describe("Sql.long", () => {
  it("runs a statement past the request limit under a limit of its own", async () => {
    const sql = pgSql(pool);
    await expect(sql.query("SELECT pg_sleep(1)", [])).rejects.toMatchObject({ code: "57014" });
    const rows = await sql.long<{ n: number }>("SELECT pg_sleep(1), $1::int AS n", [7], 5_000);
    expect(rows).toEqual([{ pg_sleep: "", n: 7 }]);
    // the connection it used is back in the pool with the request limit again
    await expect(sql.query("SELECT pg_sleep(1)", [])).rejects.toMatchObject({ code: "57014" });
    expect(await sql.query("SHOW statement_timeout", [])).toEqual([{ statement_timeout: "300ms" }]);
  });

  it("is still cut past its own limit, and leaves no transaction open", async () => {
    const sql = pgSql(pool);
    const err = await sql.long("SELECT pg_sleep(2)", [], 500).then(
      () => null,
      (e: unknown) => e as { code?: string; message?: string },
    );
    // cut by PostgreSQL's statement_timeout (57014) or, on a machine too busy to deliver that within
    // the 500 ms more the client gives it, by the client's own read timeout: cut either way, not run out
    expect(err?.code === "57014" || err?.message === "Query read timeout" ? "cut" : err).toBe("cut");
    expect(await sql.query<{ one: number }>("SELECT 1 AS one", [])).toEqual([{ one: 1 }]);
  });
});
