// Builds the app's long-lived services from the config: database (migrated), Redis, event bus,
// rate limiter, secret box. Shared by the server and the CLI.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Redis } from "ioredis";
import { pino, type Logger } from "pino";
import type { Config } from "./config.js";
import type { AppServices } from "./context/request.js";
import { openDatabase } from "./db/client.js";
import { createScopeCache } from "./db/tenant-scope.js";
import { systemClock, type Clock } from "./lib/clock.js";
import { createSecretBox } from "./lib/secret-box.js";
import { createRateLimiter } from "./auth/rate-limit.js";
import { createBus, type EventBus } from "./events/bus.js";
import { createEventPublisher } from "./events/publisher.js";
import { busMessageOf } from "./events/fanout.js";
import { attachWebhooks, type WebhookOptions, type WebhookRuntime } from "./delivery/runtime.js"; // webhooks (issue 4)

export interface Runtime {
  services: AppServices;
  bus: EventBus;
  redis: Redis | undefined;
  /** webhooks (issue 4): outbound client, delivery worker (started by the app), handshakes */
  webhooks: WebhookRuntime;
  close(): Promise<void>;
}

/** In embedded mode the admin JWT secret is generated once and kept under DATA_DIR. */
export function resolveAdminSecret(config: Config): string {
  if (config.ADMIN_JWT_SECRET) return config.ADMIN_JWT_SECRET;
  mkdirSync(config.DATA_DIR, { recursive: true });
  const path = join(config.DATA_DIR, "admin-jwt-secret");
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const secret = randomBytes(32).toString("hex");
  writeFileSync(path, secret, { mode: 0o600, flag: "wx" });
  return secret;
}

export function createLogger(config: Config): Logger {
  return pino({
    level: config.LOG_LEVEL,
    redact: {
      paths: ["req.headers.authorization", 'req.headers["x-api-key"]', 'req.headers["x-service-identity"]', "secret", "*.secret", "key", "*.key"],
      censor: "[redacted]",
    },
  });
}

export async function createRuntime(
  config: Config,
  opts: { clock?: Clock; log?: Logger; migrate?: boolean; webhooks?: Partial<WebhookOptions> } = {},
): Promise<Runtime> {
  const log = opts.log ?? createLogger(config);
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: config.DATABASE_POOL_SIZE });
  try {
    if (opts.migrate !== false) {
      const { applied } = await db.migrate();
      if (applied.length) log.info({ applied }, "applied database migrations");
    }
    const adminJwtSecret = resolveAdminSecret(config);
    const redis = config.REDIS_URL
      ? new Redis(config.REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: false, connectionName: "eng-cmd" })
      : undefined;
    redis?.on("error", (err) => log.warn({ err: err.message }, "redis error"));
    const bus = createBus({ ...(config.REDIS_URL ? { redisUrl: config.REDIS_URL } : {}), onError: (err) => log.warn({ err: err.message }, "bus error") });
    const services: AppServices = {
      config,
      db,
      prisma: db.prisma,
      clock: opts.clock ?? systemClock,
      log,
      secretBox: createSecretBox(config.SECRET_ENCRYPTION_KEY ?? adminJwtSecret),
      adminJwtSecret,
      // --- stream fan-out (issue 3): the message carries the envelope and its audience, so
      // listeners need no database read in the common case (src/events/fanout.ts).
      events: createEventPublisher((e) => bus.publish(busMessageOf(e)), log),
      rateLimiter: createRateLimiter({ prisma: db.prisma, redis }),
      scoped: createScopeCache(db.prisma),
    };
    // --- webhooks (issue 4): job hook on the event log, post-commit worker nudge, outbound client
    const webhooks = attachWebhooks(services, opts.webhooks);
    return {
      services,
      bus,
      redis,
      webhooks,
      async close() {
        await webhooks.close().catch((err: unknown) => log.warn({ err }, "webhooks did not stop cleanly"));
        await bus.close().catch(() => undefined);
        redis?.disconnect();
        await db.close();
      },
    };
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}
