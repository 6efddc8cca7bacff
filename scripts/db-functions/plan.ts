// What a migration must run to turn the functions the migrations define (`live`) into the ones the
// sources define (`wanted`): nothing for an unchanged function, CREATE OR REPLACE for a changed body,
// DROP then CREATE when the arguments' names or the result type changed (CREATE OR REPLACE refuses
// those), DROP for a function the sources no longer have.
import type { DbFunction } from "./catalog.js";

export type Change = { key: string; kind: "new" | "changed" | "dropped" };

export interface Plan {
  changes: Change[];
  statements: string[];
}

export function planMigration(live: DbFunction[], wanted: DbFunction[]): Plan {
  const before = new Map(live.map((f) => [f.key, f]));
  const after = new Set(wanted.map((f) => f.key));
  const changes: Change[] = [];
  const drops: string[] = [];
  const creates: DbFunction[] = [];
  for (const f of live) {
    if (!after.has(f.key)) {
      changes.push({ key: f.key, kind: "dropped" });
      drops.push(dropOf(f));
    }
  }
  for (const f of wanted) {
    const old = before.get(f.key);
    if (old && old.def === f.def) continue;
    changes.push({ key: f.key, kind: old ? "changed" : "new" });
    if (old && (old.arguments !== f.arguments || old.result !== f.result)) drops.push(dropOf(old));
    creates.push(f);
  }
  return { changes, statements: [...drops, ...creationOrder(creates).map((f) => f.def)] };
}

const dropOf = (f: DbFunction) => `DROP FUNCTION public.${f.name}(${f.identity});`;

/**
 * PostgreSQL checks a LANGUAGE sql body when it is created (what it calls must exist by then), a
 * plpgsql one when it runs: the plpgsql functions first, in the sources' order, then the sql ones,
 * each after the new ones it calls.
 */
function creationOrder(fns: DbFunction[]): DbFunction[] {
  const sql = fns.filter((f) => f.language === "sql");
  const out = fns.filter((f) => f.language !== "sql");
  const placed = new Set<DbFunction>();
  const visit = (f: DbFunction, path: Set<DbFunction>) => {
    if (placed.has(f) || path.has(f)) return;
    path.add(f);
    for (const g of sql) if (g !== f && new RegExp(`\\b${g.name}\\s*\\(`).test(f.body)) visit(g, path);
    placed.add(f);
    out.push(f);
  };
  for (const f of sql) visit(f, new Set());
  return out;
}
