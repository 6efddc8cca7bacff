// npm run bench — the hot paths beside a hand-written floor doing the same durable work, measured in
// the same run (issue "hot paths"). Starts three processes: a bare graphql-yoga `{hello}`, the floor
// (bench/floor/server.ts, its own database) and the service (src/main.ts, its own database), warms
// each up, then runs autocannon per path, floor and service in alternating slices, and prints a table with
// the service/floor ratios. Compare ratios, never absolute numbers: these machines are noisy.
// Each row also has the server processes' CPU time per request (user + system, from /proc): far
// less noisy than throughput on a shared machine; and the service's main thread alone, per request
// and as a share of the run's wall time: near 100 % the JavaScript is what limits the row, well below
// it something else does (a row's lock, the database, the disk).
// Env: BENCH_SECONDS (10), BENCH_CONNECTIONS (50), BENCH_PATHS (comma list; default all), BENCH_SLICES
// (4: each row's floor and service runs cut into slices of BENCH_SECONDS / 4, floor-service,
// service-floor, … so that the machine's drift weighs on both alike; 1: floor then service, once). `post-hot-idem` and
// `post-spread-idem` send a new Idempotency-Key with every request (the floor ignores it): what a key costs.
// `post-hot-safety` is post-hot on a second tenant of the service whose safety settings list 2,000 banned
// and 2,000 suspect words (the floor runs post-hot): what the rules cost, read against the post-hot row.
// `post-reply` and `post-reply-email` post replies (from 100 readers) to 50 comments of a discussion
// on the service (the floor, which has no replies, runs post-hot for them): in post-reply their authors
// have no email address; in post-reply-email they have one and the tenant mails replies at once, so
// every reply also queues an email in its transaction (eng_insert_event): read the two against each other.
// `post-hot-markdown` is post-hot with a 2 KB Markdown body (emphasis, links, a list, a quote, code; the
// floor stores the same body as it is) and `post-hot-plain` with 2 KB of plain prose (no markup, no links):
// read against each other, what formatting costs a body of the same size (and against post-hot, what a
// 2 KB body costs at all). `post-hot-text` posts the Markdown body's own text, as the reader reads it
// (renderBody's text: no markup; the URLs it shows stay, so its autolinks are links again): the same
// comment written without formatting. One sentence repeated compresses to a tenth in PostgreSQL and
// has 20 distinct words; this text has the Markdown body's words, its repetition and its links.
// `post-hot-pgbouncer` and `get-one-pgbouncer` are post-hot and get-one through a transaction-mode
// PgBouncer the bench starts (test/support/pgbouncer.ts: stock settings, pool_mode = transaction),
// a second floor and a second service in front of it, each with a database of its own: the service
// with DATABASE_POOLER=transaction (unnamed statements, the statement timeout set per statement or
// transaction: src/db/pooler.ts), the floor with unnamed statements and, as directly, no timeout.
// `post-hot-tables`, `post-spread-tables` and `post-hot-typical-tables` are those rows against a third
// floor that writes the same POST onto the service's own tables (its schema migrated into the floor's
// database: every index and generated column of `comments`, the partitioned event log), still one
// statement and no rules (FLOOR_TABLES=service, bench/floor/statements.ts): the service against the
// same storage, so the row reads what the service's code costs, where the plain floor's row reads
// that plus what its storage costs. `get-one-tables`, `list-rest-tables` and `list-graphql-tables`
// read that floor's comments (from its own POSTs) off the same tables, answering the service's own
// representation of a comment (its HTML, votes, kind, the author's badge: the plain floor's has 11
// members, the service's 17): what the service's read path costs beside a read of the same data.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { createServer } from "node:net";
import autocannon from "autocannon";
import pg from "pg";
import { assertion, compiledScript, fmtTable, PG_ADMIN_URL, serviceEntry } from "./support.js";
import { migratePostgres } from "../src/db/migrate.js";
import { renderBody } from "../src/lib/markdown.js";
import { TYPICAL_BODY } from "./bodies.js";
import { pgbouncerVersion, startPgBouncer, type PgBouncer } from "../test/support/pgbouncer.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** each row's floor and service runs cut into this many slices, alternating (see measurePair) */
const SLICES = Math.max(1, Math.floor(Number(process.env.BENCH_SLICES ?? 4)));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PATHS = (
  process.env.BENCH_PATHS ??
  "post-hot,post-hot-typical,post-hot-markdown,post-hot-plain,post-hot-safety,post-hot-idem,post-spread,post-spread-idem,post-reply,post-reply-email,reaction,list-rest,list-graphql,get-one,post-hot-pgbouncer,get-one-pgbouncer"
).split(",");
/** rows run against the floor and the service started behind the bench's PgBouncer */
const POOLED = "-pgbouncer";
/** rows run against the floor writing onto the service's own tables */
const ON_TABLES = "-tables";
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const ADMIN_JWT_SECRET = "bench-admin-secret-0123456789abcdef0123456789";

const children: ChildProcess[] = [];
const databases: string[] = [];
let bouncer: PgBouncer | undefined;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function createDatabase(tag: string): Promise<string> {
  const name = `eng_bench_${tag}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  databases.push(name);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * ANALYZE in every database of the run (floor and service alike), before each path: the write rows
 * grow the tables by tens of thousands of rows faster than autovacuum re-reads their statistics, and a
 * plan chosen on the warm-up's small tables (the floor's prepared list once ran 188 ms a request) would
 * otherwise decide the read rows. New statistics make both sides plan again.
 */
async function analyzeAll(): Promise<void> {
  for (const name of databases) {
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${name}`;
    const c = new pg.Client({ connectionString: url.toString() });
    await c.connect();
    try {
      await c.query(process.env.BENCH_VACUUM ? "VACUUM (ANALYZE)" : "ANALYZE");
      if (process.env.BENCH_VACUUM) await c.query("CHECKPOINT");
    } finally {
      await c.end();
    }
  }
}

/** Starts a compiled bench server (`node <script>`) and resolves with the JSON after its `ready ` line. */
async function startReady(source: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const script = await compiledScript(source);
  // BENCH_CPU_PROFILE=<dir>: the bench's own servers write a V8 CPU profile there too, to read beside the service's
  const profile = process.env.BENCH_CPU_PROFILE
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}/${basename(source, ".ts")}`]
    : [];
  // BENCH_FLOOR_NODE_ARGS: more node options for the bench's own servers (the floors), as BENCH_SERVICE_NODE_ARGS for the service
  const nodeArgs = (process.env.BENCH_FLOOR_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...profile, ...nodeArgs, script], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /ready (\{.*\})/.exec(out);
      if (m) resolve({ ...(JSON.parse(m[1]!) as Record<string, unknown>), pid: child.pid });
    });
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

async function startService(pooler?: PgBouncer): Promise<{
  url: string;
  apiKey: string;
  identitySecret: string;
  synchronousCommit: string;
  pid: number;
  safety: { apiKey: string; identitySecret: string };
}> {
  const databaseUrl = await createDatabase(pooler ? "svcpool" : "svc");
  const port = await freePort();
  const env = {
    DATABASE_URL: pooler ? pooler.urlFor(databaseUrl) : databaseUrl,
    ...(pooler ? { DATABASE_POOLER: "transaction", DATABASE_DIRECT_URL: databaseUrl } : {}),
    REDIS_URL,
    ADMIN_JWT_SECRET,
    PORT: String(port),
    LOG_LEVEL: "error",
    RUN_WEBHOOK_WORKER: "1",
  };
  // BENCH_CPU_PROFILE=<dir>: the service writes a V8 CPU profile there when it exits (open it in Chrome DevTools)
  const profile = process.env.BENCH_CPU_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`] : [];
  // BENCH_SERVICE_NODE_ARGS: more node options for the service (e.g. "--trace-gc")
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? "").split(" ").filter(Boolean);
  // BENCH_SERVICE_DIR: run another checkout's service (its own `npm run build` done, node_modules
  // present) against this bench and its floor, e.g. an older commit in a git worktree when bisecting
  const cwd = process.env.BENCH_SERVICE_DIR;
  const child = spawn(process.execPath, [...profile, ...nodeArgs, ...(cwd ? ["dist/main.js"] : serviceEntry())], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", process.env.BENCH_SERVICE_STDOUT ? "inherit" : "ignore", "inherit"],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      if (i > 300) throw new Error("the service did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const out = execFileSync(process.execPath, ["--import", "tsx", "src/cli/index.ts", "tenant", "create", "--name", "bench", "--json"], {
    cwd,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  const tenant = JSON.parse(out.trim().split("\n").pop()!) as { tenantId: string; apiKey: string; identitySecret: string };
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  // a budget no bench run reaches: we measure the service, not the limiter's refusals
  // replies are mailed at once to readers with an address (post-reply-email)
  await db.query(
    `UPDATE tenants SET settings = '{"rateLimits": {"requestsPerMinute": 1000000}, "email": {"defaultReplies": "immediate"}}' WHERE id = $1`,
    [tenant.tenantId],
  );
  // post-hot-safety's tenant: 2,000 banned and 2,000 suspect words (distinct words a comment does not contain)
  const second = execFileSync(process.execPath, ["--import", "tsx", "src/cli/index.ts", "tenant", "create", "--name", "safety", "--json"], {
    cwd,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  const safe = JSON.parse(second.trim().split("\n").pop()!) as { tenantId: string; apiKey: string; identitySecret: string };
  const words = (prefix: string) =>
    Array.from(
      { length: 2000 },
      (_, i) => prefix + [...String(i)].map((d) => "kakekikokumamemimomu".slice(2 * Number(d), 2 * Number(d) + 2)).join(""),
    );
  const safetySettings = { rateLimits: { requestsPerMinute: 1000000 }, safety: { bannedWords: words("bad"), suspectWords: words("sus") } };
  await db.query(`UPDATE tenants SET settings = $2 WHERE id = $1`, [safe.tenantId, JSON.stringify(safetySettings)]);
  const sc = (await db.query("SHOW synchronous_commit")).rows[0].synchronous_commit as string;
  await db.end();
  const safety = { apiKey: safe.apiKey, identitySecret: safe.identitySecret };
  return { url, apiKey: tenant.apiKey, identitySecret: tenant.identitySecret, synchronousCommit: sc, pid: child.pid!, safety };
}

interface Target {
  name: "floor" | "service" | "floor via PgBouncer" | "service via PgBouncer" | "floor on the service's tables";
  /** the server process (its CPU time is read around each run) */
  pid: number;
  url: string;
  apiKey: string;
  identities: string[];
  commentId?: string;
  /** the comments post-reply and post-reply-email answer (the service only): by a reader without and with an address */
  replyTo?: { quiet: string[]; mailed: string[] };
  /** the service's tenant with the safety word lists (post-hot-safety) */
  safety?: { apiKey: string; identities: string[] };
}

/**
 * The parents of the reply rows: 50 comments in discussion `replies-quiet` by readers without an
 * address, 50 in `replies-mailed` by readers with one (replies spread over them, as on a real site).
 */
async function seedParents(t: Target, secret: string): Promise<{ quiet: string[]; mailed: string[] }> {
  const post = async (discussion: string, sub: string, claims: Record<string, string>) => {
    const identity = await assertion(secret, sub, { name: sub, ...claims });
    const res = await fetch(`${t.url}/api/v1/discussions/${discussion}/comments`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": t.apiKey, "x-service-identity": identity },
      body: JSON.stringify({ body: `${sub}'s comment` }),
    });
    if (res.status !== 201) throw new Error(`${t.name}: seeding a parent answered ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  const quiet: string[] = [];
  const mailed: string[] = [];
  for (let i = 0; i < 50; i++) {
    quiet.push(await post("replies-quiet", `q${i}`, {}));
    mailed.push(await post("replies-mailed", `m${i}`, { email: `m${i}@bench.example` }));
  }
  return { quiet, mailed };
}

async function identities(secret: string): Promise<string[]> {
  return Promise.all(Array.from({ length: 100 }, (_, i) => assertion(secret, `r${i}`, { name: `Reader ${i}` })));
}

const GRAPHQL_LIST = JSON.stringify({
  query: `{ comments(discussionId: "hot", first: 20) { edges { node { id discussionId parentId author { id name avatarUrl } body status pinned editedAt createdAt reactions { kind count } replyCount } } pageInfo { hasNextPage endCursor } } }`,
});

/** About 2 KB of the Markdown readers write: paragraphs, emphasis, links, an autolink, a list, a quote, code. */
const MARKDOWN_BODY = (() => {
  const para =
    "I read the **whole piece** twice, and the _second half_ is where it gets interesting: the ~~old~~ numbers in " +
    "[the report](https://example.org/reports/2026?page=4#table-2) do not match what https://stats.example.com/q3 shows.";
  const body = [
    para,
    "> Quoting the article: `growth` was *flat* for three quarters.",
    "- first, the sample is small\n- second, the method changed\n- third, see www.example.net/methods",
    "```\nconst ratio = a / b; // not what they plotted\n```",
    para,
    "1. check the source\n2. ask the author, mail them at editor@example.com\n3. **update** the chart",
    para,
    para,
  ].join("\n\n");
  return `${body}\n\n${body}`.slice(0, 2_048);
})();

/** As many characters of plain prose: words, commas and full stops, no markup and nothing that looks like a link. */
/** The Markdown body's text, as its reader reads it: the same comment written without formatting. */
const TEXT_BODY = renderBody(MARKDOWN_BODY, { markdown: true, images: false }).text;

const PLAIN_BODY = (() => {
  const sentence = "I read the whole piece twice, and the second half is where it gets interesting because the numbers do not match. ";
  return sentence.repeat(Math.ceil(MARKDOWN_BODY.length / sentence.length)).slice(0, MARKDOWN_BODY.length);
})();

/** The autocannon options of one path against one target. */
function pathOptions(path: string, t: Target): autocannon.Options {
  const base = { url: t.url, connections: CONNECTIONS, duration: SECONDS };
  const json = { "content-type": "application/json", "x-api-key": t.apiKey };
  const pick = <T>(a: T[]) => a[Math.floor(Math.random() * a.length)]!;
  if (path.endsWith(POOLED)) return pathOptions(path.slice(0, -POOLED.length), t);
  if (path.endsWith(ON_TABLES)) return pathOptions(path.slice(0, -ON_TABLES.length), t);
  switch (path) {
    case "post-hot-markdown":
    case "post-hot-plain":
    case "post-hot-text":
    case "post-hot-typical":
      return {
        ...base,
        requests: [
          {
            method: "POST",
            path: "/api/v1/discussions/hot/comments",
            body: JSON.stringify({
              body:
                path === "post-hot-plain"
                  ? PLAIN_BODY
                  : path === "post-hot-text"
                    ? TEXT_BODY
                    : path === "post-hot-typical"
                      ? TYPICAL_BODY
                      : MARKDOWN_BODY,
            }),
            setupRequest: (req) => ({ ...req, headers: { ...json, "x-service-identity": pick(t.identities) } }),
          },
        ],
      };
    case "post-hot":
    case "post-hot-idem":
    case "post-spread":
    case "post-spread-idem":
      return {
        ...base,
        requests: [
          {
            method: "POST",
            path: "/api/v1/discussions/hot/comments",
            body: JSON.stringify({ body: "hello from the bench" }),
            setupRequest: (req) => ({
              ...req,
              path: path.startsWith("post-spread")
                ? `/api/v1/discussions/d${Math.floor(Math.random() * 1000)}/comments`
                : "/api/v1/discussions/hot/comments",
              headers: {
                ...json,
                "x-service-identity": pick(t.identities),
                // a new key per request: what each first try costs (the floor ignores the header)
                ...(path.endsWith("-idem") ? { "idempotency-key": randomUUID() } : {}),
              },
            }),
          },
        ],
      };
    case "post-reply":
    case "post-reply-email": {
      if (!t.replyTo) return pathOptions("post-hot", t); // the floor has no replies
      const [discussion, parents] = path === "post-reply" ? ["replies-quiet", t.replyTo.quiet] : ["replies-mailed", t.replyTo.mailed];
      return {
        ...base,
        requests: [
          {
            method: "POST",
            path: `/api/v1/discussions/${discussion}/comments`,
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({ body: "a reply from the bench", parentId: pick(parents) }),
              headers: { ...json, "x-service-identity": pick(t.identities) },
            }),
          },
        ],
      };
    }
    case "post-hot-safety":
      return pathOptions("post-hot", t.safety ? { ...t, apiKey: t.safety.apiKey, identities: t.safety.identities } : t);
    case "reaction":
      return {
        ...base,
        requests: [
          {
            method: "POST",
            path: `/api/v1/comments/${t.commentId}/reactions`,
            body: JSON.stringify({ kind: "like" }),
            setupRequest: (req) => ({ ...req, headers: { ...json, "x-service-identity": pick(t.identities) } }),
          },
        ],
      };
    case "list-rest":
      return { ...base, url: `${t.url}/api/v1/discussions/hot/comments?limit=20`, method: "GET", headers: { "x-api-key": t.apiKey } };
    case "list-graphql":
      // the floor has no GraphQL: its REST list is the floor for the GraphQL list too
      return t.name.startsWith("floor")
        ? pathOptions("list-rest", t)
        : { ...base, url: `${t.url}/graphql`, method: "POST", headers: json, body: GRAPHQL_LIST };
    case "get-one":
      return { ...base, url: `${t.url}/api/v1/comments/${t.commentId}`, method: "GET", headers: { "x-api-key": t.apiKey } };
    default:
      throw new Error(`unknown path ${path}`);
  }
}

interface Measured {
  /** requests answered, and the wall seconds they took (summed over a row's slices) */
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  bad: number;
  /** the server process's CPU time (user + system) per request, µs */
  cpuUs: number;
  /** PostgreSQL's CPU time (every postgres process of the machine's cluster) per request, µs */
  dbCpuUs: number;
  /** the server's main thread (its JavaScript; not GC helpers, libuv or compiler threads): CPU per request, µs */
  mainUs: number;
  /** the share of the run's wall time the main thread was on a CPU: near 100 % it is the bottleneck */
  mainBusy: number;
}

/** User + system CPU time in a /proc/<pid>/stat line, in clock ticks (100 per second). */
function ticksIn(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** A process's CPU time so far (user + system), in clock ticks. */
const cpuTicks = (pid: number): number => ticksIn(readFileSync(`/proc/${pid}/stat`, "utf8"));

/** A process's main thread's CPU time so far (the thread whose id is the process's), in clock ticks. */
const mainThreadTicks = (pid: number): number => ticksIn(readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8"));

/** CPU ticks so far of each postgres process (the cluster both databases live in), by pid. */
function postgresTicks(): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).startsWith("postgres")) ticks.set(entry, ticksIn(stat));
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks;
}

/** What the postgres processes spent since `before` (a process that ended meanwhile is not counted). */
function postgresTicksSince(before: Map<string, number>): number {
  let spent = 0;
  for (const [pid, t] of postgresTicks()) spent += t - (before.get(pid) ?? 0);
  return spent;
}

async function measure(opts: autocannon.Options, pid: number): Promise<Measured> {
  const cpu0 = cpuTicks(pid);
  const main0 = mainThreadTicks(pid);
  const db0 = postgresTicks();
  const started = performance.now();
  const r = await autocannon(opts);
  const seconds = (performance.now() - started) / 1000;
  const mainSeconds = (mainThreadTicks(pid) - main0) / 100;
  const mainBusy = (100 * mainSeconds) / seconds;
  const mainUs = (mainSeconds * 1e6) / Math.max(1, r.requests.total);
  const cpuUs = (((cpuTicks(pid) - cpu0) / 100) * 1e6) / Math.max(1, r.requests.total);
  const dbCpuUs = ((postgresTicksSince(db0) / 100) * 1e6) / Math.max(1, r.requests.total);
  const bad = r.non2xx + r.errors + r.timeouts;
  if (bad > 0)
    console.warn(`${String(opts.url)}: non-2xx by status ${JSON.stringify(r.statusCodeStats)}, errors ${r.errors}, timeouts ${r.timeouts}`);
  const requests = r.requests.total;
  return {
    requests,
    seconds,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    bad,
    cpuUs,
    dbCpuUs,
    mainUs,
    mainBusy,
  };
}

/**
 * One row's slices as one measurement (one slice: itself): the slices' rps weighted by their time, the CPU figures
 * weighted by each slice's requests, the latency percentiles the median of the slices'.
 */
function combine(slices: readonly Measured[]): Measured {
  const requests = slices.reduce((n, m) => n + m.requests, 0);
  const seconds = slices.reduce((n, m) => n + m.seconds, 0);
  const perRequest = (f: (m: Measured) => number) => slices.reduce((n, m) => n + f(m) * m.requests, 0) / Math.max(1, requests);
  return {
    requests,
    seconds,
    rps: Math.round(slices.reduce((n, m) => n + m.rps * m.seconds, 0) / seconds),
    p50: median(slices.map((m) => m.p50)),
    p99: median(slices.map((m) => m.p99)),
    bad: slices.reduce((n, m) => n + m.bad, 0),
    cpuUs: perRequest((m) => m.cpuUs),
    dbCpuUs: perRequest((m) => m.dbCpuUs),
    mainUs: perRequest((m) => m.mainUs),
    mainBusy: slices.reduce((n, m) => n + m.mainBusy * m.seconds, 0) / seconds,
  };
}

/**
 * The floor's and the service's run of one row, in BENCH_SLICES slices of the row's seconds each,
 * alternating floor-service, service-floor, … (ABBA): a machine whose speed drifts over the row
 * (these shared boxes do, by a fifth within a minute) weighs on both sides alike.
 */
async function measurePair(floorOpts: autocannon.Options, floorPid: number, serviceOpts: autocannon.Options, servicePid: number) {
  const f: Measured[] = [];
  const s: Measured[] = [];
  const duration = SECONDS / SLICES;
  for (let i = 0; i < SLICES; i++) {
    const floorRun = () => measure({ ...floorOpts, duration }, floorPid).then((m) => void f.push(m));
    const serviceRun = () => measure({ ...serviceOpts, duration }, servicePid).then((m) => void s.push(m));
    if (i % 2 === 0) {
      await floorRun();
      await serviceRun();
    } else {
      await serviceRun();
      await floorRun();
    }
  }
  return { f: combine(f), s: combine(s) };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * One row's service runs against another's, round by round (the i-th run of each): the median of the
 * rounds' rps ratios with each round's, and the median CPU ratio. Undefined unless both rows ran.
 */
function against(measured: Map<string, Measured[]>, row: string, base: string): string | undefined {
  const [x, y] = [measured.get(row), measured.get(base)];
  if (!x?.length || !y?.length) return undefined;
  const rounds = Array.from({ length: Math.min(x.length, y.length) }, (_, i) => [x[i]!, y[i]!] as const);
  const rps = rounds.map(([a, b]) => (100 * a.rps) / Math.max(1, b.rps));
  const cpu = rounds.map(([a, b]) => a.cpuUs / Math.max(1, b.cpuUs));
  const each = rounds.length > 1 ? ` (median of ${rounds.length} rounds: ${rps.map((r) => Math.round(r)).join(" / ")} %)` : "";
  const busy = (ms: readonly Measured[]) => `${Math.round(median(ms.map((m) => m.mainBusy)))} %`;
  return (
    `${row} against ${base} (service): ${Math.round(median(rps))} % of its rps${each}, ${median(cpu).toFixed(2)}× its CPU per request; ` +
    `main thread busy ${busy(x)} against ${busy(y)}`
  );
}

async function seedComment(t: Target): Promise<string> {
  const res = await fetch(`${t.url}/api/v1/discussions/hot/comments`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": t.apiKey, "x-service-identity": t.identities[0]! },
    body: JSON.stringify({ body: "the reacted-to comment" }),
  });
  if (res.status !== 201) throw new Error(`${t.name}: seeding a comment answered ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** A floor started by `startReady`, as the bench targets it. */
async function floorTarget(name: Target["name"], info: Record<string, unknown>): Promise<Target> {
  return {
    name,
    pid: info.pid as number,
    url: `http://127.0.0.1:${info.port as number}`,
    apiKey: info.apiKey as string,
    identities: await identities(info.identitySecret as string),
  };
}

/** The second floor and service, behind a PgBouncer the bench starts (the `-pgbouncer` rows). */
async function startPooled(): Promise<{ floor: Target; service: Target }> {
  bouncer = await startPgBouncer({ serverUrl: PG_ADMIN_URL });
  const floorInfo = await startReady("bench/floor/server.ts", {
    DATABASE_URL: bouncer.urlFor(await createDatabase("floorpool")),
    FLOOR_POOLER: "transaction",
    REDIS_URL,
    PORT: "0",
  });
  const svc = await startService(bouncer);
  const floor = await floorTarget("floor via PgBouncer", floorInfo);
  const service: Target = {
    name: "service via PgBouncer",
    pid: svc.pid,
    url: svc.url,
    apiKey: svc.apiKey,
    identities: await identities(svc.identitySecret),
  };
  floor.commentId = await seedComment(floor);
  service.commentId = await seedComment(service);
  service.safety = { apiKey: svc.safety.apiKey, identities: await identities(svc.safety.identitySecret) };
  return { floor, service };
}

/** The floor writing its POST onto the service's own tables (the `-tables` rows). */
async function startFloorOnServiceTables(): Promise<Target> {
  const databaseUrl = await createDatabase("floortables");
  await migratePostgres(databaseUrl);
  const info = await startReady("bench/floor/server.ts", { DATABASE_URL: databaseUrl, FLOOR_TABLES: "service", REDIS_URL, PORT: "0" });
  const target = await floorTarget("floor on the service's tables", info);
  target.commentId = await seedComment(target);
  return target;
}

async function main() {
  const yoga = await startReady("bench/floor/bare-yoga.ts", { PORT: String(await freePort()) });
  const floorInfo = await startReady("bench/floor/server.ts", { DATABASE_URL: await createDatabase("floor"), REDIS_URL, PORT: "0" });
  const svc = await startService();
  const floor = await floorTarget("floor", floorInfo);
  const service: Target = {
    name: "service",
    pid: svc.pid,
    url: svc.url,
    apiKey: svc.apiKey,
    identities: await identities(svc.identitySecret),
  };
  floor.commentId = await seedComment(floor);
  service.commentId = await seedComment(service);
  service.replyTo = await seedParents(service, svc.identitySecret);
  const pooled = PATHS.some((p) => p.endsWith(POOLED)) ? await startPooled() : undefined;
  const onTables = PATHS.some((p) => p.endsWith(ON_TABLES)) ? await startFloorOnServiceTables() : undefined;

  // a GraphQL answer with `errors` is still HTTP 200: make sure the measured query works
  const probe = await fetch(`${service.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": service.apiKey },
    body: GRAPHQL_LIST,
  });
  const probed = (await probe.json()) as { errors?: unknown[] };
  if (probed.errors) throw new Error(`the GraphQL list query fails: ${JSON.stringify(probed.errors)}`);

  // every path measured is run once first on each side (a new table such as the keys' grows from
  // empty, code is compiled): the runs measure a server in its steady state
  const warm = Math.min(3, SECONDS);
  const warmPaths = [...new Set(["post-hot", "list-rest", ...PATHS.filter((p) => !p.endsWith(POOLED))])];
  for (const t of [floor, service]) for (const p of warmPaths) await measure({ ...pathOptions(p, t), duration: warm }, t.pid);
  if (onTables)
    for (const p of ["post-hot-tables", ...PATHS.filter((q) => q.endsWith(ON_TABLES))])
      await measure({ ...pathOptions(p, onTables), duration: warm }, onTables.pid);
  if (pooled)
    for (const t of [pooled.floor, pooled.service])
      for (const p of ["post-hot", ...PATHS.filter((q) => q.endsWith(POOLED))])
        await measure({ ...pathOptions(p, t), duration: warm }, t.pid);
  const bare = await measure(
    {
      url: `http://127.0.0.1:${yoga.port as number}/graphql?query=%7Bhello%7D`,
      connections: CONNECTIONS,
      duration: SECONDS,
    },
    yoga.pid as number,
  );

  const rows: (string | number)[][] = [];
  // each path's service runs (a path named twice in BENCH_PATHS runs twice: the ratios below are read round by round)
  const measured = new Map<string, Measured[]>();
  for (const path of PATHS) {
    const [ft, st] =
      path.endsWith(POOLED) && pooled
        ? [pooled.floor, pooled.service]
        : path.endsWith(ON_TABLES) && onTables
          ? [onTables, service]
          : [floor, service];
    await analyzeAll();
    const { f, s } = await measurePair(pathOptions(path, ft), ft.pid, pathOptions(path, st), st.pid);
    measured.set(path, [...(measured.get(path) ?? []), s]);
    rows.push([
      path,
      f.rps,
      s.rps,
      `${Math.round((100 * s.rps) / Math.max(1, f.rps))} %`,
      `${f.p50} / ${f.p99}`,
      `${s.p50} / ${s.p99}`,
      `${(s.p99 / Math.max(1, f.p99)).toFixed(1)}×`,
      `${f.bad} / ${s.bad}`,
      `${Math.round(f.cpuUs)} / ${Math.round(s.cpuUs)}`,
      `${(s.cpuUs / Math.max(1, f.cpuUs)).toFixed(2)}×`,
      `${Math.round(f.dbCpuUs)} / ${Math.round(s.dbCpuUs)}`,
      `${Math.round(f.mainUs)} (${Math.round(f.mainBusy)} %) / ${Math.round(s.mainUs)} (${Math.round(s.mainBusy)} %)`,
    ]);
  }
  console.log(
    `\n${CONNECTIONS} connections, ${SECONDS} s per run; bare graphql-yoga {hello}: ${bare.rps} rps (p99 ${bare.p99} ms); ` +
      `synchronous_commit: floor ${String(floorInfo.synchronousCommit)}, service ${svc.synchronousCommit}\n`,
  );
  // rows read against each other, round by round (the i-th run of one against the i-th of the other,
  // run next to each other when BENCH_PATHS alternates them): the median ratio and each round's
  for (const [row, base] of [
    ["post-hot-safety", "post-hot"],
    ["post-hot-typical", "post-hot"],
    ["post-hot-markdown", "post-hot-plain"],
    ["post-hot-markdown", "post-hot-text"],
    ["post-hot-markdown", "post-hot"],
    ["post-reply-email", "post-reply"],
  ] as const) {
    const line = against(measured, row, base);
    if (line) console.log(`${line}\n`);
  }
  if (pooled)
    console.log(
      `*${POOLED}: both through one transaction-mode ${pgbouncerVersion()} (stock settings: default_pool_size 20, max_client_conn 100), ` +
        `each with a database of its own; statements unnamed on both sides; the service also sets its statement timeout ` +
        `per statement or transaction (src/db/pooler.ts), the floor sets none (as directly)\n`,
    );
  if (onTables)
    console.log(
      `*${ON_TABLES}: the floor's POST written onto the service's own tables (its migrated schema, every index and generated ` +
        `column), one statement and no rules; the service as in the other rows\n`,
    );
  console.log(
    fmtTable(
      [
        "path",
        "floor rps",
        "service rps",
        "service/floor",
        "floor p50/p99 ms",
        "service p50/p99 ms",
        "p99 ratio",
        "non-2xx floor/service",
        "CPU µs/req floor/service",
        "CPU ratio",
        "PostgreSQL CPU µs/req floor/service",
        "main thread µs/req (busy) floor/service",
      ],
      rows,
    ),
  );
}

async function cleanup() {
  // SIGTERM, then wait for each child to finish its graceful stop (a CPU profile is written at exit)
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          const timer = setTimeout(resolve, 20_000);
          c.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
          c.kill("SIGTERM");
        }),
    ),
  );
  await bouncer?.stop();
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
}

try {
  await main();
} finally {
  await cleanup();
}
