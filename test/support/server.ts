// Starts the real server on a random port against the run's PostgreSQL database and Redis.
import { inject } from "vitest";
import { buildApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import type { Clock } from "../../src/lib/clock.js";

export const TEST_ADMIN_SECRET = "test-admin-secret-0123456789abcdef0123456789";

export interface TestServer {
  url: string;
  app: App;
  stop(): Promise<void>;
}

export async function startServer(env: Record<string, string> = {}, opts: { clock?: Clock } = {}): Promise<TestServer> {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: inject("databaseUrl"),
    REDIS_URL: inject("redisUrl"),
    ADMIN_JWT_SECRET: TEST_ADMIN_SECRET,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    ALLOW_HTTP_WEBHOOKS: "1",
    ...env,
  });
  const app = await buildApp(config, { ...opts, migrate: false });
  const url = await app.start();
  return { url, app, stop: () => app.stop() };
}
