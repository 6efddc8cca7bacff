// The pieces of `npm run functions:migrate / print / check` (scripts/functions-sql.ts) that need no
// database: splitting a source file, planning the migration from two catalogs, and the signatures.
import { describe, expect, it } from "vitest";
import type { DbFunction } from "../../scripts/db-functions/catalog.js";
import { planMigration } from "../../scripts/db-functions/plan.js";
import { splitStatements } from "../../scripts/db-functions/split.js";
import { argName, typescriptOf } from "../../scripts/db-functions/typescript.js";

/** A function as the catalog would describe it; `def` follows from the rest. */
function fn(
  name: string,
  args: [string, string][],
  o: { body?: string; result?: string; language?: string; row?: boolean[] } = {},
): DbFunction {
  const identity = args.map(([n, t]) => `${n} ${t}`).join(", ");
  const body = o.body ?? "BEGIN RETURN NULL; END";
  const result = o.result ?? "json";
  const language = o.language ?? "plpgsql";
  return {
    key: `${name}(${identity})`,
    name,
    identity,
    arguments: identity,
    result,
    def: `CREATE OR REPLACE FUNCTION public.${name}(${identity})\n RETURNS ${result}\n LANGUAGE ${language}\nAS $function$${body}$function$;`,
    language,
    body,
    argNames: args.map(([n]) => n),
    argTypes: args.map(([, t]) => t),
    argIsRow: o.row ?? args.map(() => false),
  };
}

describe("splitStatements", () => {
  it("splits at the semicolons outside bodies, strings and comments", () => {
    const sql = `-- a file's header; with a semicolon
CREATE OR REPLACE FUNCTION a() RETURNS int LANGUAGE plpgsql AS $function$
BEGIN
  -- inside; kept
  RETURN 1;
END $function$;

/* between; */ CREATE FUNCTION b() RETURNS text LANGUAGE sql AS $$ SELECT 'x;y' $$;
CREATE FUNCTION c() RETURNS text LANGUAGE sql AS 'SELECT ''q;'''`;
    const out = splitStatements(sql);
    expect(out).toHaveLength(3);
    expect(out[0]).toMatch(/^CREATE OR REPLACE FUNCTION a\(\)[\s\S]*-- inside; kept[\s\S]*END \$function\$$/);
    expect(out[1]).toBe(`CREATE FUNCTION b() RETURNS text LANGUAGE sql AS $$ SELECT 'x;y' $$`);
    expect(out[2]).toBe(`CREATE FUNCTION c() RETURNS text LANGUAGE sql AS 'SELECT ''q;'''`);
  });

  it("refuses an unterminated body", () => {
    expect(() => splitStatements("CREATE FUNCTION a() AS $x$ BEGIN")).toThrow(/unterminated \$x\$/);
  });
});

describe("planMigration", () => {
  const a = fn("eng_a", [["p_x", "text"]]);
  const b = fn("eng_b", [["p_y", "integer"]]);

  it("writes nothing when the sources are what the migrations define", () => {
    expect(planMigration([a, b], [a, b])).toEqual({ changes: [], statements: [] });
  });

  it("replaces a changed body, creates a new function and drops one the sources no longer have", () => {
    const a2 = fn("eng_a", [["p_x", "text"]], { body: "BEGIN RETURN '{}'; END" });
    const c = fn("eng_c", []);
    const plan = planMigration([a, b], [a2, c]);
    expect(plan.changes).toEqual([
      { key: b.key, kind: "dropped" },
      { key: a.key, kind: "changed" },
      { key: c.key, kind: "new" },
    ]);
    expect(plan.statements).toEqual(["DROP FUNCTION public.eng_b(p_y integer);", a2.def, c.def]);
  });

  it("drops first what CREATE OR REPLACE cannot change: the result type, an argument's name", () => {
    const result = fn("eng_a", [["p_x", "text"]], { result: "integer" });
    expect(planMigration([a], [result]).statements).toEqual(["DROP FUNCTION public.eng_a(p_x text);", result.def]);
    const renamed = { ...fn("eng_a", [["p_z", "text"]]), key: a.key, identity: a.identity };
    expect(planMigration([a], [renamed]).statements).toEqual(["DROP FUNCTION public.eng_a(p_x text);", renamed.def]);
  });

  it("creates plpgsql functions first, then each sql one after the sql ones it calls", () => {
    const outer = fn("eng_outer", [], { language: "sql", body: " SELECT eng_inner(1) " });
    const inner = fn("eng_inner", [["n", "integer"]], { language: "sql", body: " SELECT n " });
    const p = fn("eng_p", []);
    expect(planMigration([], [outer, p, inner]).statements).toEqual([p.def, inner.def, outer.def]);
  });
});

describe("typescriptOf", () => {
  const write = fn(
    "eng_write",
    [
      ["p_tenant", "text"],
      ["p_window_seconds", "integer"],
      ["p_reason", "jsonb"],
      ["p_ids", "text[]"],
      ["p_hold", "boolean"],
      ["p_at", "timestamp with time zone"],
    ],
    { body: "\n-- nullable: p_reason, p_ids\nBEGIN RETURN NULL; END" },
  );

  it("types the functions with a -- nullable: line, by name and in order", () => {
    const ts = typescriptOf([write, fn("eng_internal", [["p_x", "text"]])]);
    expect(ts).toContain(
      "  eng_write: {\n    args: {\n      tenant: string;\n      windowSeconds: number;\n      reason: JsonText | null;\n" +
        '      ids: string[] | null;\n      hold: boolean;\n      at: Date;\n    };\n    result: "json";\n  };\n',
    );
    expect(ts).toContain('  eng_write: ["tenant", "windowSeconds", "reason", "ids", "hold", "at"],\n');
    expect(ts).not.toContain("eng_internal");
  });

  it("names arguments without p_, camelCase", () => {
    expect([argName("p_tenant"), argName("p_reject_pending"), argName("ts")]).toEqual(["tenant", "rejectPending", "ts"]);
  });

  it("refuses what it cannot type: an unknown type, a row, a nullable name that is no argument, an overload", () => {
    const marked = (args: [string, string][], o: { row?: boolean[]; nullable?: string } = {}) =>
      fn("eng_x", args, { ...o, body: `\n-- nullable: ${o.nullable ?? "none"}\nBEGIN END` });
    expect(() => typescriptOf([marked([["p_n", "numeric"]])])).toThrow(/no TypeScript type for numeric/);
    expect(() => typescriptOf([marked([["c", "comments"]], { row: [true] })])).toThrow(/table's row/);
    expect(() => typescriptOf([marked([["p_n", "text"]], { nullable: "p_m" })])).toThrow(/names p_m, not an argument/);
    expect(() => typescriptOf([marked([["p_n", "text"]]), marked([["p_n", "integer"]])])).toThrow(/overloaded/);
  });
});
