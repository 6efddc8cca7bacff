// `npm run bench:walk-post`: which files one POST of a comment crosses, read from the running service
// rather than from its imports (the walk a house pass ends with: fewer files a request crosses is its goal). The service
// starts as `npm start` runs it, its workers off, on a database of its own; after a few warm-up posts
// (lazy set-up, compiled statements), V8's precise coverage is reset through the inspector and exactly
// one POST /api/v1/discussions/:id/comments is sent: every file of the service with a function that ran
// for it is listed, then the packages, then the database functions it called (pg_stat_user_functions,
// track_functions = 'all' on that database) with the files of prisma/sql/ that define them.
// WALK_SERVICE_DIR=<checkout>: walk another checkout's service (its `npm ci` and `npm run build` done),
// e.g. the commit before a pass, in a git worktree.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { assertion, benchDatabase, freePort, startServiceProcess } from "./support.js";

const dir = process.env.WALK_SERVICE_DIR;
const root = dir ?? process.cwd();

/** A Chrome DevTools Protocol session over the inspector's WebSocket. */
async function inspector(port: number) {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const ws = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let next = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
  };
  return {
    post: <T>(method: string, params: object = {}) =>
      new Promise<T>((resolve) => {
        const id = ++next;
        waiting.set(id, resolve as (r: unknown) => void);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: { count: number }[] }[];
}

/** prisma/sql's files by the functions they define. */
function sqlFiles(): Map<string, string> {
  const byFunction = new Map<string, string>();
  const sqlDir = join(root, "prisma", "sql");
  for (const f of readdirSync(sqlDir).filter((n) => n.endsWith(".sql"))) {
    for (const m of readFileSync(join(sqlDir, f), "utf8").matchAll(/CREATE (?:OR REPLACE )?FUNCTION\s+(?:public\.)?(\w+)/gi))
      byFunction.set(m[1]!.toLowerCase(), f);
  }
  return byFunction;
}

const db = await benchDatabase("eng_walk");
await db.admin.query(`ALTER DATABASE ${new URL(db.url).pathname.slice(1)} SET track_functions = 'all'`);
const inspectPort = await freePort();
const svc = await startServiceProcess(
  db.url,
  { RUN_WEBHOOK_WORKER: "0", RUN_EMAIL_WORKER: "0", RUN_FOLLOW_WORKER: "0", RUN_SEARCH_PROJECTOR: "false" },
  { nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`], cwd: dir },
);
const client = new pg.Client({ connectionString: db.url });
await client.connect();
const calls = async () => {
  await client.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await client.query<{ funcname: string; calls: string }>("SELECT funcname, calls FROM pg_stat_user_functions");
  return new Map(rows.map((r) => [r.funcname, Number(r.calls)]));
};
const post = async (i: number) => {
  const sub = `walker${i % 3}`;
  const identity = await assertion(svc.tenant.identitySecret, sub, { name: sub });
  return svc.api("POST", "/api/v1/discussions/walk/comments", { body: `walking, step ${i}` }, { "x-service-identity": identity });
};
try {
  for (let i = 0; i < 5; i++) await post(i);
  const cdp = await inspector(inspectPort);
  await cdp.post("Profiler.enable");
  await cdp.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
  // a backend's function statistics reach pg_stat_user_functions within ten seconds of its last transaction
  await new Promise((r) => setTimeout(r, 11_000));
  const before = await calls();
  await cdp.post("Profiler.takePreciseCoverage"); // counts start again from here: the next take is the POST's
  await post(5);
  const { result } = await cdp.post<{ result: ScriptCoverage[] }>("Profiler.takePreciseCoverage");
  cdp.close();
  await new Promise((r) => setTimeout(r, 11_000));
  const after = await calls();

  const ran = result.filter((s) => s.functions.some((f) => f.ranges[0]!.count > 0));
  const distPrefix = `file://${join(root, "dist")}/`;
  const own = ran
    .filter((s) => s.url.startsWith(distPrefix))
    .map((s) => `src/${s.url.slice(distPrefix.length).replace(/\.js$/, ".ts")}`)
    .sort();
  const packages = [
    ...new Set(ran.map((s) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(s.url)?.[1]).filter((p): p is string => p !== undefined)),
  ].sort();
  const defined = sqlFiles();
  const called = [...after]
    .filter(([name, n]) => n > (before.get(name) ?? 0))
    .map(([name, n]) => [name, n - (before.get(name) ?? 0)] as const);
  const sql = [...new Set(called.map(([name]) => defined.get(name) ?? "(not in prisma/sql)"))].sort();

  console.log(`# One POST of a comment, ${dir ? `the service of ${dir}` : "this checkout's service"}\n`);
  console.log(`| crossed | count | which |\n|---|---|---|`);
  console.log(`| the service's own files | ${own.length} | ${own.join(", ")} |`);
  console.log(`| packages | ${packages.length} | ${packages.join(", ")} |`);
  console.log(`| database functions | ${called.length} | ${called.map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)).join(", ")} |`);
  console.log(`| prisma/sql files defining them | ${sql.length} | ${sql.join(", ")} |`);
} finally {
  await client.end();
  svc.process.kill("SIGTERM");
  await new Promise((r) => svc.process.once("exit", r));
  await db.drop();
}
