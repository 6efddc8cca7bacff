// npm run bench:replicas: list reads (GET /api/v1/discussions/{id}/comments, 20 a page) against the
// primary alone and against the primary with one streaming replica (contract section 26,
// docs/scaling.md "Read replicas"). A PostgreSQL primary of the bench's own and a standby made from
// it with `pg_basebackup -R` (test/support/own-services.ts); the service runs as `npm start` runs
// it (dist/, a process of its own) with DATABASE_REPLICA_URLS unset, then set, in turn over
// BENCH_ROUNDS (2). Each run: BENCH_COMMENTS (200) comments on one discussion, then BENCH_READS
// (5,000) reads, BENCH_IN_FLIGHT (16) at a time, by a key that never wrote. It prints reads/s and the
// CPU a read costs the service, the primary's cluster and the standby's cluster (from /proc): on a
// machine whose cores the service, both databases and the load share, the CPU per read on each
// side says where a second box's capacity would go. Tiny settings for a check that it runs:
// BENCH_COMMENTS=20 BENCH_READS=200 BENCH_ROUNDS=1.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import pg from "pg";
import { assertion, clusterCpu, cpuOf, fmtTable, serviceEntry } from "./support.js";
import { freePort, startOwnPostgres } from "../test/support/own-services.js";

const COMMENTS = Number(process.env.BENCH_COMMENTS ?? 200);
const READS = Number(process.env.BENCH_READS ?? 5000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const ADMIN_JWT_SECRET = "bench-admin-secret-0123456789abcdef0123456789";

const database = (url: string, name: string) => url.replace(/\/postgres$/, `/${name}`);

async function connected(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

/** Resolves once the standby has replayed everything the primary has written so far. */
async function caughtUp(primary: pg.Client, standby: pg.Client): Promise<void> {
  const [{ lsn }] = (await primary.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")).rows as [{ lsn: string }];
  for (;;) {
    const { rows } = await standby.query<{ ok: boolean }>("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok", [lsn]);
    if (rows[0]?.ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Measured {
  rps: number;
  service: number;
  primary: number;
  replica: number;
  /** reads the service sent to a replica (db_read_routes_total) */
  onReplica: number;
}

async function startService(env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, serviceEntry(), {
    env: { ...process.env, ...env, PORT: String(port), REDIS_URL, ADMIN_JWT_SECRET, LOG_LEVEL: "error", RUN_WEBHOOK_WORKER: "0" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (i > 600 || child.exitCode !== null) throw new Error("the service did not start");
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { child, base };
}

async function readsOnReplica(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith('db_read_routes_total{target="replica",reason="route"}'));
  return line ? Number(line.split(" ").pop()) : 0;
}

async function measure(primaryUrl: string, standbyUrl: string, withReplica: boolean, round: number): Promise<Measured> {
  const name = `eng_bench_replicas_${round}_${withReplica ? "r" : "p"}`;
  const admin = await connected(primaryUrl);
  await admin.query(`CREATE DATABASE ${name}`);
  const primaryDb = database(primaryUrl, name);
  const standbyDb = database(standbyUrl, name);
  const env: Record<string, string> = {
    DATABASE_URL: primaryDb,
    DATABASE_POOL_SIZE: "20",
    ...(withReplica ? { DATABASE_REPLICA_URLS: standbyDb, DATABASE_REPLICA_STICKY_MS: "0" } : {}),
  };
  const primaryAdmin = await connected(primaryUrl);
  const standbyAdmin = await connected(standbyUrl);
  let service: ChildProcess | undefined;
  try {
    const started = await startService(env);
    service = started.child;
    const { base } = started;
    const out = execFileSync(process.execPath, ["--import", "tsx", "src/cli/index.ts", "tenant", "create", "--name", "bench", "--json"], {
      env: { ...process.env, ...env, REDIS_URL, ADMIN_JWT_SECRET },
      encoding: "utf8",
    });
    const t = JSON.parse(out.trim().split("\n").pop()!) as { tenantId: string; apiKey: string; identitySecret: string };
    const db = await connected(primaryDb);
    await db.query(`UPDATE tenants SET settings = '{"rateLimits": {"requestsPerMinute": 1000000}}' WHERE id = $1`, [t.tenantId]);
    await db.end();
    const identity = await assertion(t.identitySecret, "writer", { name: "writer" });
    for (let i = 0; i < COMMENTS; i++) {
      const res = await fetch(`${base}/api/v1/discussions/hot/comments`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": t.apiKey, "x-service-identity": identity },
        body: JSON.stringify({ body: `comment ${i}` }),
      });
      if (res.status !== 201) throw new Error(`POST: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }
    // the reader's key never wrote: with the replica, nothing keeps it on the primary
    const keyRes = await fetch(`${base}/api/v1/admin/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${await adminToken(t.tenantId)}` },
      body: JSON.stringify({ label: "reader", capabilities: [] }),
    });
    if (keyRes.status !== 201) throw new Error(`POST /api/v1/admin/keys: ${keyRes.status} ${await keyRes.text()}`);
    const readerKey = ((await keyRes.json()) as { key: string }).key;
    await caughtUp(primaryAdmin, standbyAdmin);
    // the service's replica check runs every second: let it see the standby caught up
    await new Promise((r) => setTimeout(r, 1_500));
    const read = async () => {
      const res = await fetch(`${base}/api/v1/discussions/hot/comments?limit=20`, { headers: { "x-api-key": readerKey } });
      if (res.status !== 200) throw new Error(`GET: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    const run = async (n: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next++ < n) await read();
        }),
      );
    };
    await run(Math.min(500, READS));
    const onReplica0 = await readsOnReplica(base);
    const s0 = cpuOf(service.pid!);
    const p0 = await clusterCpu(primaryAdmin);
    const r0 = await clusterCpu(standbyAdmin);
    const w0 = performance.now();
    await run(READS);
    const seconds = (performance.now() - w0) / 1000;
    const s1 = cpuOf(service.pid!);
    const p1 = await clusterCpu(primaryAdmin);
    const r1 = await clusterCpu(standbyAdmin);
    return {
      rps: READS / seconds,
      service: (s1 - s0) / READS,
      primary: (p1 - p0) / READS,
      replica: (r1 - r0) / READS,
      onReplica: (await readsOnReplica(base)) - onReplica0,
    };
  } finally {
    service?.kill("SIGTERM");
    if (service && service.exitCode === null) await new Promise((r) => service!.once("exit", r));
    await primaryAdmin.end();
    await standbyAdmin.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

async function adminToken(tenantId: string): Promise<string> {
  const { signAdminToken } = await import("../src/auth/admin-jwt.js");
  return signAdminToken({ secret: ADMIN_JWT_SECRET, tenantId, ttlSeconds: 3600 });
}

const primary = await startOwnPostgres();
const standby = await startOwnPostgres({ standbyOf: primary });
const rows: (string | number)[][] = [];
const measured: { withReplica: boolean; m: Measured }[] = [];
try {
  for (let round = 1; round <= ROUNDS; round++)
    for (const withReplica of [false, true]) {
      const m = await measure(primary.url, standby.url, withReplica, round);
      measured.push({ withReplica, m });
      const setup = withReplica ? "primary + 1 replica" : "primary alone";
      rows.push([setup, round, Math.round(m.rps), Math.round(m.service), Math.round(m.primary), Math.round(m.replica), m.onReplica]);
      console.log(`${setup} round ${round}: ${Math.round(m.rps)} reads/s`);
    }
} finally {
  await standby.stop();
  await primary.stop();
}
console.log(`\n${READS} list reads (20 a page of ${COMMENTS} comments), ${IN_FLIGHT} in flight\n`);
console.log(
  fmtTable(
    ["setup", "round", "reads/s", "service CPU µs/read", "primary CPU µs/read", "replica CPU µs/read", "reads on the replica"],
    rows,
  ),
);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length / 2;
  return s.length % 2 === 1 ? s[Math.floor(mid)]! : (s[mid - 1]! + s[mid]!) / 2;
};
const alone = measured.filter((x) => !x.withReplica).map((x) => x.m);
const pair = measured.filter((x) => x.withReplica).map((x) => x.m);
const ratios = alone.map((a, i) => pair[i]!.rps / a.rps);
const us = (ms: Measured[], f: (m: Measured) => number) => Math.round(median(ms.map(f)));
console.log(
  `\na replica against the primary alone: reads/s of the primary with one replica / the primary alone, round by round: ${ratios.map((r) => `${r.toFixed(2)}×`).join(", ")} ` +
    `(median ${median(ratios).toFixed(2)}×). Database CPU a read (medians): alone, primary ${us(alone, (m) => m.primary)} µs; ` +
    `with the replica, primary ${us(pair, (m) => m.primary)} µs + replica ${us(pair, (m) => m.replica)} µs; service ${us(alone, (m) => m.service)} / ${us(pair, (m) => m.service)} µs.`,
);
console.log(
  "note: both databases, the service and the load share this machine's cores, so the pair's reads/s cannot show a second box's capacity; " +
    "the CPU a read costs the primary with and without the replica says how much of the primary's capacity the reads leave to writes (CPU from /proc in 10 ms ticks: read it at BENCH_READS of 5,000 or more).",
);
