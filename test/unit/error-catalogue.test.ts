// One error catalogue: every code the database functions refuse with (prisma/sql, their one source)
// is declared in src/lib/errors.ts with its status, the catalogue declares none they do
// not raise, and every raise goes through eng_refuse.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AppError, DATABASE_REFUSALS, databaseRefusal } from "../../src/lib/errors.js";

const sql = readdirSync("prisma/sql")
  .filter((f) => f.endsWith(".sql"))
  .map((f) => readFileSync(`prisma/sql/${f}`, "utf8"))
  .join("\n");
const raised = [...sql.matchAll(/eng_refuse\('(\d{3})',\s*'([A-Za-z_]+)'/g)].map((m) => ({ status: Number(m[1]), code: m[2]! }));

describe("the error catalogue", () => {
  it("declares every code the database functions raise, with its status", () => {
    expect(raised.length).toBeGreaterThan(0);
    for (const r of raised) expect((DATABASE_REFUSALS as Record<string, number>)[r.code], r.code).toBe(r.status);
  });

  it("declares no code the functions do not raise", () => {
    expect(Object.keys(DATABASE_REFUSALS).sort()).toEqual([...new Set(raised.map((r) => r.code))].sort());
  });

  it("has every raise go through eng_refuse", () => {
    const raises = [...sql.matchAll(/RAISE\s+(EXCEPTION|SQLSTATE|'[^']*')/gi)];
    expect(raises).toHaveLength(1); // the one inside eng_refuse itself
    expect(sql).toMatch(/FUNCTION public\.eng_refuse[\s\S]*?RAISE EXCEPTION USING ERRCODE = 'EN'/);
  });

  it("maps a refusal to its problem, and nothing else", () => {
    const locked = databaseRefusal({ code: "EN409", message: "discussion_locked", detail: "Locked." });
    expect(locked).toBeInstanceOf(AppError);
    expect([locked!.status, locked!.code, locked!.detail]).toEqual([409, "discussion_locked", "Locked."]);
    const parent = databaseRefusal({ code: "EN422", message: "parentId", detail: "must name an approved comment" });
    expect([parent!.status, parent!.code, parent!.fieldErrors]).toEqual([
      422,
      "validation_failed",
      [{ path: "parentId", message: "must name an approved comment" }],
    ]);
    const banned = databaseRefusal({ code: "EN403", message: "reader_banned", detail: "Banned.", hint: '{"until":null}' });
    expect([banned!.status, banned!.code, banned!.toProblem().until]).toEqual([403, "reader_banned", null]);
    expect(banned!.toProblem()).toHaveProperty("until", null); // eng_refuse's extra members, carried as the HINT
    expect(databaseRefusal({ code: "EN409", message: "discussion_locked", hint: "" })!.toProblem()).not.toHaveProperty("until");
    expect(databaseRefusal({ code: "EN409", message: "not_in_the_catalogue" })).toBeNull();
    expect(databaseRefusal({ code: "EN404", message: "discussion_locked" })).toBeNull(); // status must match
    expect(databaseRefusal({ code: "23505", message: "duplicate key" })).toBeNull();
    expect(databaseRefusal(new Error("boom"))).toBeNull();
  });

  it("finds the refusal inside Prisma's error for a raw query under the driver adapter", () => {
    const cause = { kind: "postgres", code: "EN409", message: "idempotency_in_progress", detail: "taken over" };
    const wrapped = Object.assign(new Error("Raw query failed"), { code: "P2010", meta: { driverAdapterError: { cause } } });
    expect(databaseRefusal(wrapped)).toMatchObject({ status: 409, code: "idempotency_in_progress" });
    const other = { code: "P2010", meta: { driverAdapterError: { cause: { code: "23505", message: "duplicate key" } } } };
    expect(databaseRefusal(other)).toBeNull();
  });
});
