// A server process for the presence test (test/presence.test.ts): the app as built by the run's
// global setup (dist/) under plain node, with short presence intervals. Prints "ready <url>" once it
// listens. Killed with SIGKILL by the test (an instance that crashes with streams open).
//   env: the server's (DATABASE_URL, REDIS_URL, ADMIN_JWT_SECRET, PORT=0, ...),
//        PRESENCE_TTL_MS, PRESENCE_REFRESH_MS, PRESENCE_INTERVAL_MS
import process from "node:process";
import { buildApp } from "../../dist/app.js";
import { loadConfig } from "../../dist/config.js";

const app = await buildApp(loadConfig(process.env), {
  migrate: false,
  stream: {
    presenceTtlMs: Number(process.env.PRESENCE_TTL_MS),
    presenceRefreshMs: Number(process.env.PRESENCE_REFRESH_MS),
    presenceIntervalMs: Number(process.env.PRESENCE_INTERVAL_MS),
  },
});
const url = await app.start();
process.stdout.write(`ready ${url}\n`);
