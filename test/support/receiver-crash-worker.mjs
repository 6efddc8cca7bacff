// A child process for the crash test: builds the runtime against the test database and runs ONLY
// the webhook delivery worker, started as the server starts its workers (dist/workers.js) with the
// others switched off. Prints "ready <workerId>" once it polls. Killed with SIGKILL by the test.
// It runs the runtime as built by the run's global setup (dist/, what `npm start` runs) under plain
// node: no tsx compiling the sources at each start.
//   env: DATABASE_URL, ADMIN_JWT_SECRET (same secret box as the server), CLOCK_OFFSET_MS,
//   WORKER_LEASE_MS (unset: the worker's default lease and renewal)
import process from "node:process";
import { createRuntime } from "../../dist/runtime.js";
import { loadConfig } from "../../dist/config.js";
import { createWorkers } from "../../dist/workers.js";

const offset = Number(process.env.CLOCK_OFFSET_MS ?? 0);
const config = loadConfig({ ...process.env, RUN_WEBHOOK_WORKER: "1", RUN_EMAIL_WORKER: "0", RETENTION_INTERVAL_MS: "0" });
const runtime = await createRuntime(config, {
  migrate: false,
  clock: { now: () => new Date(Date.now() + offset) },
  webhooks: {
    worker: {
      pollIntervalMs: 5,
      ...(process.env.WORKER_LEASE_MS ? { leaseMs: Number(process.env.WORKER_LEASE_MS) } : {}),
      workerId: `crash-child:${process.pid}`,
    },
  },
});
const workers = createWorkers(runtime);
workers.start();
process.stdout.write(`ready ${runtime.services.webhooks.worker.id}\n`);
process.on("SIGTERM", () => {
  void workers
    .stop()
    .then(() => runtime.close())
    .then(() => process.exit(0));
});
