// Starts the real server on a random port against the run's PostgreSQL database and Redis.
import { inject } from "vitest";
import { buildApp, type App, type AppOptions } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";

export const TEST_ADMIN_SECRET = "test-admin-secret-0123456789abcdef0123456789";

export interface TestServer {
  url: string;
  app: App;
  stop(): Promise<void>;
}

/** The environment of a test server; the webhook worker and the Bluesky poller are off unless a test turns them on. */
export function testEnv(env: Record<string, string> = {}): Record<string, string> {
  const direct = inject("databaseDirectUrl");
  const clusterNodes = inject("redisClusterNodes");
  return {
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: inject("databaseUrl"),
    // the engines projects (vitest.config.ts): through a transaction-mode pooler, on a Redis Cluster
    ...(direct ? { DATABASE_POOLER: "transaction", DATABASE_DIRECT_URL: direct } : {}),
    ...(clusterNodes ? { REDIS_CLUSTER_NODES: clusterNodes } : { REDIS_URL: inject("redisUrl") }),
    ADMIN_JWT_SECRET: TEST_ADMIN_SECRET,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    ALLOW_HTTP_WEBHOOKS: "1",
    RUN_WEBHOOK_WORKER: "0",
    RUN_EMAIL_WORKER: "0",
    RUN_FOLLOW_WORKER: "0",
    BLUESKY_POLL_INTERVAL_MS: "0",
    ...env,
  };
}

export async function startServer(
  env: Record<string, string> = {},
  opts: Pick<AppOptions, "clock" | "webhooks" | "stream" | "identityProviders" | "federation"> = {},
): Promise<TestServer> {
  const app = await buildApp(loadConfig(testEnv(env)), {
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.stream ? { stream: opts.stream } : {}),
    ...(opts.webhooks ? { webhooks: opts.webhooks } : {}),
    ...(opts.identityProviders ? { identityProviders: opts.identityProviders } : {}),
    ...(opts.federation ? { federation: opts.federation } : {}),
    migrate: false,
  });
  const url = await app.start();
  return { url, app, stop: () => app.stop() };
}
