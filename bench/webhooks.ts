// npm run bench:webhooks — webhook delivery throughput and latency of one instance against a fast
// loopback receiver, beside a bare got POST loop with the concurrency one endpoint may use (the worker's per-endpoint cap) in the same run.
// Prints a table against the targets (≥ 1,000 signed deliveries/s, ≥ 50 % of the bare loop). Not a test.
//
//  1. bare got: `concurrency` loops POSTing a same-size JSON body to the receiver for BENCH_SECONDS,
//     once before and once after the drain (the mean is compared: a shared machine's load drifts).
//  2. throughput: BENCH_EVENTS events are committed with the worker stopped (each creates a job in
//     its transaction), then the worker starts and drains the queue: signed deliveries per second.
//  3. latency: with the worker running, events are committed at a steady pace; for each one,
//     commit (post-commit publish) → the receiver has the request. p50 / p99.
// Env: BENCH_SECONDS (5), BENCH_EVENTS (5000), BENCH_LATENCY_EVENTS (1000), BENCH_PG_URL, BENCH_REDIS_URL,
// BENCH_PROFILE=<file.cpuprofile> (CPU profile of the queue drain only).
import { writeFileSync } from "node:fs";
import http from "node:http";
import { Worker } from "node:worker_threads";
import { Session } from "node:inspector/promises";
import https from "node:https";
import { performance } from "node:perf_hooks";
import got from "got";
import { fmtTable, startBenchApp } from "./support.js";
import { DEFAULT_WORKER_OPTIONS } from "../src/delivery/worker.js";
import type { StoredEvent } from "../src/events/types.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);
const LATENCY_EVENTS = Number(process.env.BENCH_LATENCY_EVENTS ?? 1000);
// One endpoint gets at most maxPerEndpoint attempts in flight (the worker's fairness cap), so the bare
// loop runs at that concurrency: the same parallelism the drain of one endpoint may use.
const CONCURRENCY = Math.min(DEFAULT_WORKER_OPTIONS.concurrency, DEFAULT_WORKER_OPTIONS.maxPerEndpoint);
const DISCUSSIONS = 200;

// ---- a fast receiver in its own thread (its CPU is not the instance's): answers handshakes,
// 200 for everything else, reports arrival times (epoch ms, sub-ms precision) in batches ----
const RECEIVER_JS = `
const http = require("node:http");
const { parentPort } = require("node:worker_threads");
let batch = [];
setInterval(() => { if (batch.length) { parentPort.postMessage(batch); batch = []; } }, 5).unref();
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    if (req.headers["x-service-event"] === "verification") {
      const { challenge } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ challenge }));
      return;
    }
    const key = req.headers["x-service-idempotency-key"];
    batch.push([typeof key === "string" ? key.slice(key.indexOf(":") + 1) : "", performance.timeOrigin + performance.now()]);
    res.writeHead(200).end("ok");
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
`;
const arrivals = new Map<string, number>();
let received = 0;
const receiverThread = new Worker(RECEIVER_JS, { eval: true });
const receiverUrl = await new Promise<string>((resolve) => {
  receiverThread.on("message", (m: { port: number } | [string, number][]) => {
    if (Array.isArray(m)) {
      received += m.length;
      for (const [id, at] of m) if (id) arrivals.set(id, at);
    } else {
      resolve(`http://127.0.0.1:${m.port}/hook`);
    }
  });
});
const epochNow = () => performance.timeOrigin + performance.now();

const env = await startBenchApp({ RUN_WEBHOOK_WORKER: "0" });
const services = env.app.runtime.services;
const worker = env.app.runtime.services.webhooks.worker;
const headers = { "content-type": "application/json", "x-api-key": env.apiKey };

// commit times: the publisher runs right after each transaction commits
const committed = new Map<string, number>();
const publisher = services.events;
services.events = {
  ...publisher,
  publish(events: StoredEvent[]) {
    const now = epochNow();
    for (const e of events) committed.set(e.envelope.id, now);
    publisher.publish(events);
  },
};

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${env.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}

/** Commits `n` events (discussion lock/unlock) with `parallel` writers (a divisor of DISCUSSIONS: each owns its discussions). */
const locked = new Map<number, boolean>();
async function commitEvents(n: number, parallel: number, paceMs = 0): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async (_, w) => {
      for (let i = w; ; i += parallel) {
        if (next >= n) return;
        next++;
        const d = i % DISCUSSIONS;
        // each writer owns its discussions, so lock/unlock alternate cleanly
        const action = locked.get(d) ? "unlock" : "lock";
        locked.set(d, !locked.get(d));
        await api("POST", `/api/v1/discussions/bench-${d}/${action}`);
        if (paceMs) await new Promise((ok) => setTimeout(ok, paceMs));
      }
    }),
  );
}

async function bareGotLoop(body: string): Promise<number> {
  const agent = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true }) };
  const client = got.extend({ agent, retry: { limit: 0 }, followRedirect: false, throwHttpErrors: false });
  let done = 0;
  const until = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await client.post(receiverUrl, { body, headers: { "content-type": "application/json" } });
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - started) / 1000);
  agent.http.destroy();
  return rate;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

try {
  for (let d = 0; d < DISCUSSIONS; d++) await api("PUT", `/api/v1/discussions/bench-${d}`, {});
  const ep = await api("POST", "/api/v1/webhooks", { url: receiverUrl, events: ["*"] });
  for (let i = 0; i < 200 && !(await api("GET", `/api/v1/webhooks/${ep.webhookId}`)).verified; i++) {
    await new Promise((ok) => setTimeout(ok, 25));
  }

  // 1. bare got loop with a body the size of a real envelope
  const sample = JSON.stringify({
    id: crypto.randomUUID(),
    seq: 1,
    type: "discussion_locked",
    tenantId: "ten_x",
    discussionId: "bench-0",
    occurredAt: new Date().toISOString(),
    data: {
      discussion: {
        id: "bench-0",
        title: null,
        url: null,
        state: "locked",
        commentCount: 0,
        counts: { comments: 0 },
        createdAt: new Date().toISOString(),
        updatedAt: new Date().toISOString(),
      },
    },
  });
  const bareBefore = await bareGotLoop(sample);

  // 2. drain a queue of EVENTS jobs
  const seedStart = performance.now();
  await commitEvents(EVENTS, 40);
  const seedRate = EVENTS / ((performance.now() - seedStart) / 1000);
  arrivals.clear();
  const profiler = process.env.BENCH_PROFILE ? new Session() : null;
  if (profiler) {
    profiler.connect();
    await profiler.post("Profiler.enable");
    await profiler.post("Profiler.start");
  }
  const drainStartEpoch = epochNow();
  worker.start();
  const drainDeadline = performance.now() + 120_000;
  while (arrivals.size < EVENTS && performance.now() < drainDeadline) await new Promise((ok) => setTimeout(ok, 5));
  if (arrivals.size < EVENTS) throw new Error(`only ${arrivals.size} of ${EVENTS} deliveries arrived`);
  const drainSeconds = (Math.max(...arrivals.values()) - drainStartEpoch) / 1000;
  // the machine's load can drift: the bare loop runs before and after the drain, the mean counts
  await worker.stop();
  const bareAfter = await bareGotLoop(sample);
  const bare = (bareBefore + bareAfter) / 2;
  worker.start();
  if (profiler) {
    const { profile } = await profiler.post("Profiler.stop");
    writeFileSync(process.env.BENCH_PROFILE!, JSON.stringify(profile));
    profiler.disconnect();
  }
  const signed = EVENTS / drainSeconds;

  // 3. latency at a steady pace, worker running
  arrivals.clear();
  committed.clear();
  await commitEvents(LATENCY_EVENTS, 8, 5);
  const deadline = performance.now() + 30_000;
  while (arrivals.size < LATENCY_EVENTS && performance.now() < deadline) await new Promise((ok) => setTimeout(ok, 5));
  const lat = [...committed].flatMap(([id, t]) => (arrivals.has(id) ? [arrivals.get(id)! - t] : []));

  const ratio = signed / bare;
  const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  console.log(
    `\nwebhook delivery, one instance, one endpoint (${CONCURRENCY} in flight at most; worker concurrency ${DEFAULT_WORKER_OPTIONS.concurrency}), ${EVENTS} queued events (${fmt(seedRate)} events/s committed while seeding)\n`,
  );
  console.log(
    fmtTable(
      ["metric", "value", "target", "met"],
      [
        ["signed deliveries/s (queue drain)", fmt(signed), "≥ 1,000/s", signed >= 1000 ? "yes" : "NO"],
        ["bare got POST/s (same concurrency)", `${fmt(bare)} (${fmt(bareBefore)} before, ${fmt(bareAfter)} after)`, "", ""],
        ["signed / bare", `${(ratio * 100).toFixed(0)} %`, "≥ 50 %", ratio >= 0.5 ? "yes" : "NO"],
        [`commit → receiver p50 (${lat.length} events)`, `${fmt(pct(lat, 50))} ms`, "", ""],
        [`commit → receiver p99 (${lat.length} events)`, `${fmt(pct(lat, 99))} ms`, "report", ""],
      ],
    ),
  );
  let attempts = 0;
  for (let i = 0; i < 100 && attempts < EVENTS + lat.length; i++) {
    attempts = await services.prisma.webhookAttempt.count({ where: { endpointId: ep.webhookId } });
    if (attempts < EVENTS + lat.length) await new Promise((ok) => setTimeout(ok, 20));
  }
  console.log(`\nattempt rows: ${attempts}, deliveries received: ${received} (the receiver runs in its own thread)`);
} finally {
  await env.close();
  await receiverThread.terminate();
}
