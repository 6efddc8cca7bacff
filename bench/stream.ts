/**
 * Stream benchmark (not a test): `npm run bench:stream [-- --clients 1000,5000,10000 --writes 20]`.
 *
 * Starts the real server as a child process (src/main.ts) on a fresh PostgreSQL database and the
 * local Redis, then for each N in --clients:
 *   - N SSE clients on ONE discussion, and N clients spread over 1,000 discussions;
 *   - RSS per idle stream (server RSS growth / N after the connections settle), server CPU while
 *     idle (heartbeats only) and while events are written;
 *   - write→receive latency p50/p99 over every (client, event): t0 is taken right before the
 *     write's HTTP request leaves (POST /discussions/{id}/lock|unlock), t1 when the client reads
 *     the frame's `id:` line;
 * the time to replay 1,000 events after a Last-Event-ID, and a reconnect storm: --storm clients
 * (default 10,000) reconnect to one discussion at once with a Last-Event-ID 5 events back, beside a
 * bare Node SSE server (node:http, the same head and frames, no auth, no database) in the same run:
 * the time until every client has its replayed events (--storm-runs / BENCH_STORM_RUNS pairs, default
 * 3, alternating on fresh processes; the median pair ratio is the figure), with the server's CPU
 * time per connect. Prints a table against the targets
 * of issue 3: 10,000 streams on one instance with p99 ≤ 250 ms, ≤ 20 KB RSS per idle stream,
 * replay of 1,000 events ≤ 200 ms.
 *
 * `--cluster`: every fan-out scenario runs twice, on the local Redis and on a 3-master Redis Cluster
 * the bench starts (test/support/redis-cluster.ts; REDIS_CLUSTER_NODES: sharded pub/sub, the
 * stream-cap script and the rate limits on the cluster), and the table shows them side by side with
 * the cluster's p99 as a multiple of the single Redis's. The replay and the storm stay on the single
 * Redis (`--storm 0` skips the storm).
 *
 * `--presence N` / BENCH_PRESENCE (default 10,000; 0 skips): N streams, half on one discussion and half
 * over the 1,000 others, writes to the busy one with 10 of its streams reconnecting per write, run with
 * STREAM_PRESENCE=0 and =1; the table's two presence rows and the p99 ratio (target ≤ 1.2×, measured).
 *
 * `--bare-fanout` / BENCH_BARE_FANOUT=1 (the "past one primary" fan-out figure): each one-discussion row is followed by the
 * same row against a bare node:http broadcaster (no auth, no database, no Redis) that sends the
 * service's own head and frames, read off one of the service's streams at the start of the run
 * (captureFrames): the table gains the service's p99 as a multiple of the bare's, and a line with
 * the ratios, their median (target ≤ 1.2×) and the RSS per idle stream (target ≤ 15 KB).
 * `--fanout-runs R` runs each such pair R times, alternating; `--rows one` (or `spread`) keeps only
 * the one-discussion (or the 1,000-discussion) rows; `--replay 0` skips the replay and the storm.
 *
 * Clients: the streams are held by `--client-procs` K processes (bench/stream-clients.ts; default
 * ⌈largest N / 12,500⌉), stream i in process i mod K, so no process needs more than its share of
 * descriptors and the driver's own event loop only sends the writes. Past 20,000 streams at once the
 * clients bind their end to the loopback addresses 127.0.0.2…127.0.0.9 in turn (`localAddress`):
 * one source address has about 28,000 ephemeral ports towards one server port (ip_local_port_range
 * 32768–60999) and the closed streams of the row before sit in TIME_WAIT for a minute.
 *
 * Where latency is read: t0 is taken in the driver right before the write's request leaves; t1 in
 * the client process, at the start of the socket's `data` callback that holds the frame's `id:`
 * line; both on CLOCK_MONOTONIC (process.hrtime), which every process of the machine shares, and
 * the client processes send their reads back after the writes (nothing crosses processes while a
 * write is in flight). So a latency is: the write's request and commit, the fan-out (Redis, the
 * server's writes to N sockets), the kernel's loopback delivery, and the wait in the client
 * process's event loop behind the other streams' chunks read before it. The last part is the
 * clients' share: on two cores, reading one event on 50,000 sockets is itself hundreds of ms of CPU
 * whatever the number of client processes, which is why the bare broadcaster is measured by the same
 * clients in the same run and the figure is the ratio. "clients' CPU %" shows how busy they were.
 *
 * Descriptors: the server (and the bare broadcaster) holds one socket per stream plus about 500 of
 * its own; the bench checks the open-file limit before it starts (`ulimit -n`; the npm script asks
 * for 120,000, else the hard limit). Raising the hard limit takes CAP_SYS_RESOURCE.
 *
 * Options (or env): --clients / BENCH_CLIENTS (default 1000,2000: a couple of minutes),
 * --writes / BENCH_WRITES (events per scenario, default 20), --gap-ms (between writes, default 250),
 * --replay / BENCH_REPLAY (events to replay, default 1000). PostgreSQL from BENCH_PG_URL (admin URL,
 * default postgresql://postgres@127.0.0.1:5432/postgres; a database is created and dropped),
 * Redis from BENCH_REDIS_URL (default redis://127.0.0.1:6379). BENCH_SERVER_NODE_ARGS adds node
 * options to the server process (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"). Clients and server each hold one
 * socket per stream: the npm script raises the open-file limit (`ulimit -n`) for both processes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { parseArgs } from "node:util";
import pg from "pg";
import { migratePostgres } from "../src/db/migrate.js";
import { openDatabase } from "../src/db/client.js";
import { createTenant } from "../src/modules/tenants/engine/tenants.js";
import { createSecretBox } from "../src/lib/secret-box.js";
import { serviceEntry } from "./support.js";
import { connect, nowMs, type Client } from "./sse-client.js";
import { startRedisCluster, type RedisCluster } from "../test/support/redis-cluster.js";

const { values: opt } = parseArgs({
  options: {
    clients: { type: "string" },
    writes: { type: "string" },
    "gap-ms": { type: "string" },
    replay: { type: "string" },
    storm: { type: "string" },
    presence: { type: "string" },
    "storm-runs": { type: "string" },
    cluster: { type: "boolean" },
    rows: { type: "string" },
    "bare-fanout": { type: "boolean" },
    "fanout-runs": { type: "string" },
    "client-procs": { type: "string" },
  },
});
const ON_CLUSTER = opt.cluster === true || process.env.BENCH_CLUSTER === "1";
/** `--clients 0`: no fan-out scenarios (replay and storm only) */
const CLIENT_COUNTS = (opt.clients ?? process.env.BENCH_CLIENTS ?? "1000,2000")
  .split(",")
  .map((s) => Number(s.trim()))
  .filter((n) => n > 0);
const WRITES = Number(opt.writes ?? process.env.BENCH_WRITES ?? 20);
const GAP_MS = Number(opt["gap-ms"] ?? 250);
const REPLAY = Number(opt.replay ?? process.env.BENCH_REPLAY ?? 1000);
const STORM = Number(opt.storm ?? process.env.BENCH_STORM ?? 10_000);
/** Storms per side (service and bare alternate, each on a fresh process); the median pair ratio is reported. */
const STORM_RUNS = Math.max(1, Number(opt["storm-runs"] ?? process.env.BENCH_STORM_RUNS ?? 3));
/** In a storm, each client missed this many events (its Last-Event-ID is head − STORM_MISSED). */
const STORM_MISSED = 5;
const SPREAD = 1000;
/** the presence rows: this many streams, half on one discussion, presence off then on (0 skips) */
const PRESENCE_CLIENTS = Number(opt.presence ?? process.env.BENCH_PRESENCE ?? 10_000);
const PRESENCE_CHURN = 10;
/** extra environment of the next server process (the presence rows' STREAM_PRESENCE) */
let serverEnv: Record<string, string> = {};
const PG_ADMIN = process.env.BENCH_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const ADMIN_SECRET = "bench-admin-secret-0123456789abcdef0123456789";
const CONNECT_BATCH = 500;
/** `--rows one,spread` (default both): the fan-out rows on one discussion, over the 1,000 */
const ROWS = new Set((opt.rows ?? process.env.BENCH_ROWS ?? "one,spread").split(",").map((s) => s.trim()));
/** `--bare-fanout`: each one-discussion row is followed by the same row against a bare node:http broadcaster */
const BARE_FANOUT = opt["bare-fanout"] === true || process.env.BENCH_BARE_FANOUT === "1";
/** `--fanout-runs R`: the one-discussion row (and its bare row) R times per N, alternating; the median pair ratio is the figure */
const FANOUT_RUNS = Math.max(1, Number(opt["fanout-runs"] ?? process.env.BENCH_FANOUT_RUNS ?? 1));
/** streams a client process holds at most (by default): the client processes are ⌈N / this⌉ */
const STREAMS_PER_CLIENT_PROC = 12_500;
const CLIENT_PROCS = Number(opt["client-procs"] ?? process.env.BENCH_CLIENT_PROCS ?? 0); // 0: ⌈max N / 12,500⌉
/** more streams than this at once: the clients bind to SOURCE_ADDRESSES in turn */
const SOURCE_SPREAD_FROM = Number(process.env.BENCH_SOURCE_SPREAD_FROM ?? 20_000);
const SOURCE_ADDRESSES = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** CLOCK_MONOTONIC in ms: the client processes read the same clock */
const now = nowMs;

// ---------------------------------------------------------------- server process

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

function procStat(pid: number): { rssKb: number; cpuTicks: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { rssKb, cpuTicks: Number(fields[11]) + Number(fields[12]) }; // utime + stime
}
const TICKS_PER_SECOND = 100;

/** Where the server's Redis is: the local one, or the bench's cluster (`host:port,…`). */
type RedisEnv = { REDIS_URL: string } | { REDIS_CLUSTER_NODES: string };
let redisEnv: RedisEnv = { REDIS_URL };

/** The time a server spent writing events to their streams: `seconds` over `events` (one event to every stream of its discussion) */
interface FanoutStats {
  seconds: number;
  events: number;
}

interface BenchServer {
  url: string;
  child: ChildProcess;
  /** so far; the service's from its `stream_fanout_seconds` metric, the bare broadcaster's from its own count (the storm's bare server has none) */
  fanoutStats?(): Promise<FanoutStats>;
}

const NO_STATS: FanoutStats = { seconds: NaN, events: NaN };

/** The service's `stream_fanout_seconds` sum and count, read off GET /metrics (NaN when they cannot be read). */
async function serviceFanoutStats(url: string): Promise<FanoutStats> {
  const text = await fetch(`${url}/metrics`).then((r) => (r.ok ? r.text() : ""));
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
  return { seconds: read("stream_fanout_seconds_sum"), events: read("stream_fanout_seconds_count") };
}

async function startServer(databaseUrl: string): Promise<BenchServer> {
  const port = await freePort();
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean); // e.g. --cpu-prof
  const child = spawn(process.execPath, [...nodeArgs, ...serviceEntry()], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl,
      ...redisEnv,
      ADMIN_JWT_SECRET: ADMIN_SECRET,
      LOG_LEVEL: "warn",
      MAX_STREAMS_PER_INSTANCE: "1000000",
      ...serverEnv,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error("server exited during start-up");
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { url, child, fanoutStats: () => serviceFanoutStats(url) };
    } catch {
      /* not yet */
    }
    await sleep(100);
  }
  throw new Error("server did not start");
}

async function stopServer(server: { child: ChildProcess }): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((r) => server.child.once("exit", r));
  server.child.kill("SIGTERM");
  await exited;
}

// ---------------------------------------------------------------- SSE clients

// connect() and the Client: bench/sse-client.ts (the client processes use the same reader)

/** Which discussion the i-th client streams: round robin, or half on the first and half round robin over the rest. */
type Assign = (i: number, discussions: string[]) => string;
const roundRobin: Assign = (i, ds) => ds[i % ds.length]!;
const halfOnFirst: Assign = (i, ds) => (i % 2 === 0 ? ds[0]! : ds[1 + ((i >> 1) % (ds.length - 1))]!);

/**
 * The streams' clients: --client-procs processes (bench/stream-clients.ts), each holding its share
 * of the streams (client i in process i mod K) and recording when it read each event; the driver
 * (this process) sends the writes and takes their t0, on the same monotonic clock. Where more than
 * SOURCE_SPREAD_FROM streams are open at once, each process binds its streams to the loopback
 * source addresses SOURCE_ADDRESSES in turn (about 28,000 ephemeral ports per source address).
 */
class ClientPool {
  private readonly pending = new Map<number, { resolve: (m: Answer) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  private constructor(private readonly procs: ChildProcess[]) {}

  static async start(k: number): Promise<ClientPool> {
    const procs = Array.from({ length: k }, () =>
      spawn(process.execPath, ["--import", "tsx", "bench/stream-clients.ts"], {
        stdio: ["ignore", "inherit", "inherit", "ipc"],
        serialization: "advanced",
      }),
    );
    const pool = new ClientPool(procs);
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((resolve, reject) => {
            p.once("exit", (code) => {
              // a client process that dies (out of descriptors or ports, say) fails what waits on it
              const error = new Error(`a client process exited (${code})`);
              for (const waiting of pool.pending.values()) waiting.reject(error);
              pool.pending.clear();
              reject(error);
            });
            p.on("message", (m: Answer) => {
              if (m.id === 0) return resolve();
              const waiting = pool.pending.get(m.id);
              pool.pending.delete(m.id);
              if (m.ok) waiting?.resolve(m);
              else waiting?.reject(new Error(`client process: ${m.error}`));
            });
          }),
      ),
    );
    return pool;
  }

  get size(): number {
    return this.procs.length;
  }

  private ask(p: ChildProcess, m: Record<string, unknown>): Promise<Answer> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      p.send({ id, ...m });
    });
  }

  /** one stream per entry of `discussions` (entry i in process i mod K) */
  async open(url: string, key: string, discussions: string[]): Promise<void> {
    const k = this.procs.length;
    const addresses = discussions.length > SOURCE_SPREAD_FROM ? SOURCE_ADDRESSES : [];
    const batch = Math.max(50, Math.ceil(CONNECT_BATCH / k));
    await Promise.all(
      this.procs.map((p, w) =>
        this.ask(p, { op: "open", url, key, discussions: discussions.filter((_, i) => i % k === w), addresses, batch }),
      ),
    );
  }

  churn(url: string, key: string, discussion: string, n: number): Promise<Answer> {
    return this.ask(this.procs[0]!, { op: "churn", url, key, discussion, n });
  }

  /** reads recorded so far of these events, over every process */
  async count(keys: string[]): Promise<number> {
    const answers = await Promise.all(this.procs.map((p) => this.ask(p, { op: "count", keys })));
    return answers.reduce((sum, a) => sum + a.count!, 0);
  }

  /** every read's latency against its event's t0, sorted, and each event's first and last read over all processes */
  async collect(t0: Map<string, number>): Promise<{ latencies: number[]; spans: number[] }> {
    const answers = await Promise.all(this.procs.map((p) => this.ask(p, { op: "collect", t0: [...t0] })));
    const latencies: number[] = [];
    const firstLast = new Map<string, [number, number]>();
    for (const a of answers) {
      for (const x of a.latencies!) latencies.push(x);
      for (const [k, f, l] of a.spans!) {
        const fl = firstLast.get(k);
        if (!fl) firstLast.set(k, [f, l]);
        else {
          fl[0] = Math.min(fl[0], f);
          fl[1] = Math.max(fl[1], l);
        }
      }
    }
    return { latencies: latencies.sort((a, b) => a - b), spans: [...firstLast.values()].map(([f, l]) => l - f).sort((a, b) => a - b) };
  }

  async close(): Promise<void> {
    await Promise.all(this.procs.map((p) => this.ask(p, { op: "close" })));
  }

  /** the client processes' RSS, together */
  rssKb(): number {
    return this.procs.reduce((sum, p) => sum + procStat(p.pid!).rssKb, 0);
  }

  /** the client processes' CPU ticks, together */
  cpuTicks(): number {
    return this.procs.reduce((sum, p) => sum + procStat(p.pid!).cpuTicks, 0);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.procs.map(async (p) => {
        if (p.exitCode !== null) return;
        p.removeAllListeners("exit");
        const exited = new Promise((r) => p.once("exit", r));
        p.kill("SIGTERM");
        await exited;
      }),
    );
  }
}

interface Answer {
  id: number;
  ok: boolean;
  error?: string;
  count?: number;
  latencies?: Float64Array;
  spans?: [string, number, number][];
}

// ---------------------------------------------------------------- measurements

const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;

interface Row {
  scenario: string;
  /** "redis" or "cluster" */
  redis: string;
  clients: number;
  discussions: number;
  connectS: number;
  rssPerStreamKb: number;
  cpuIdlePct: number;
  cpuWritePct: number;
  /** the server's RSS with the streams open and idle */
  serverRssMb: number;
  /** the client processes' RSS with the streams open and idle, together */
  clientRssMb: number;
  /** the client processes' CPU while the writes are read, together (200 % = both cores) */
  clientCpuPct: number;
  /** the write request's own round trip (auth, transaction, commit), part of the latency */
  writeP50: number;
  /** per event: last client's receive − first client's (the fan-out's own duration) */
  spreadP50: number;
  /** the server's own time to write one event to every stream of its discussion (mean over the writes) */
  fanoutMs: number;
  p50: number;
  p99: number;
  max: number;
  samples: number;
  missing: number;
}

async function scenario(
  name: string,
  server: BenchServer,
  key: string,
  n: number,
  discussions: string[],
  seqs: Map<string, number>,
  pool: ClientPool,
  assign: Assign = roundRobin,
  /** per write round, this many streams of the first discussion close and others open (presence changes) */
  churn = 0,
): Promise<Row> {
  const pid = server.child.pid!;
  const t0 = new Map<string, number>();
  const perDiscussion = new Map<string, number>();
  const targets = Array.from({ length: n }, (_, i) => assign(i, discussions));
  for (const d of targets) perDiscussion.set(d, (perDiscussion.get(d) ?? 0) + 1);

  // warm-up (JIT, pools, heap) so the RSS growth measured below is the streams' own
  await pool.open(server.url, key, targets.slice(0, Math.min(200, n)));
  await pool.close();
  await sleep(2000);
  const base = procStat(pid);
  const c0 = now();
  await pool.open(server.url, key, targets);
  const connectS = (now() - c0) / 1000;
  await sleep(3000); // settle
  const idleStart = procStat(pid);
  const i0 = now();
  await sleep(3000);
  const idleEnd = procStat(pid);
  const cpuIdlePct = ((idleEnd.cpuTicks - idleStart.cpuTicks) / TICKS_PER_SECOND / ((now() - i0) / 1000)) * 100;
  const rssPerStreamKb = (idleEnd.rssKb - base.rssKb) / n;
  const clientRssMb = pool.rssKb() / 1024;

  // writes: one discussion → every write reaches all N clients; spread → each round writes to 5
  // discussions at once (four times the rounds), so writes do not queue behind each other much
  // the presence rows write to the busy (first) discussion only
  const onlyFirst = discussions.length === 1 || assign !== roundRobin;
  const perRound = onlyFirst ? 1 : Math.min(5, discussions.length);
  const rounds = onlyFirst ? WRITES : WRITES * 4;
  const writeRtts: number[] = [];
  let expected = 0;
  const w0 = procStat(pid);
  const f0 = (await server.fanoutStats?.()) ?? NO_STATS;
  const cc0 = pool.cpuTicks();
  const wStart = now();
  for (let r = 0; r < rounds; r++) {
    const round = onlyFirst
      ? [discussions[0]!]
      : Array.from({ length: perRound }, (_, j) => discussions[(r * perRound + j) % discussions.length]!);
    await Promise.all(
      round.map(async (d) => {
        const seq = (seqs.get(d) ?? 0) + 1;
        seqs.set(d, seq);
        expected += perDiscussion.get(d) ?? 0;
        const action = seq % 2 === 1 ? "lock" : "unlock";
        const sent = now();
        t0.set(`${d}#${seq}`, sent);
        const res = await fetch(`${server.url}/api/v1/discussions/${d}/${action}`, { method: "POST", headers: { "x-api-key": key } });
        writeRtts.push(now() - sent);
        if (res.status !== 200) throw new Error(`write answered ${res.status}`);
        await res.arrayBuffer();
      }),
    );
    // streams come and go on the busy discussion (not counted in the latencies: they miss events)
    if (churn > 0) await pool.churn(server.url, key, discussions[0]!, churn);
    await sleep(GAP_MS);
  }
  const keys = [...t0.keys()];
  for (let i = 0; i < 100 && (await pool.count(keys)) < expected; i++) await sleep(100);
  const wSeconds = (now() - wStart) / 1000;
  const w1 = procStat(pid);
  const f1 = (await server.fanoutStats?.()) ?? NO_STATS;
  const cpuWritePct = ((w1.cpuTicks - w0.cpuTicks) / TICKS_PER_SECOND / wSeconds) * 100;
  const clientCpuPct = ((pool.cpuTicks() - cc0) / TICKS_PER_SECOND / wSeconds) * 100;

  const { latencies: sorted, spans } = await pool.collect(t0);
  await pool.close();
  await sleep(1000);
  return {
    writeP50: pct(
      writeRtts.sort((a, b) => a - b),
      50,
    ),
    spreadP50: pct(spans, 50),
    fanoutMs: ((f1.seconds - f0.seconds) / (f1.events - f0.events)) * 1000,
    scenario: name,
    redis: "REDIS_CLUSTER_NODES" in redisEnv ? "cluster" : "redis",
    clients: n,
    discussions: discussions.length,
    connectS,
    rssPerStreamKb,
    cpuIdlePct,
    cpuWritePct,
    clientCpuPct,
    clientRssMb,
    serverRssMb: idleEnd.rssKb / 1024,
    p50: pct(sorted, 50),
    p99: pct(sorted, 99),
    max: sorted.at(-1) ?? NaN,
    samples: sorted.length,
    missing: expected - sorted.length,
  };
}

async function replayBench(url: string, key: string, discussion: string, seqs: Map<string, number>): Promise<number[]> {
  // REPLAY events through the API (lock/unlock alternately)
  for (let i = 0; i < REPLAY; i++) {
    const seq = (seqs.get(discussion) ?? 0) + 1;
    seqs.set(discussion, seq);
    await fetch(`${url}/api/v1/discussions/${discussion}/${seq % 2 === 1 ? "lock" : "unlock"}`, {
      method: "POST",
      headers: { "x-api-key": key },
    });
  }
  const last = seqs.get(discussion)!;
  const from = last - REPLAY;
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) {
    let done: () => void = () => {};
    const finished = new Promise<void>((resolve) => (done = resolve));
    const start = now();
    let end = 0;
    const c = await connect(
      url,
      discussion,
      key,
      (_d, seq, at) => {
        if (seq === last) {
          end = at;
          done();
        }
      },
      { "last-event-id": String(from) },
    );
    await finished;
    runs.push(end - start);
    c.close();
  }
  return runs.sort((a, b) => a - b);
}

// ---------------------------------------------------------------- reconnect storm

/** The floor of a storm: node:http answering the stream route with the frames a reconnect gets. */
const BARE_SSE_JS = `
const http = require("node:http");
const server = http.createServer((req, res) => {
  const last = Number(req.headers["last-event-id"] ?? 0);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" });
  let out = "event: connected\\nid: " + (last + ${STORM_MISSED}) + "\\ndata: {}\\n\\n";
  for (let i = 1; i <= ${STORM_MISSED}; i++) out += "id: " + (last + i) + "\\nevent: discussion_locked\\ndata: {\\"seq\\":" + (last + i) + "}\\n\\n";
  res.write(out);
  const hb = setInterval(() => res.write(": hb\\n\\n"), 15000);
  req.on("close", () => clearInterval(hb));
});
server.keepAliveTimeout = 60000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
`;

async function startBareSse(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ["-e", BARE_SSE_JS], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
  return { url: `http://127.0.0.1:${port}`, child };
}

// ---------------------------------------------------------------- bare fan-out

/**
 * The floor of a fan-out: node:http holding the streams and writing each event to every stream of
 * its discussion, as the service's sink does (the head through writeHead without chunked encoding,
 * then each frame one socket write of one Buffer shared by all streams), with the head and frames
 * read from the service in the same run (see captureFrames) — no auth, no database, no Redis.
 * A POST …/lock|unlock is the write: the next id of that discussion (from 0) goes to its streams,
 * then the POST is answered.
 */
const BARE_FANOUT_JS = `
const http = require("node:http");
const template = JSON.parse(Buffer.from(process.env.BARE_TEMPLATE, "base64").toString("utf8"));
const heartbeat = Buffer.from(": heartbeat\\n\\n");
const streams = new Map();
const seqs = new Map();
// the time spent writing events to their streams, as the service's stream_fanout_seconds counts it
const fanout = { seconds: 0, events: 0 };
const server = http.createServer((req, res) => {
  if (req.url === "/fanout-stats") { res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(fanout)); return; }
  const m = /^\\/api\\/v1\\/(stream|discussions)\\/([^/?]+)(?:\\/(lock|unlock))?/.exec(req.url);
  if (!m) { res.writeHead(404).end(); return; }
  const d = m[2];
  const seq = seqs.get(d) ?? 0;
  if (m[1] === "stream") {
    let set = streams.get(d);
    if (!set) streams.set(d, (set = new Set()));
    res.useChunkedEncodingByDefault = false;
    res.sendDate = false;
    res.writeHead(200, template.headers.flat());
    const socket = res.socket;
    socket.setNoDelay(true);
    res.write(template.connected.replace(/^id: .*$/m, "id: " + seq));
    set.add(socket);
    res.once("close", () => set.delete(socket));
    return;
  }
  req.resume();
  req.on("end", () => {
    const next = seq + 1;
    seqs.set(d, next);
    const frame = Buffer.from("id: " + next + "\\n" + template.event);
    const set = streams.get(d);
    const started = performance.now();
    for (const socket of set ?? []) socket.write(frame);
    if (set?.size) { fanout.seconds += (performance.now() - started) / 1000; fanout.events++; }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
setInterval(() => { for (const set of streams.values()) for (const s of set) s.write(heartbeat); }, 15000).unref();
server.keepAliveTimeout = 60000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
`;

/** The service's stream head (its headers) and frames, read off one stream: what the bare broadcaster sends. */
interface FrameTemplate {
  headers: [string, string][];
  /** the start of a stream up to and including `connected` (its id line is replaced by the bare's head) */
  connected: string;
  /** an event frame after its `id:` line */
  event: string;
}

async function captureFrames(url: string, key: string, discussion: string, seqs: Map<string, number>): Promise<FrameTemplate> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let raw = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => (raw = Buffer.concat([raw, chunk])));
  socket.write(`GET /api/v1/stream/${discussion} HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${key}\r\n\r\n`);
  const text = () => raw.toString("utf8");
  for (let i = 0; i < 100 && !text().includes("event: connected"); i++) await sleep(50);
  const seq = (seqs.get(discussion) ?? 0) + 1;
  seqs.set(discussion, seq);
  const res = await fetch(`${url}/api/v1/discussions/${discussion}/${seq % 2 === 1 ? "lock" : "unlock"}`, {
    method: "POST",
    headers: { "x-api-key": key },
  });
  if (res.status !== 200) throw new Error(`write answered ${res.status}`);
  const idLine = `id: ${seq}\n`;
  for (let i = 0; i < 100 && !text().includes(idLine); i++) await sleep(50);
  socket.destroy();
  const all = text();
  const headEnd = all.indexOf("\r\n\r\n");
  const headers = all
    .slice(0, headEnd)
    .split("\r\n")
    .slice(1)
    .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()] as [string, string]);
  const body = all.slice(headEnd + 4);
  const connectedEnd = body.indexOf("\n\n", body.indexOf("event: connected")) + 2;
  const eventStart = body.indexOf(idLine);
  const eventEnd = body.indexOf("\n\n", eventStart) + 2;
  if (headEnd < 0 || connectedEnd < 2 || eventStart < 0 || eventEnd < 2)
    throw new Error(`could not read the frames off a stream: ${JSON.stringify(all)}`);
  return { headers, connected: body.slice(0, connectedEnd), event: body.slice(eventStart + idLine.length, eventEnd) };
}

async function startBareFanout(template: FrameTemplate): Promise<BenchServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ["-e", BARE_FANOUT_JS], {
    env: { ...process.env, PORT: String(port), BARE_TEMPLATE: Buffer.from(JSON.stringify(template)).toString("base64") },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  return { url, child, fanoutStats: () => fetch(`${url}/fanout-stats`).then((r) => r.json() as Promise<FanoutStats>) };
}

/**
 * N clients connect to one discussion at once (at most CONNECT_BATCH connects in flight), each with
 * Last-Event-ID = head − STORM_MISSED; seconds until every client has the event at `head`.
 */
async function storm(
  server: { url: string; child: ChildProcess },
  key: string,
  discussion: string,
  head: number,
  n: number,
): Promise<StormResult> {
  const url = server.url;
  const cpu0 = procStat(server.child.pid!).cpuTicks;
  const start = now();
  const clients: Client[] = [];
  let next = 0;
  let caughtUp = 0;
  let allDone: () => void = () => {};
  const done = new Promise<void>((r) => (allDone = r));
  const worker = async () => {
    while (next < n) {
      next++;
      let seen = false;
      const c = await connect(
        url,
        discussion,
        key,
        (_d, seq) => {
          if (!seen && seq >= head) {
            seen = true;
            if (++caughtUp === n) allDone();
          }
        },
        { "last-event-id": String(head - STORM_MISSED) },
      );
      clients.push(c);
    }
  };
  await Promise.all(Array.from({ length: CONNECT_BATCH }, worker));
  await done;
  const seconds = (now() - start) / 1000;
  const cpuUs = (((procStat(server.child.pid!).cpuTicks - cpu0) / TICKS_PER_SECOND) * 1e6) / n;
  for (const c of clients) c.close();
  return { seconds, cpuUs };
}

/** Seconds until all caught up, and the server's CPU time (user + system) per connect in µs. */
interface StormResult {
  seconds: number;
  cpuUs: number;
}
interface StormPair {
  service: StormResult;
  bare: StormResult;
}

// ---------------------------------------------------------------- limits

/** The open-file limit of this process (the npm script raised it to the hard limit; children inherit it). */
function openFileLimit(): number {
  const line = readFileSync("/proc/self/limits", "utf8")
    .split("\n")
    .find((l) => l.startsWith("Max open files"));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === undefined || soft === "unlimited" ? Infinity : Number(soft);
}

/**
 * Fails before anything starts when a process would run out of descriptors: the server (and the
 * bare broadcaster) holds one socket per stream plus its pools, each client process its share.
 * The limit cannot be raised past the hard limit without CAP_SYS_RESOURCE (`ulimit -Hn` tells).
 */
function checkOpenFiles(procs: number): void {
  const limit = openFileLimit();
  const most = Math.max(0, ...CLIENT_COUNTS, PRESENCE_CLIENTS, REPLAY > 0 ? STORM : 0);
  const server = most + 500;
  const client = Math.ceil(most / procs) + 200;
  if (server <= limit && client <= limit) return;
  throw new Error(
    `${most} streams on one server need about ${server} open files in the server process and ${client} in each of the ${procs} ` +
      `client processes; this process may open ${limit} (ulimit -n; the hard limit, ulimit -Hn, is raised only with CAP_SYS_RESOURCE, ` +
      `e.g. by root outside a container or by the service manager's LimitNOFILE). Raise it, or run at most ${limit - 500} streams.`,
  );
}

// ---------------------------------------------------------------- main

/** A cluster row's p99 as a multiple of the same scenario's on the single Redis. */
function p99Ratio(rows: Row[], r: Row): string {
  if (r.redis !== "cluster") return "";
  const single = rows.find((x) => x.redis === "redis" && x.scenario === r.scenario && x.clients === r.clients);
  return single ? `${(r.p99 / single.p99).toFixed(2)}×` : "";
}

let presenceRatio: number | undefined;
const isBare = (r: Row) => r.scenario.endsWith(BARE_NAME);
/** a one-discussion service row's p99 as a multiple of the bare broadcaster's row that followed it */
function bareRatio(r: Row): string {
  const pair = fanoutPairs.find((p) => p.service === r);
  return pair ? `${(r.p99 / pair.bare.p99).toFixed(2)}×` : "";
}
const BARE_NAME = "bare node:http";
/** each one-discussion service row and the bare broadcaster's row after it */
const fanoutPairs: { service: Row; bare: Row }[] = [];

function table(rows: Row[], replay: number[], storms: StormPair[]) {
  const cols: [string, (r: Row) => string][] = [
    ["scenario", (r) => r.scenario],
    ...(ON_CLUSTER ? ([["redis", (r) => r.redis]] as [string, (r: Row) => string][]) : []),
    ["clients", (r) => String(r.clients)],
    ["discussions", (r) => String(r.discussions)],
    ["connect s", (r) => r.connectS.toFixed(1)],
    ["RSS/idle stream KB", (r) => r.rssPerStreamKb.toFixed(1)],
    ["CPU idle %", (r) => r.cpuIdlePct.toFixed(0)],
    ["CPU writes %", (r) => r.cpuWritePct.toFixed(0)],
    ["server RSS MB", (r) => r.serverRssMb.toFixed(0)],
    ["clients' RSS MB", (r) => r.clientRssMb.toFixed(0)],
    ["clients' CPU %", (r) => r.clientCpuPct.toFixed(0)],
    ["write RTT p50 ms", (r) => r.writeP50.toFixed(1)],
    ["fan-out spread p50 ms", (r) => r.spreadP50.toFixed(1)],
    ["fan-out loop ms", (r) => (Number.isFinite(r.fanoutMs) ? r.fanoutMs.toFixed(1) : "—")],
    ["p50 ms", (r) => r.p50.toFixed(1)],
    ["p99 ms", (r) => r.p99.toFixed(1)],
    ...(ON_CLUSTER ? ([["p99 vs redis", (r) => p99Ratio(rows, r)]] as [string, (r: Row) => string][]) : []),
    ["max ms", (r) => r.max.toFixed(1)],
    ["samples", (r) => String(r.samples)],
    ["missing", (r) => String(r.missing)],
    ["p99≤250", (r) => (isBare(r) ? "—" : r.p99 <= 250 ? "yes" : "NO")],
    ["≤20KB", (r) => (isBare(r) ? "—" : r.rssPerStreamKb <= 20 ? "yes" : "NO")],
    ...(BARE_FANOUT ? ([["p99 / bare's", (r) => bareRatio(r)]] as [string, (r: Row) => string][]) : []),
  ];
  const cells = [cols.map(([h]) => h), ...rows.map((r) => cols.map(([, f]) => f(r)))];
  const widths = cols.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  console.log();
  console.log(line(cells[0]!));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const row of cells.slice(1)) console.log(line(row));
  const med = pct(replay, 50);
  console.log();
  if (replay.length > 0)
    console.log(
      `replay of ${REPLAY} events after Last-Event-ID (connect → last frame), ${replay.length} runs: ` +
        `median ${med.toFixed(1)} ms, min ${replay[0]!.toFixed(1)} ms, max ${replay.at(-1)!.toFixed(1)} ms ` +
        `— target ≤ 200 ms: ${med <= 200 ? "yes" : "NO"}`,
    );
  if (storms.length > 0) {
    console.log(`reconnect storm: ${STORM} clients, one discussion, Last-Event-ID ${STORM_MISSED} events back, until all caught up:`);
    console.log("| run | service s | bare Node SSE s | ratio | server CPU µs/connect service | bare |");
    console.log("|-----|-----------|-----------------|-------|-------------------------------|------|");
    storms.forEach(({ service, bare }, i) =>
      console.log(
        `| ${i + 1} | ${service.seconds.toFixed(2)} | ${bare.seconds.toFixed(2)} | ${(service.seconds / bare.seconds).toFixed(2)}× | ${service.cpuUs.toFixed(0)} | ${bare.cpuUs.toFixed(0)} |`,
      ),
    );
    const ratios = storms.map((p) => p.service.seconds / p.bare.seconds).sort((a, b) => a - b);
    const mid = ratios.length / 2;
    const median = ratios.length % 2 === 1 ? ratios[Math.floor(mid)]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
    console.log(`reconnect storm, median ratio of ${ratios.length}: ${median.toFixed(2)}× (target ≤ 2×: ${median <= 2 ? "yes" : "NO"})`);
  }
  if (presenceRatio !== undefined) {
    console.log(
      `presence: p99 with presence on / off, ${PRESENCE_CLIENTS} streams (half on one discussion, ${PRESENCE_CHURN} reconnects per write): ${presenceRatio.toFixed(2)}× (target ≤ 1.2×: ${presenceRatio <= 1.2 ? "yes" : "NO"})`,
    );
  }
  if (fanoutPairs.length > 0) {
    for (const n of new Set(fanoutPairs.map((p) => p.service.clients))) {
      const pairs = fanoutPairs.filter((p) => p.service.clients === n);
      const ratios = pairs.map((p) => p.service.p99 / p.bare.p99).sort((a, b) => a - b);
      const mid = ratios.length / 2;
      const median = ratios.length % 2 === 1 ? ratios[Math.floor(mid)]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
      const rss = pairs.map((p) => p.service.rssPerStreamKb);
      console.log(
        `fan-out against the bare broadcaster, ${n} streams on one discussion: write → receive p99 service / bare node:http ${ratios.map((r) => `${r.toFixed(2)}×`).join(", ")}, ` +
          `median ${median.toFixed(2)}× (target ≤ 1.2×: ${median <= 1.2 ? "yes" : "NO"}); RSS per idle stream ${rss.map((x) => x.toFixed(1)).join(", ")} KB ` +
          `(target ≤ 15 KB: ${Math.max(...rss) <= 15 ? "yes" : "NO"}; the bare's ${pairs.map((p) => p.bare.rssPerStreamKb.toFixed(1)).join(", ")} KB); ` +
          `one event written to every stream (the server's own loop, mean a row) service ${pairs.map((p) => p.service.fanoutMs.toFixed(1)).join(", ")} ms, ` +
          `bare ${pairs.map((p) => p.bare.fanoutMs.toFixed(1)).join(", ")} ms`,
      );
    }
  }
  console.log("targets: 10,000 streams on one instance with p99 ≤ 250 ms, ≤ 20 KB RSS per idle stream, replay of 1,000 events ≤ 200 ms.");
  console.log(
    "note: clients, server, PostgreSQL and Redis share this machine's CPUs; latency includes the clients' own reads " +
      "(t1 is when a client process's event loop reads the chunk: with one core's worth of reads per write, the last streams wait for the others).",
  );
  console.log("note: RSS per stream is (RSS growth)/N and includes V8 heap growth: meaningful from a few thousand streams on.");
}

async function main() {
  const procs =
    CLIENT_PROCS > 0 ? CLIENT_PROCS : Math.max(1, Math.ceil(Math.max(0, ...CLIENT_COUNTS, PRESENCE_CLIENTS) / STREAMS_PER_CLIENT_PROC));
  checkOpenFiles(procs);
  const dbName = `eng_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(PG_ADMIN);
  dbUrl.pathname = `/${dbName}`;
  let server: BenchServer | undefined;
  let cluster: RedisCluster | undefined;
  let pool: ClientPool | undefined;
  try {
    if (ON_CLUSTER) {
      cluster = await startRedisCluster();
      console.log(`Redis Cluster of 3 masters on ${cluster.nodes.join(", ")}`);
    }
    await migratePostgres(dbUrl.toString());
    const db = await openDatabase({ databaseUrl: dbUrl.toString(), dataDir: "/tmp" });
    const tenant = await createTenant({ prisma: db.prisma, secretBox: createSecretBox(ADMIN_SECRET) }, "bench");
    await db.prisma.tenant.update({
      where: { id: tenant.tenantId },
      data: {
        settings: {
          rateLimits: { requestsPerMinute: 1_000_000, streamConnections: 1_000_000 },
          replay: { maxEvents: Math.max(1000, REPLAY) },
        },
      },
    });
    const ids = ["one", ...Array.from({ length: SPREAD }, (_, i) => `spread-${i}`), "replay"];
    await db.prisma.discussion.createMany({ data: ids.map((id) => ({ tenantId: tenant.tenantId, id })) });
    await db.close();

    const seqs = new Map<string, number>();
    const rows: Row[] = [];
    const spread = ids.filter((id) => id.startsWith("spread-"));
    pool = await ClientPool.start(procs);
    console.log(
      `clients ${CLIENT_COUNTS.join(", ")}; ${WRITES} writes per scenario; a fresh server process per scenario; ` +
        `${procs} client process${procs === 1 ? "" : "es"}`,
    );
    let template: FrameTemplate | undefined;
    for (const n of CLIENT_COUNTS) {
      const scenarios = [
        ...(ROWS.has("one") ? Array.from({ length: FANOUT_RUNS }, () => ["one discussion", ["one"]] as const) : []),
        ...(ROWS.has("spread") ? [[`${SPREAD} discussions`, spread] as const] : []),
      ];
      for (const [name, set] of scenarios) {
        const targets: RedisEnv[] = [{ REDIS_URL }, ...(cluster ? [{ REDIS_CLUSTER_NODES: cluster.nodes.join(",") }] : [])];
        let serviceRow: Row | undefined;
        for (const target of targets) {
          redisEnv = target;
          console.log(`… ${n} clients, ${name}${cluster ? ` (${"REDIS_URL" in target ? "redis" : "cluster"})` : ""}`);
          server = await startServer(dbUrl.toString());
          if (BARE_FANOUT && !template) template = await captureFrames(server.url, tenant.apiKey, "one", seqs);
          const row = await scenario(name, server, tenant.apiKey, n, [...set], seqs, pool);
          rows.push(row);
          serviceRow ??= row;
          await stopServer(server);
        }
        redisEnv = { REDIS_URL };
        if (BARE_FANOUT && set.length === 1 && template) {
          console.log(
            `… ${n} clients, ${name}, bare node:http broadcaster (the service's head: ${template.headers.map(([h]) => h).join(", ")}; ` +
              `its first frames ${Buffer.byteLength(template.connected)} bytes, an event frame ${Buffer.byteLength(template.event)} bytes after its id line)`,
          );
          server = await startBareFanout(template);
          const bare = await scenario(`${name}, ${BARE_NAME}`, server, tenant.apiKey, n, [...set], new Map(), pool);
          rows.push(bare);
          await stopServer(server);
          server = undefined;
          fanoutPairs.push({ service: serviceRow!, bare });
        }
      }
    }
    redisEnv = { REDIS_URL };
    if (PRESENCE_CLIENTS > 0) {
      for (const on of [false, true]) {
        console.log(`… ${PRESENCE_CLIENTS} clients, half on one discussion, presence ${on ? "on" : "off"}`);
        serverEnv = { STREAM_PRESENCE: on ? "1" : "0" };
        server = await startServer(dbUrl.toString());
        const name = `presence ${on ? "on" : "off"} (½ on one)`;
        rows.push(
          await scenario(name, server, tenant.apiKey, PRESENCE_CLIENTS, ["one", ...spread], seqs, pool, halfOnFirst, PRESENCE_CHURN),
        );
        await stopServer(server);
        serverEnv = {};
      }
      const off = rows.find((r) => r.scenario.startsWith("presence off"));
      const on = rows.find((r) => r.scenario.startsWith("presence on"));
      if (off && on) presenceRatio = on.p99 / off.p99;
    }
    await pool.stop();
    pool = undefined;
    let replay: number[] = [];
    if (REPLAY > 0) {
      console.log(`… replay of ${REPLAY} events`);
      server = await startServer(dbUrl.toString());
      replay = await replayBench(server.url, tenant.apiKey, "replay", seqs);
      await stopServer(server);
    }
    const storms: StormPair[] = [];
    // the storm reconnects to the replay's events (`--replay 0` skips it too)
    for (let run = 1; STORM > 0 && REPLAY > 0 && run <= STORM_RUNS; run++) {
      // the storm's discussion has its head where the replay scenario left it
      console.log(`… reconnect storm ${run}/${STORM_RUNS} of ${STORM} clients (service, then bare Node SSE)`);
      server = await startServer(dbUrl.toString());
      const head = seqs.get("replay")!;
      const service = await storm(server, tenant.apiKey, "replay", head, STORM);
      await stopServer(server);
      server = await startBareSse();
      const bare = await storm(server, tenant.apiKey, "replay", head, STORM);
      await stopServer(server);
      server = undefined;
      storms.push({ service, bare });
    }
    table(rows, replay, storms);
  } finally {
    if (server) await stopServer(server);
    await pool?.stop();
    await cluster?.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
