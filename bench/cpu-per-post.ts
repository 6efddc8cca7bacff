// npm run bench:cpu-per-post -- <checkout> [<checkout> …]: the server CPU one POST costs, per checkout,
// for bisecting the write path. Each checkout (a git worktree of a commit, `npm run build` done and
// node_modules present; "." is this one) runs its own service against a fresh database, and a few
// posts at a time (BENCH_IN_FLIGHT, 4) go to one discussion (BENCH_SPREAD=1: over 1,000), after 500
// to warm up, BENCH_POSTS (3,000) measured. It prints the service process's CPU a post and the CPU of
// every PostgreSQL process of the database's cluster a post (read from /proc: steadier than
// throughput on a shared machine), checkouts alternating over BENCH_ROUNDS (2). Run it under
// `nice -n -15` with BENCH_PG_URL on a PostgreSQL cluster of its own (its postmaster reniced too)
// when the machine is busy: the CPU a request takes still grows with the machine's load.
// BENCH_READ=list: after the same posts (to one discussion), what is measured is BENCH_POSTS reads of
// that discussion's first page of 20 comments over REST (GET /api/v1/discussions/hot/comments), for
// bisecting the read path.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import pg from "pg";
import { assertion, clusterCpu, cpuOf, fmtTable, PG_ADMIN_URL } from "./support.js";

const POSTS = Number(process.env.BENCH_POSTS ?? 3000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const READ = process.env.BENCH_READ === "list";
const checkouts = process.argv.slice(2).map((d) => resolve(d));
if (checkouts.length === 0) throw new Error("name one or more checkouts (directories), e.g. . ../wt/0dc1c86");

async function measure(dir: string): Promise<{ service: number; postgres: number; rps: number }> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  const name = `eng_bench_cpu_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const env = {
    ...process.env,
    DATABASE_URL: url.toString(),
    REDIS_URL,
    ADMIN_JWT_SECRET: "bench-admin-secret-0123456789abcdef0123456789",
    PORT: String(port),
    LOG_LEVEL: "error",
    RUN_WEBHOOK_WORKER: "1",
  };
  let child: ChildProcess | undefined;
  try {
    child = spawn(process.execPath, ["dist/main.js"], { cwd: dir, env, stdio: ["ignore", "ignore", "inherit"] });
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      if (i > 300 || child.exitCode !== null) throw new Error(`${dir}: the service did not start`);
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const out = execFileSync(process.execPath, ["--import", "tsx", "src/cli/index.ts", "tenant", "create", "--name", "bench", "--json"], {
      cwd: dir,
      env,
      encoding: "utf8",
    });
    const t = JSON.parse(out.trim().split("\n").pop()!) as { tenantId: string; apiKey: string; identitySecret: string };
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    await db.query(`UPDATE tenants SET settings = '{"rateLimits": {"requestsPerMinute": 1000000}}' WHERE id = $1`, [t.tenantId]);
    await db.end();
    const identities = await Promise.all(Array.from({ length: 100 }, (_, i) => assertion(t.identitySecret, `r${i}`, { name: `r${i}` })));
    const post = async (i: number) => {
      const discussion = process.env.BENCH_SPREAD ? `d${Math.floor(Math.random() * 1000)}` : "hot";
      const res = await fetch(`${base}/api/v1/discussions/${discussion}/comments`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": t.apiKey, "x-service-identity": identities[i % 100]! },
        body: JSON.stringify({ body: "hello from the bench" }),
      });
      if (res.status !== 201) throw new Error(`${dir}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    const list = async () => {
      const res = await fetch(`${base}/api/v1/discussions/hot/comments?limit=20`, { headers: { "x-api-key": t.apiKey } });
      if (res.status !== 200) throw new Error(`${dir}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    const run = async (n: number, op: (i: number) => Promise<void> = post) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < n) await op(next++);
        }),
      );
    };
    await run(500);
    if (READ) await run(500, list);
    const s0 = cpuOf(child.pid!);
    const p0 = await clusterCpu(admin);
    const w0 = performance.now();
    await run(POSTS, READ ? list : post);
    const seconds = (performance.now() - w0) / 1000;
    const s1 = cpuOf(child.pid!);
    const p1 = await clusterCpu(admin);
    return { service: (s1 - s0) / POSTS, postgres: (p1 - p0) / POSTS, rps: POSTS / seconds };
  } finally {
    child?.kill("SIGTERM");
    if (child && child.exitCode === null) await new Promise((r) => child!.once("exit", r));
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

const rows: (string | number)[][] = [];
for (let round = 1; round <= ROUNDS; round++)
  for (const dir of checkouts) {
    const m = await measure(dir);
    rows.push([dir, round, Math.round(m.service), Math.round(m.postgres), Math.round(m.rps)]);
    console.log(
      `${dir} round ${round}: service ${Math.round(m.service)} µs a ${READ ? "read" : "post"}, PostgreSQL ${Math.round(m.postgres)} µs`,
    );
  }
const what = READ ? "read" : "post";
console.log(
  `\n${POSTS} ${READ ? "reads of a page of 20 comments" : "posts"}, ${IN_FLIGHT} in flight, ${process.env.BENCH_SPREAD ? "over 1,000 discussions" : "one discussion"}\n`,
);
console.log(fmtTable(["checkout", "round", `service CPU µs/${what}`, `PostgreSQL CPU µs/${what}`, `${what}s/s`], rows));
