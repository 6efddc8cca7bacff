import type pg from "pg";
import { describe, expect, it } from "vitest";
import { framingFor, timeoutStatements } from "./pooler.js";
import { pgSql } from "./sql.js";

describe("timeoutStatements (behind a transaction-mode pooler)", () => {
  it("sets the timeout before a statement outside a transaction, in its implicit transaction", () => {
    expect(timeoutStatements("SELECT eng_post_comment($1)", false, framingFor({ timeoutMs: 4000 }))).toEqual({
      before: ["SELECT set_config('statement_timeout', '4000', true)"],
      after: [],
    });
    // and the planner's random_page_cost in the same statement, when the service sets one
    expect(timeoutStatements("SELECT 1", false, framingFor({ timeoutMs: 4000, randomPageCost: 1.1 }))).toEqual({
      before: ["SELECT set_config('statement_timeout', '4000', true), set_config('random_page_cost', '1.1', true)"],
      after: [],
    });
  });

  it("sets it for the whole transaction after BEGIN (or START TRANSACTION)", () => {
    for (const begin of ["BEGIN", " begin", "START TRANSACTION ISOLATION LEVEL SERIALIZABLE"]) {
      expect(timeoutStatements(begin, false, framingFor({ timeoutMs: 2500 }))).toEqual({
        before: [],
        after: ["SET LOCAL statement_timeout = 2500"],
      });
      expect(timeoutStatements(begin, false, framingFor({ timeoutMs: 2500, randomPageCost: 1.1 }))).toEqual({
        before: [],
        after: ["SET LOCAL statement_timeout = 2500", "SET LOCAL random_page_cost = 1.1"],
      });
    }
  });

  it("adds nothing inside a transaction, nor to COMMIT, ROLLBACK or savepoints", () => {
    expect(timeoutStatements("SELECT 1", true, framingFor({ timeoutMs: 4000, randomPageCost: 1.1 }))).toEqual({ before: [], after: [] });
    for (const control of ["COMMIT", "ROLLBACK", "SAVEPOINT s1", "RELEASE SAVEPOINT s1", "END"]) {
      expect(timeoutStatements(control, false, framingFor({ timeoutMs: 4000, randomPageCost: 1.1 }))).toEqual({ before: [], after: [] });
    }
  });
});

describe("pgSql", () => {
  const capture = () => {
    const sent: unknown[] = [];
    const pool = { query: async (config: unknown) => (sent.push(config), { rows: [] }) } as unknown as pg.Pool;
    return { pool, sent };
  };

  it("names prepared statements on a direct connection", async () => {
    const { pool, sent } = capture();
    await pgSql(pool).query("SELECT $1", [1], "one");
    expect(sent).toEqual([{ name: "one", text: "SELECT $1", values: [1] }]);
  });

  it("ignores the name behind a pooler: no named statement is sent", async () => {
    const { pool, sent } = capture();
    await pgSql(pool, { named: false }).query("SELECT $1", [1], "one");
    expect(sent).toEqual([{ text: "SELECT $1", values: [1] }]);
  });
});
