// The federation's engine reads and writes a tenant's rows through the tenant's store (src/db/tenant-store.ts:
// `$1` bound to the tenant, each statement checked by the tenant guard), never with a tenant's id passed
// by hand on the app's raw client. Read with TypeScript's checker: every use of a raw client (the type
// Sql of src/db/sql.ts) in src/modules/federation/engine/ — a statement run on it, or the client handed
// to a function — is one of the few below, which look across tenants or at tables of no tenant, and no
// statement run on a raw client binds a tenant's id by a parameter.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";

const ENGINE = join(import.meta.dirname, "../../src/modules/federation/engine");

/** The raw client's uses, by file and enclosing function, and why each is not a tenant's store. */
const ALLOWED: Record<string, string> = {
  // across tenants
  "inbox.ts objectsOf": "the shared inbox's activity: every tenant that holds the remote object",
  "inbound.ts tenantHoldingAny": "the shared inbox's activity: which tenant holds an object or follower it names",
  "inbound.ts createInboundQueue>flush":
    "the outbound queue's enqueue (src/outbound/jobs.ts): one statement for a batch of any tenants' activities",
  "inbound.ts createInboundQueue>tenantHolding": "hands the raw client to tenantHoldingAny (above)",
  "delivery.ts createOutboundQueue>send": "the outbound queue's enqueue (src/outbound/jobs.ts), one statement for jobs of any tenants",
  "tenants.ts tenantOfHandle": "the tenants row of a handle, before the tenant is known",
  "tenants.ts anyTenantFederates": "whether any tenant federates (NodeInfo)",
  // tables of no tenant
  "delivery.ts createActivityComposer": "federation_domains: a remote server's breaker (src/outbound/server-breaker.ts)",
  "kv-store.ts createKvStore>get": "federation_kv: Fedify's cache",
  "kv-store.ts createKvStore>set": "federation_kv: Fedify's cache",
  "kv-store.ts createKvStore>delete": "federation_kv: Fedify's cache",
  "kv-store.ts createKvStore>list": "federation_kv: Fedify's cache",
  "kv-store.ts createKvStore>sweepExpired": "federation_kv: Fedify's cache",
  "kv-store.ts forgetCachedActor": "federation_kv: Fedify's cache",
  // the composition of the engine: the raw client handed to the three above
  "engine.ts createFederationEngine": "builds the KvStore and the two queues",
};

interface RawUse {
  where: string;
  /** the statement's text, when the use runs one with a literal text */
  text: string | null;
}

function rawUses(): RawUse[] {
  const files = readdirSync(ENGINE)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(ENGINE, f));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ["node"],
  });
  const checker = program.getTypeChecker();
  const isRaw = (node: ts.Node) => {
    const type = checker.getTypeAtLocation(node);
    const decl = type.getSymbol()?.declarations?.[0];
    return type.getSymbol()?.getName() === "Sql" && decl !== undefined && decl.getSourceFile().fileName.endsWith("/src/db/sql.ts");
  };
  const nameOf = (node: ts.Node): string | null => {
    if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) return node.name.getText();
    if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && ts.isPropertyAssignment(node.parent))
      return node.parent.name.getText();
    if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && ts.isVariableDeclaration(node.parent))
      return node.parent.name.getText();
    return null;
  };
  const whereOf = (node: ts.Node) => {
    const names: string[] = [];
    for (let n: ts.Node | undefined = node; n; n = n.parent) {
      const name = nameOf(n);
      if (name) names.unshift(name);
    }
    return `${node.getSourceFile().fileName.split("/").pop()} ${names.join(">")}`;
  };
  const uses: RawUse[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file)!;
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        // a statement run on a raw client: <raw>.query(text, …) / <raw>.long(text, …)
        if (ts.isPropertyAccessExpression(callee) && ["query", "long"].includes(callee.name.text) && isRaw(callee.expression)) {
          const first = node.arguments[0];
          const text = first && (ts.isNoSubstitutionTemplateLiteral(first) || ts.isStringLiteral(first)) ? first.text : null;
          uses.push({ where: whereOf(node), text });
        } else {
          // a raw client handed to a function
          for (const arg of node.arguments) if (isRaw(arg)) uses.push({ where: whereOf(node), text: null });
        }
      }
      // a raw client handed in an object ({ sql: app.sql })
      if (ts.isPropertyAssignment(node) && isRaw(node.initializer) && !ts.isCallExpression(node.initializer)) {
        uses.push({ where: whereOf(node), text: null });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return uses;
}

describe("the federation engine's SQL", () => {
  // read in a hook, not while the file is collected: vitest orders files by their last run's time, and
  // a file whose work it did not count (collection) was run last, alone, on an otherwise idle machine
  let uses: RawUse[] = [];
  beforeAll(() => {
    uses = rawUses();
  });

  it("finds the raw client's uses (the check sees what it checks)", () => {
    expect(uses.some((u) => u.where === "inbox.ts objectsOf" && u.text?.includes("FROM federation_objects"))).toBe(true);
    expect(uses.length).toBeGreaterThan(10);
  });

  it("uses the raw client only where it looks across tenants or at a table of no tenant", () => {
    const unexpected = [...new Set(uses.map((u) => u.where))].filter((w) => !(w in ALLOWED));
    expect(unexpected).toEqual([]);
  });

  it("never binds a tenant's id by hand on the raw client", () => {
    const byHand = uses.filter(
      (u) => u.text !== null && (/\btenant_id\s*=\s*\$\d/i.test(u.text) || /\bINSERT\s+INTO\s+\w+\s*\([^)]*\btenant_id\b/i.test(u.text)),
    );
    expect(byHand).toEqual([]);
  });
});
