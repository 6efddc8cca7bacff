// npm run bench:federation-out — one discussion announced to BENCH_FOLLOWERS followers' inboxes by the
// service's outbound pipeline (an `activitypub_fanout` job made into one signed `activitypub` job per
// inbox, each proven once, signed and sent by the outbound worker) beside a hand-written floor
// (bench/floor/federation-out.ts: one job per inbox in one statement, then 16 loops that claim one
// job with SKIP LOCKED, sign it as RFC 9421 with an RSA-2048 key in memory, POST it, mark it done),
// to the same receiver, in the same run. Not a test: it prints a table.
//
//  - the service runs as `npm start` runs it (built into dist/, plain node, its own database, Redis,
//    the worker on, defaults: at opened WEBHOOK_MAX_PER_ENDPOINT = 16 attempts in flight to one remote
//    server); the floor is compiled the same way and runs as a process of its own with as many loops;
//  - the followers are rows of federation_followers, each with an inbox of its own on one loopback
//    server (a Mastodon-shaped server without a shared inbox), a node:http server in a thread of
//    this process that answers 202 and notes arrival times and the connections opened to it;
//  - a round announces a new discussion (the service: PUT with a url, as a site's page does; the
//    floor: started with the Create(Article) the service sent in the first round), in alternating
//    order; a rate is (deliveries − 1) / (last arrival − first arrival), so start-up is not counted;
//    CPU per delivery: the service process's (from /proc, until every job is recorded) or the floor's
//    own, and PostgreSQL's (its postmaster and every process it started) over the same span.
// Env: BENCH_FOLLOWERS (2000), BENCH_ROUNDS (3), BENCH_PG_URL, BENCH_REDIS_URL, BENCH_CPU_PROFILE (a directory).
import { spawn, type ChildProcess } from "node:child_process";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import pg from "pg";
import { benchDatabase, clusterCpu, compiledScript, cpuOf, fmtTable, startServiceProcess } from "./support.js";
import { DEFAULT_WORKER_OPTIONS } from "../src/outbound/worker.js";

const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = DEFAULT_WORKER_OPTIONS.maxPerEndpoint;
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

// ---- the followers' server, in its own thread: 202 to every POST; reports arrival times, the
// connections opened (the sender's parallelism), and the first body it was sent ----
const RECEIVER_JS = `
const http = require("node:http");
const { parentPort } = require("node:worker_threads");
let batch = [], opened = 0, body = null;
setInterval(() => { if (batch.length) { parentPort.postMessage({ at: batch, opened }); batch = []; } }, 5).unref();
parentPort.on("message", () => { opened = 0; body = null; });
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    batch.push(performance.timeOrigin + performance.now());
    if (body === null) parentPort.postMessage({ body: (body = Buffer.concat(chunks).toString("utf8")) });
    res.writeHead(202).end();
  });
});
server.on("connection", () => opened++);
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
`;
let arrivals: number[] = [];
let opened = 0;
let firstBody: string | null = null;
const receiver = new Worker(RECEIVER_JS, { eval: true });
const receiverBase = await new Promise<string>((resolve) =>
  receiver.on("message", (m: { port?: number; at?: number[]; opened?: number; body?: string }) => {
    if (m.port) resolve(`http://127.0.0.1:${m.port}`);
    if (m.at) arrivals.push(...m.at);
    if (m.opened !== undefined) opened = Math.max(opened, m.opened);
    if (m.body !== undefined) firstBody ??= m.body;
  }),
);
const resetReceiver = async () => {
  receiver.postMessage("reset");
  await sleep(20);
  arrivals = [];
  opened = 0;
};
const allArrived = async () => {
  while (arrivals.length < FOLLOWERS) await sleep(5);
  const sorted = [...arrivals].sort((a, b) => a - b);
  return { rate: (FOLLOWERS - 1) / ((sorted.at(-1)! - sorted[0]!) / 1000), first: sorted[0]!, last: sorted.at(-1)! };
};

const children: ChildProcess[] = [];
const database = await benchDatabase("eng_bench_apout");
const { url: databaseUrl, admin } = database;
const db = new pg.Client({ connectionString: databaseUrl });

try {
  // ---- the service, as npm start runs it ----
  const svc = await startServiceProcess(databaseUrl);
  const service = svc.process;
  children.push(service);
  const { url, tenant, api } = svc;
  await db.connect();
  await api("PATCH", "/api/v1/settings", { federation: { enabled: true, handle: "bench" } });
  // the actor is made when first looked up (as a follower's server does before it follows)
  const actorRes = await fetch(`${url}/ap/actors/${tenant.tenantId}`, { headers: { accept: "application/activity+json" } });
  if (!actorRes.ok) throw new Error(`the actor: ${actorRes.status}`);
  await db.query(
    `INSERT INTO federation_followers (tenant_id, actor_id, inbox)
     SELECT $1, $2 || '/users/u' || i, $2 || '/users/u' || i || '/inbox' FROM generate_series(1, $3::int) i`,
    [tenant.tenantId, receiverBase, FOLLOWERS],
  );
  const keyId = `${url}/ap/actors/${tenant.tenantId}#main-key`;
  const pending = async () =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE kind IN ('activitypub', 'activitypub_fanout') AND status = 'pending'`,
      )
    ).rows[0]!.n;

  async function runService(round: number) {
    await db.query("VACUUM ANALYZE webhook_deliveries");
    await resetReceiver();
    const cpu0 = cpuOf(service.pid!);
    const pg0 = await clusterCpu(admin);
    const t0 = performance.timeOrigin + performance.now();
    await api("PUT", `/api/v1/discussions/post-${round}`, { title: `Post ${round}`, url: `https://bench.example/post-${round}` });
    const r = await allArrived();
    while ((await pending()) > 0) await sleep(10);
    const cpu = (cpuOf(service.pid!) - cpu0) / 1000;
    const pgMs = ((await clusterCpu(admin)) - pg0) / 1000;
    return { ...r, cpuMsPer: cpu / FOLLOWERS, pgMsPer: pgMs / FOLLOWERS, firstAfter: r.first - t0, opened };
  }

  async function runFloor() {
    await db.query("VACUUM ANALYZE federation_followers");
    await resetReceiver();
    const pg0 = await clusterCpu(admin);
    const floor = spawn(process.execPath, [await compiledScript("bench/floor/federation-out.ts")], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        TENANT_ID: tenant.tenantId,
        BODY: firstBody!,
        KEY_ID: keyId,
        CONCURRENCY: String(CONCURRENCY),
      },
      stdio: ["pipe", "pipe", "inherit"],
    });
    children.push(floor);
    let text = "";
    const line = new Promise<string>((ok, fail) => {
      floor.stdout!.on("data", (c: Buffer) => {
        text += c.toString("utf8");
        const m = /done (\{.*\})\n/.exec(text);
        if (m) ok(m[1]!);
      });
      floor.on("exit", (code) => fail(new Error(`the floor exited (${code}) before it was done`)));
    });
    const done = JSON.parse(await line) as { delivered: number; cpuMs: number };
    const r = await allArrived();
    // its sessions are still open: their CPU is counted before they end
    const pgMs = ((await clusterCpu(admin)) - pg0) / 1000;
    floor.stdin!.end();
    await new Promise((ok) => floor.on("exit", ok));
    return { ...r, cpuMsPer: done.cpuMs / done.delivered, pgMsPer: pgMs / FOLLOWERS, firstAfter: NaN, opened };
  }

  const rows: (string | number)[][] = [];
  const rates: Record<"service" | "floor", number[]> = { service: [], floor: [] };
  const cpus: Record<"service" | "floor", number[]> = { service: [], floor: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    // the first round starts with the service: the floor sends the Create(Article) it sent
    const order = round % 2 ? (["service", "floor"] as const) : (["floor", "service"] as const);
    for (const who of order) {
      const r = who === "service" ? await runService(round) : await runFloor();
      rates[who].push(r.rate);
      cpus[who].push(r.cpuMsPer);
      rows.push([
        round,
        who,
        r.rate.toFixed(0),
        r.cpuMsPer.toFixed(2),
        r.pgMsPer.toFixed(2),
        r.opened,
        Number.isNaN(r.firstAfter) ? "" : r.firstAfter.toFixed(0),
      ]);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`\nfederation out: one Create(Article) to ${FOLLOWERS} followers' inboxes on one server, ${ROUNDS} rounds, alternating\n`);
  console.log(
    fmtTable(
      ["round", "sender", "deliveries/s", "CPU ms / delivery", "PostgreSQL CPU ms / delivery", "connections", "first arrival after (ms)"],
      rows,
    ),
  );
  console.log(
    `\nmedian: service ${median(rates.service).toFixed(0)}/s, floor ${median(rates.floor).toFixed(0)}/s — the service at ${((100 * median(rates.service)) / median(rates.floor)).toFixed(0)} % of the floor's rate, ${(median(cpus.service) / median(cpus.floor)).toFixed(2)}× its CPU a delivery`,
  );
} finally {
  for (const c of children) c.kill("SIGTERM");
  await sleep(500);
  await receiver.terminate();
  await db.end().catch(() => undefined);
  await database.drop();
}
