// A server process for the erasure crash test (test/erasure-crash.test.ts): the app as built by the
// run's global setup (dist/, what `npm start` runs) under plain node, with a small erasure batch so
// that a few comments make many batches. Prints "ready <url>" once it listens. Killed with SIGKILL
// by the test.
//   env: the server's (DATABASE_URL, ADMIN_JWT_SECRET, PORT=0, ...), ERASURE_BATCH_SIZE
import process from "node:process";
import { buildApp } from "../../dist/app.js";
import { loadConfig } from "../../dist/config.js";

const app = await buildApp(loadConfig(process.env), {
  migrate: false,
  erasure: { batchSize: Number(process.env.ERASURE_BATCH_SIZE ?? 5) },
});
const url = await app.start();
process.stdout.write(`ready ${url}\n`);
