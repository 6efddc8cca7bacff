// A child process for the email crash test: builds the runtime against the test database and runs
// ONLY the email worker (dist/, as the run's global setup built it), started as the server starts
// its workers (dist/workers.js) with the others switched off. Prints "ready" once it polls.
// Killed with SIGKILL by the test.
//   env: DATABASE_URL, ADMIN_JWT_SECRET, SMTP_URL, EMAIL_LEASE_MS (how long a claim holds a message's job)
import process from "node:process";
import { createRuntime } from "../../dist/runtime.js";
import { loadConfig } from "../../dist/config.js";
import { createWorkers } from "../../dist/workers.js";

const config = loadConfig({
  ...process.env,
  RUN_EMAIL_WORKER: "1",
  RUN_WEBHOOK_WORKER: "0",
  RETENTION_INTERVAL_MS: "0",
  EMAIL_POLL_MS: "10",
});
const runtime = await createRuntime(config, { migrate: false });
createWorkers(runtime, {
  email: { leaseMs: Number(process.env.EMAIL_LEASE_MS ?? 1000), workerId: `email-crash-child:${process.pid}` },
}).start();
process.stdout.write("ready\n");
