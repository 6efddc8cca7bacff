// The tenant guard: reads a SQL statement with PostgreSQL's own parser (libpg-query) and refuses it
// unless every row it can read or change belongs to the bound tenant. A statement passes when each
// table it names is tied to a bound parameter (the tenant's id) by equalities that must all hold:
// `c.tenant_id = $1`, or `r.tenant_id = c.tenant_id` with `c` tied, in the WHERE clause or a JOIN's
// ON (top-level ANDs only: an OR cannot widen it), `tenants.id = $1` for the tenants row, and
// `webhook_secrets.endpoint_id = e.id` with `e` a tied webhook endpoint. An outer query's tied table
// ties a correlated subquery's equalities. A row inserted gets the tenant's id (`tenant_id` from a
// bound parameter, or from a tied row); `ON CONFLICT DO UPDATE` names `tenant_id` in its target; a
// database function of ours (`eng_*`) given a parameter first gets the tenant's. Anything else —
// a table the guard does not know, a second statement, DDL — is refused. The guard sees the text
// only, never the values, so a statement is checked once (src/db/guarded-statement.ts keeps the verdict).
import { loadModule, parseSync } from "libpg-query";
import { CHILD_TABLES, SCALAR_FIRST, TENANT_TABLES } from "./tenant-tables.js";

let loaded: Promise<void> | undefined;
let ready = false;
/** Loads the parser (WebAssembly) once; `checkTenantBound` needs it loaded. */
export function loadTenantGuard(): Promise<void> {
  loaded ??= loadModule().then(() => {
    ready = true;
  });
  return loaded;
}

export class TenantGuardRefusal extends Error {
  constructor(reason: string, text: string) {
    super(`tenant guard: ${reason} — in: ${text.replace(/\s+/g, " ").trim().slice(0, 200)}`);
    this.name = "TenantGuardRefusal";
  }
}

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (isNode(v) && isNode(v.String) ? (v.String.sval as string | undefined) : undefined);

/** A range of one statement level: its name in the statement and the table behind it (null: a subquery, a CTE, a function). */
interface Range {
  alias: string;
  table: string | null;
}

interface Level {
  ranges: Range[];
  /** conditions every row meets: WHERE, HAVING and inner joins' ON */
  conjuncts: unknown[];
  /** an outer join's ON: it ties only the rows of its nullable side (the other side's rows all stay) */
  outer: { quals: unknown; nullable: Set<string> }[];
}

/**
 * Checks one statement's text. `bound`: the parameter numbers that carry the tenant's id. Throws
 * TenantGuardRefusal with the reason when the statement could touch another tenant's rows.
 */
export function checkTenantBound(text: string, bound: ReadonlySet<number>): void {
  if (!ready) throw new Error("tenant guard: the parser is not loaded (loadTenantGuard at start)");
  let tree: { stmts?: { stmt: Node }[] };
  try {
    tree = parseSync(text) as typeof tree;
  } catch (err) {
    throw new TenantGuardRefusal(`the statement does not parse (${(err as Error).message})`, text);
  }
  const stmts = tree.stmts ?? [];
  if (stmts.length !== 1) throw new TenantGuardRefusal("one statement at a time", text);
  const refuse = (reason: string): never => {
    throw new TenantGuardRefusal(reason, text);
  };
  visit(stmts[0]!.stmt, { tied: new Set(), ctes: new Set() }, bound, refuse);
}

interface Scope {
  /** aliases of enclosing levels known tied to the tenant */
  tied: Set<string>;
  /** names of the CTEs in scope (not tables) */
  ctes: Set<string>;
}

const STATEMENTS = new Set(["SelectStmt", "InsertStmt", "UpdateStmt", "DeleteStmt"]);

function visit(node: unknown, scope: Scope, bound: ReadonlySet<number>, refuse: (r: string) => never): void {
  if (Array.isArray(node)) {
    for (const n of node) visit(n, scope, bound, refuse);
    return;
  }
  if (!isNode(node)) return;
  for (const [kind, body] of Object.entries(node)) {
    if (!isNode(body)) {
      if (Array.isArray(body)) visit(body, scope, bound, refuse);
      continue;
    }
    if (kind === "RawStmt") {
      visit(body.stmt, scope, bound, refuse);
    } else if (STATEMENTS.has(kind)) {
      statement(kind, body, scope, bound, refuse);
    } else if (kind.endsWith("Stmt") && kind !== "SelectStmt") {
      refuse(`${kind.replace(/Stmt$/, "")} statements are not tenant data`);
    } else if (kind === "FuncCall") {
      const name = list(body.funcname).map(str).pop() ?? "";
      const first = list(body.args)[0];
      const tenantFirst = name.startsWith("eng_") && !SCALAR_FIRST.has(name) && !(isNode(first) && isNode(first.ColumnRef));
      if (tenantFirst && !(isNode(first) && isNode(first.ParamRef) && bound.has(first.ParamRef.number as number))) {
        refuse(`${name} takes the tenant's id first`);
      }
      visit(body, scope, bound, refuse);
    } else {
      visit(body, scope, bound, refuse);
    }
  }
}

function statement(kind: string, s: Node, outer: Scope, bound: ReadonlySet<number>, refuse: (r: string) => never): void {
  const scope: Scope = { tied: new Set(outer.tied), ctes: new Set(outer.ctes) };
  const withClause = isNode(s.withClause) ? s.withClause : undefined;
  for (const cte of list(withClause?.ctes)) {
    const c = isNode(cte) && isNode(cte.CommonTableExpr) ? cte.CommonTableExpr : undefined;
    if (c) scope.ctes.add(c.ctename as string);
  }
  // the CTEs' own queries are checked with the enclosing scope (a CTE cannot see this level's FROM)
  if (withClause) visit(withClause.ctes, scope, bound, refuse);

  const level: Level = { ranges: [], conjuncts: [], outer: [] };
  const children: unknown[] = [];
  if (kind === "SelectStmt") {
    if (s.op && s.op !== "SETOP_NONE") {
      visit(
        [s.larg, s.rarg].map((x) => ({ SelectStmt: x })),
        scope,
        bound,
        refuse,
      );
      return;
    }
    for (const f of list(s.fromClause)) fromItem(f, level, children, scope);
    level.conjuncts.push(s.whereClause, s.havingClause);
    children.push(s.targetList, s.whereClause, s.havingClause, s.valuesLists, s.groupClause, s.sortClause, s.limitCount, s.limitOffset);
  } else if (kind === "UpdateStmt" || kind === "DeleteStmt") {
    fromItem({ RangeVar: s.relation }, level, children, scope);
    for (const f of list(kind === "UpdateStmt" ? s.fromClause : s.usingClause)) fromItem(f, level, children, scope);
    level.conjuncts.push(s.whereClause);
    children.push(s.targetList, s.whereClause, s.returningList);
    if (kind === "UpdateStmt") {
      for (const t of list(s.targetList)) {
        const name = isNode(t) && isNode(t.ResTarget) ? t.ResTarget.name : undefined;
        if (name === "tenant_id") refuse("an update may not move a row to another tenant");
      }
    }
  } else {
    insert(s, scope, bound, refuse);
    return;
  }
  const tied = tiedAliases(level, scope, bound);
  for (const r of level.ranges) {
    if (r.table === null) continue;
    if (!tied.has(r.alias)) refuse(`${r.table}${r.alias !== r.table ? ` (${r.alias})` : ""} is not tied to the tenant's id`);
  }
  const inner: Scope = {
    tied: new Set([...[...scope.tied].filter((a) => !level.ranges.some((r) => r.alias === a)), ...tied]),
    ctes: scope.ctes,
  };
  visit(children, inner, bound, refuse);
}

function fromItem(f: unknown, level: Level, children: unknown[], scope: Scope): void {
  if (!isNode(f)) return;
  if (isNode(f.RangeVar)) {
    const rv = f.RangeVar;
    const table = rv.relname as string;
    const alias = (isNode(rv.alias) ? (rv.alias.aliasname as string) : undefined) ?? table;
    level.ranges.push({ alias, table: !rv.schemaname && scope.ctes.has(table) ? null : table });
  } else if (isNode(f.JoinExpr)) {
    const j = f.JoinExpr;
    const before = level.ranges.length;
    fromItem(j.larg, level, children, scope);
    const middle = level.ranges.length;
    fromItem(j.rarg, level, children, scope);
    const side = (from: number, to: number) => new Set(level.ranges.slice(from, to).map((r) => r.alias));
    if (j.jointype === "JOIN_INNER") level.conjuncts.push(j.quals);
    else if (j.jointype === "JOIN_LEFT") level.outer.push({ quals: j.quals, nullable: side(middle, level.ranges.length) });
    else if (j.jointype === "JOIN_RIGHT") level.outer.push({ quals: j.quals, nullable: side(before, middle) });
    children.push(j.quals);
  } else if (isNode(f.RangeSubselect)) {
    const alias = isNode(f.RangeSubselect.alias) ? (f.RangeSubselect.alias.aliasname as string) : "";
    level.ranges.push({ alias, table: null });
    children.push(f.RangeSubselect.subquery);
  } else {
    // a function in FROM (unnest, jsonb_to_recordset …): its arguments are checked as expressions
    const alias = Object.values(f).find(isNode)?.alias;
    level.ranges.push({ alias: isNode(alias) ? (alias.aliasname as string) : "", table: null });
    children.push(f);
  }
}

/** The aliases of this level tied to a bound parameter through equalities that all hold. */
function tiedAliases(level: Level, scope: Scope, bound: ReadonlySet<number>): Set<string> {
  const single = level.ranges.length === 1 ? level.ranges[0]!.alias : undefined;
  const own = new Set(level.ranges.map((r) => r.alias));
  const term = (e: unknown): string | undefined => {
    if (!isNode(e)) return undefined;
    if (isNode(e.ParamRef)) return bound.has(e.ParamRef.number as number) ? "$tenant" : undefined;
    if (isNode(e.TypeCast)) return term(e.TypeCast.arg);
    if (!isNode(e.ColumnRef)) return undefined;
    const fields = list(e.ColumnRef.fields).map(str);
    if (fields.some((x) => x === undefined)) return undefined;
    if (fields.length === 1 && single) return `${single}.${fields[0]}`;
    if (fields.length !== 2) return undefined;
    const [alias, column] = fields as [string, string];
    // an enclosing level's tied row, not shadowed by one of this level's
    if (!own.has(alias) && scope.tied.has(alias)) return column === "tenant_id" || column === "id" ? `${alias}.${column}` : undefined;
    return `${alias}.${column}`;
  };
  // union-find over the terms the equalities join
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let p = parent.get(x) ?? x;
    while (p !== (parent.get(p) ?? p)) p = parent.get(p) ?? p;
    parent.set(x, p);
    return p;
  };
  const join = (a: string, b: string) => parent.set(find(a), find(b));
  const equalities = (conds: unknown[]) => {
    for (const c of conds.flatMap(conjuncts)) {
      if (!isNode(c) || !isNode(c.A_Expr)) continue;
      const e = c.A_Expr;
      if (e.kind !== "AEXPR_OP" || list(e.name).map(str).join() !== "=") continue;
      const l = term(e.lexpr);
      const r = term(e.rexpr);
      if (l && r) join(l, r);
    }
  };
  for (const alias of scope.tied) if (!own.has(alias)) join(`${alias}.tenant_id`, "$tenant");
  equalities(level.conjuncts);
  const tiedNow = (r: Range) =>
    (r.table === "tenants" && find(`${r.alias}.id`) === find("$tenant")) ||
    (r.table !== null && TENANT_TABLES.has(r.table) && find(`${r.alias}.tenant_id`) === find("$tenant"));
  const tied = new Set(level.ranges.filter(tiedNow).map((r) => r.alias));
  // an outer join's ON ties its nullable side: tried on a copy, kept for that side only
  for (const o of level.outer) {
    const saved = new Map(parent);
    equalities([o.quals]);
    const gained = level.ranges.filter((r) => o.nullable.has(r.alias) && tiedNow(r)).map((r) => r.alias);
    parent.clear();
    for (const [k, v] of saved) parent.set(k, v);
    for (const alias of gained) {
      tied.add(alias);
      join(`${alias}.tenant_id`, "$tenant");
    }
  }
  // child tables through a tied parent's id
  for (const r of level.ranges) {
    const child = r.table ? CHILD_TABLES[r.table] : undefined;
    if (!child) continue;
    const [column, parentTable] = child;
    const parentTied = level.ranges.some(
      (p) => p.table === parentTable && tied.has(p.alias) && find(`${p.alias}.id`) === find(`${r.alias}.${column}`),
    );
    if (parentTied) tied.add(r.alias);
  }
  return tied;
}

/** The top-level ANDs of an expression. */
function conjuncts(e: unknown): unknown[] {
  if (!isNode(e)) return [];
  if (isNode(e.BoolExpr) && e.BoolExpr.boolop === "AND_EXPR") return list(e.BoolExpr.args).flatMap(conjuncts);
  return [e];
}

function insert(s: Node, scope: Scope, bound: ReadonlySet<number>, refuse: (r: string) => never): void {
  const rv = isNode(s.relation) ? s.relation : {};
  const table = rv.relname as string;
  if (!TENANT_TABLES.has(table)) refuse(`rows of ${table} are not inserted through the tenant's store`);
  const cols = list(s.cols).map((c) => (isNode(c) && isNode(c.ResTarget) ? (c.ResTarget.name as string) : ""));
  const at = cols.indexOf("tenant_id");
  if (at < 0) refuse(`an insert into ${table} names tenant_id`);
  const select = isNode(s.selectStmt) && isNode(s.selectStmt.SelectStmt) ? s.selectStmt.SelectStmt : undefined;
  if (!select) refuse(`an insert into ${table} takes VALUES or a SELECT`);
  const isTenant = (e: unknown) => {
    if (isNode(e) && isNode(e.TypeCast)) e = e.TypeCast.arg;
    if (!isNode(e)) return false;
    if (isNode(e.ParamRef)) return bound.has(e.ParamRef.number as number);
    // a tied row's tenant_id (the SELECT below is checked like any other)
    return isNode(e.ColumnRef) && str(list(e.ColumnRef.fields).at(-1)) === "tenant_id";
  };
  const rows = select!.valuesLists
    ? list(select!.valuesLists).map((l) => (isNode(l) && isNode(l.List) ? list(l.List.items)[at] : undefined))
    : [list(select!.targetList).map((t) => (isNode(t) && isNode(t.ResTarget) ? t.ResTarget.val : undefined))[at]];
  if (!rows.every(isTenant)) refuse(`an insert into ${table} takes tenant_id from the tenant's id`);
  const conflict = isNode(s.onConflictClause) ? s.onConflictClause : undefined;
  if (conflict?.action === "ONCONFLICT_UPDATE") {
    const infer = isNode(conflict.infer) ? conflict.infer : {};
    const names = list(infer.indexElems).map((i) => (isNode(i) && isNode(i.IndexElem) ? i.IndexElem.name : undefined));
    // the row in the way is the tenant's when the target names tenant_id, or when the update's WHERE
    // asks it to have the inserted row's tenant_id
    const own = conjuncts(conflict.whereClause).some((c) => {
      const e = isNode(c) && isNode(c.A_Expr) ? c.A_Expr : undefined;
      if (!e || e.kind !== "AEXPR_OP" || list(e.name).map(str).join() !== "=") return false;
      const side = (x: unknown) => (isNode(x) && isNode(x.ColumnRef) ? list(x.ColumnRef.fields).map(str).join(".") : "");
      const pair = [side(e.lexpr), side(e.rexpr)].sort().join(" ");
      const alias = (isNode(rv.alias) ? (rv.alias.aliasname as string) : undefined) ?? table;
      return pair === [`${alias}.tenant_id`, "excluded.tenant_id"].sort().join(" ");
    });
    if (!names.includes("tenant_id") && !own) {
      refuse(`ON CONFLICT DO UPDATE on ${table} names tenant_id in its target or keeps to excluded.tenant_id`);
    }
  }
  visit([{ SelectStmt: select }, s.returningList, conflict], scope, bound, refuse);
}
