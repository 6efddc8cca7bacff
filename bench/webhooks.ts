// npm run bench:webhooks — webhook drain of one endpoint by the service's worker beside a
// hand-written floor loop (bench/floor/webhook-loop.ts: claim one row FOR UPDATE SKIP LOCKED, sign,
// POST with keep-alive, mark done, 16 at a time), against the same receiver, the same number of
// queued comment_created jobs, in the same run (the target: the worker ≥ 90 % of the floor).
// Not a test: it prints a table.
//
//  - the service runs as `npm start` runs it (built into dist/, plain node, its own database, worker
//    on, defaults: one endpoint gets at most maxPerEndpoint = 16 attempts in flight); the floor is
//    compiled the same way and runs as a process of its own with 16 loops;
//  - the receiver is a node:http server in a thread of this process: 200 at once, arrival times;
//  - BENCH_JOBS comments are posted through the API (their jobs go to an endpoint that is then
//    deleted); their events are the queue: before each drain its endpoint gets one job per event in
//    one statement, with no other job pending in the table (the case: one endpoint, 3,000
//    queued comment_created jobs), after a VACUUM and a CHECKPOINT;
//  - each round drains once with the floor process (its endpoint held by an open circuit, so the
//    service never takes its jobs) and once with the service (its worker's next poll takes them), in
//    alternating order; a rate is (jobs − 1) / (last arrival − first arrival), the same for both, so
//    start-up is not counted. CPU per delivery: the floor's own, and the service process's (from
//    /proc) until every job of the drain is recorded;
//  - then the commit → receiver latency: comments posted at a steady pace to one more endpoint,
//    from the request's start to the delivery's arrival (p50, p99).
// Env: BENCH_JOBS (3000), BENCH_ROUNDS (2), BENCH_LATENCY_EVENTS (500), WEBHOOK_MAX_PER_ENDPOINT (16: the
// service's cap and the floor's loops), BENCH_PG_URL, BENCH_REDIS_URL,
// BENCH_CPU_PROFILE=<dir> (the service writes a V8 CPU profile there when it exits).
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import pg from "pg";
import { assertion, benchDatabase, compiledScript, fmtTable, startServiceProcess } from "./support.js";
import { DEFAULT_WORKER_OPTIONS } from "../src/outbound/worker.js";

const JOBS = Number(process.env.BENCH_JOBS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const LATENCY_EVENTS = Number(process.env.BENCH_LATENCY_EVENTS ?? 500);
// the service's per-endpoint cap (WEBHOOK_MAX_PER_ENDPOINT, default 16) and the floor's loops
const CONCURRENCY = Number(process.env.WEBHOOK_MAX_PER_ENDPOINT ?? DEFAULT_WORKER_OPTIONS.maxPerEndpoint);
const DISCUSSIONS = 50;

const children: ChildProcess[] = [];
const epochNow = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

// ---- the receiver, in its own thread: answers handshakes, 200 for the rest, reports
// [path, comment id (latency path only), arrival epoch ms] in batches ----
const RECEIVER_JS = `
const http = require("node:http");
const { parentPort } = require("node:worker_threads");
let batch = [];
setInterval(() => { if (batch.length) { parentPort.postMessage(batch); batch = []; } }, 5).unref();
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const at = performance.timeOrigin + performance.now();
    if (req.headers["x-service-event"] === "verification") {
      const { challenge } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ challenge }));
      return;
    }
    const id = req.url === "/L" ? JSON.parse(Buffer.concat(chunks).toString("utf8")).data.comment.id : "";
    batch.push([req.url, id, at]);
    res.writeHead(200).end("ok");
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
`;
const arrivals = new Map<string, number[]>(); // path → arrival times
const latencyArrivals = new Map<string, number>(); // comment id → arrival
const receiverThread = new Worker(RECEIVER_JS, { eval: true });
const receiverBase = await new Promise<string>((resolve) => {
  receiverThread.on("message", (m: { port: number } | [string, string, number][]) => {
    if (!Array.isArray(m)) return resolve(`http://127.0.0.1:${m.port}`);
    for (const [path, id, at] of m) {
      if (id) latencyArrivals.set(id, at);
      else {
        const list = arrivals.get(path);
        if (list) list.push(at);
        else arrivals.set(path, [at]);
      }
    }
  });
});

/** A process's CPU time so far (user + system), in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU time (ms) of the database's server processes serving connections named / not named `app`. */
async function backendCpuMs(client: pg.Client, app: string, named: boolean): Promise<Map<number, number>> {
  const { rows } = await client.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND (application_name = $1) = $2`,
    [app, named],
  );
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      out.set(pid, cpuMs(pid));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
const sumDelta = (before: Map<number, number>, after: Map<number, number>) =>
  [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);

const database = await benchDatabase("eng_bench_wh");
const { url: databaseUrl } = database;
const db = new pg.Client({ connectionString: databaseUrl });

try {
  // ---- the service, as npm start runs it ----
  const svc = await startServiceProcess(databaseUrl, { WEBHOOK_MAX_PER_ENDPOINT: String(CONCURRENCY) });
  const service = svc.process;
  children.push(service);
  const { tenant, api } = svc;
  await db.connect();
  await db.query(`UPDATE tenants SET settings = '{"rateLimits": {"requestsPerMinute": 1000000}}' WHERE id = $1`, [tenant.tenantId]);
  const identities = await Promise.all(
    Array.from({ length: 20 }, (_, i) => assertion(tenant.identitySecret, `r${i}`, { name: `Reader ${i}` })),
  );
  for (let d = 0; d < DISCUSSIONS; d++) await api("PUT", `/api/v1/discussions/bench-${d}`, {});
  /** posts `n` comments with `parallel` writers; calls `sent(commentId, requestStartedEpoch)` for each */
  async function postComments(n: number, parallel: number, paceMs = 0, sent?: (id: string, started: number) => void) {
    let next = 0;
    await Promise.all(
      Array.from({ length: parallel }, async (_, w) => {
        while (next < n) {
          const i = next++;
          const started = epochNow();
          const c = await api(
            "POST",
            `/api/v1/discussions/bench-${i % DISCUSSIONS}/comments`,
            { body: `comment ${i} of the webhook bench` },
            {
              "x-service-identity": identities[(i + w) % identities.length]!,
            },
          );
          sent?.(c.id as string, started);
          if (paceMs) await sleep(paceMs);
        }
      }),
    );
  }
  async function endpoint(path: string): Promise<{ id: string; secret: string; kid: string }> {
    const ep = await api("POST", "/api/v1/webhooks", { url: `${receiverBase}/${path}`, events: ["comment_created"] });
    for (let i = 0; i < 400 && !(await api("GET", `/api/v1/webhooks/${ep.webhookId}`)).verified; i++) await sleep(25);
    return { id: ep.webhookId, secret: ep.secret, kid: ep.kid };
  }
  const hold = (id: string) =>
    db.query(`UPDATE webhook_endpoints SET state = 'circuit_open', circuit_open_until = 'infinity' WHERE id = $1`, [id]);

  // ---- the queue: JOBS comments posted while one endpoint (held by an open circuit) takes their
  // jobs; their events are kept and that endpoint deleted. Each drain then starts with exactly JOBS
  // pending jobs of one endpoint and no other pending job in the table ----
  const seed = await endpoint("S");
  await hold(seed.id);
  const seedStart = performance.now();
  await postComments(JOBS, 20);
  const seedRate = JOBS / ((performance.now() - seedStart) / 1000);
  await db.query(`CREATE TABLE bench_jobs AS SELECT event_id, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = $1`, [seed.id]);
  await api("DELETE", `/api/v1/webhooks/${seed.id}`);
  const floorEp = await endpoint("F");
  await hold(floorEp.id); // the service's worker never takes the floor's jobs
  const workerEp = await endpoint("W");
  await db.query("VACUUM ANALYZE"); // hint bits set, statistics fresh: the first drain reads no colder pages than the next
  /** Deletes the endpoint's earlier jobs and attempts; VACUUM, CHECKPOINT: the same start for every drain. */
  async function clear(endpointId: string): Promise<void> {
    await db.query(`DELETE FROM webhook_attempts WHERE endpoint_id = $1`, [endpointId]);
    await db.query(`DELETE FROM webhook_deliveries WHERE endpoint_id = $1`, [endpointId]);
    await db.query("VACUUM ANALYZE webhook_deliveries");
    await db.query("CHECKPOINT"); // no dirty pages of the previous drain left to write
  }
  /** JOBS pending jobs for the endpoint, in one statement. */
  async function fill(endpointId: string): Promise<void> {
    await db.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, next_attempt_at, created_at, updated_at)
       SELECT gen_random_uuid(), $2, $1, event_id, next_attempt_at, now(), now() FROM bench_jobs ORDER BY next_attempt_at`,
      [endpointId, tenant.tenantId],
    );
  }

  const rate = (path: string) => {
    const at = arrivals.get(path) ?? [];
    if (at.length < JOBS) throw new Error(`${path}: only ${at.length} of ${JOBS} deliveries arrived`);
    return ((at.length - 1) / (Math.max(...at) - Math.min(...at))) * 1000;
  };
  const waitArrivals = async (path: string, seconds: number) => {
    const deadline = performance.now() + seconds * 1000;
    while ((arrivals.get(path)?.length ?? 0) < JOBS && performance.now() < deadline) await sleep(5);
  };
  const floorScript = await compiledScript("bench/floor/webhook-loop.ts");
  async function runFloor(): Promise<{ rate: number; cpuMsPer: number; dbMsPer: number }> {
    const ep = floorEp;
    await clear(ep.id);
    await fill(ep.id);
    arrivals.delete("/F");
    const child = spawn(process.execPath, [floorScript], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        ENDPOINT_ID: ep.id,
        SECRET: ep.secret,
        KID: ep.kid,
        TARGET_URL: `${receiverBase}/F`,
        CONCURRENCY: String(CONCURRENCY),
      },
      stdio: ["pipe", "pipe", "inherit"],
    });
    children.push(child);
    let text = "";
    const exited = new Promise((ok) => child.once("exit", ok));
    const m = await new Promise<RegExpExecArray | null>((resolve) => {
      child.stdout!.on("data", (d: Buffer) => {
        text += d.toString();
        const done = /done (\{.*\})/.exec(text);
        if (done) resolve(done);
      });
      void exited.then(() => resolve(null));
    });
    if (!m) throw new Error(`the floor failed: ${text}`);
    const dbUsed = sumDelta(new Map(), await backendCpuMs(db, "eng-floor", true)); // its connections were opened for the drain
    child.stdin!.end();
    await exited;
    await waitArrivals("/F", 10);
    const { cpuMs: used } = JSON.parse(m[1]!) as { cpuMs: number };
    return { rate: rate("/F"), cpuMsPer: used / JOBS, dbMsPer: dbUsed / JOBS };
  }
  async function runWorker(r: number): Promise<{ rate: number; cpuMsPer: number; dbMsPer: number }> {
    const ep = workerEp;
    arrivals.delete("/W");
    await clear(ep.id);
    const cpu0 = cpuMs(service.pid!);
    const db0 = await backendCpuMs(db, "eng-floor", false);
    const t0 = process.hrtime.bigint() / 1000n; // µs on the monotonic clock a V8 CPU profile's timestamps use
    await fill(ep.id); // the worker's next poll takes them
    await waitArrivals("/W", 120);
    const result = rate("/W");
    for (let i = 0; i < 500; i++) {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'succeeded'`, [
        ep.id,
      ]);
      if (rows[0].n >= JOBS) break;
      await sleep(10);
    }
    const used = cpuMs(service.pid!) - cpu0;
    const dbUsed = sumDelta(db0, await backendCpuMs(db, "eng-floor", false));
    if (process.env.BENCH_CPU_PROFILE) console.log(`profile window W${r}: ${t0} ${process.hrtime.bigint() / 1000n} (µs, monotonic)`);
    return { rate: result, cpuMsPer: used / JOBS, dbMsPer: dbUsed / JOBS };
  }

  const rows: string[][] = [];
  const ratios: number[] = [];
  const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  for (let r = 0; r < ROUNDS; r++) {
    // alternate which goes first: the machine's load drifts
    const floor = r % 2 === 0 ? await runFloor() : undefined;
    const worker = await runWorker(r);
    const f = floor ?? (await runFloor());
    ratios.push(worker.rate / f.rate);
    rows.push([
      `${r + 1} (${r % 2 === 0 ? "floor first" : "worker first"})`,
      fmt(f.rate),
      fmt(worker.rate),
      `${((worker.rate / f.rate) * 100).toFixed(0)} %`,
      `${f.cpuMsPer.toFixed(2)} + ${f.dbMsPer.toFixed(2)}`,
      `${worker.cpuMsPer.toFixed(2)} + ${worker.dbMsPer.toFixed(2)}`,
    ]);
  }
  const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;

  // ---- latency at a steady pace, one more endpoint ----
  await db.query(`UPDATE webhook_endpoints SET state = 'disabled' WHERE id = $1`, [workerEp.id]); // L's deliveries only
  await endpoint("L");
  const started = new Map<string, number>();
  await postComments(LATENCY_EVENTS, 4, 10, (id, t) => started.set(id, t));
  const deadline = performance.now() + 30_000;
  while (latencyArrivals.size < LATENCY_EVENTS && performance.now() < deadline) await sleep(5);
  const lat = [...started].flatMap(([id, t]) => (latencyArrivals.has(id) ? [latencyArrivals.get(id)! - t] : [])).sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] ?? Number.NaN;

  console.log(
    `\nwebhook drain, one endpoint, ${JOBS} queued comment_created jobs, ${CONCURRENCY} in flight (the worker's per-endpoint cap; the floor's loops); ` +
      `seeded at ${fmt(seedRate)} comments/s\n`,
  );
  console.log(
    fmtTable(
      [
        "round",
        "floor deliveries/s",
        "worker deliveries/s",
        "worker / floor",
        "floor CPU ms/delivery (+ db)",
        "service CPU ms/delivery (+ db)",
      ],
      rows,
    ),
  );
  console.log(`\nworker / floor, mean of ${ROUNDS}: ${(mean * 100).toFixed(0)} % (target ≥ 90 %: ${mean >= 0.9 ? "met" : "NOT met"})`);
  console.log(
    `request → receiver latency at a steady pace (${lat.length} of ${LATENCY_EVENTS} events): p50 ${fmt(pct(50))} ms, p99 ${fmt(pct(99))} ms`,
  );
} finally {
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  await Promise.all(children.filter((c) => c.exitCode === null).map((c) => new Promise((ok) => c.once("exit", ok))));
  await db.end().catch(() => undefined);
  await database.drop();
  await receiverThread.terminate();
}
