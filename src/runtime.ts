// The composition root: builds every long-lived service once from the config — database (migrated),
// Redis, event bus, event pipeline, rate limiter, secret box, stream hub, webhook runtime — and
// hands each to what needs it. Shared by the server (src/app.ts) and the CLI.
import { createConsistencyTokens } from "./db/replicas/consistency-token.js";
import { renderUnrenderedBodies } from "./modules/comments/engine/render-backfill.js";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import type { Logger } from "pino";
import { createLogger } from "./lib/logger.js";
import { resolveAdminSecret } from "./auth/admin-jwt.js";
import type { Config } from "./config.js";
import type { AppServices } from "./context/services.js";
import { registerGauges } from "./context/gauges.js";
import { openDatabase } from "./db/client.js";
import type { LockRole } from "./db/data-dir-lock.js";
import { verifySecretKey } from "./db/key-check.js";
import { createScopeCache } from "./db/tenant-scope.js";
import { createTenantStores } from "./db/tenant-store.js";
import { loadTenantGuard } from "./db/tenant-guard.js";
import { systemClock, type Clock } from "./lib/clock.js";
import { createSecretBox } from "./lib/secret-box.js";
import { createSafetyRules } from "./tenancy/safety-rules.js";
import { createIdentityProviders, type IdentityProviderOptions } from "./auth/identity-providers.js";
import { createCommandConnection, redisTargetOf, type RedisClient } from "./lib/redis-connection.js";
import { createIdempotencyRecords } from "./idempotency/records.js";
import { createRateLimiter } from "./auth/rate-limit.js";
import { createKeyLimiter, createSignInThrottle, signInKeyPrefix, type KeyLimiter } from "./auth/sign-in-throttle.js";
import { createAuthCache, tenantRow } from "./auth/auth-cache.js";
import { resolveSettings } from "./tenancy/settings/resolve.js";
import { createOriginIndex } from "./auth/origins.js";
import { createMetrics } from "./lib/metrics.js";
import { createRetentionJob, type RetentionJob } from "./modules/retention/engine/retention.js";
import { createBus, type EventBus } from "./events/bus.js";
import { createEventPipeline } from "./events/pipeline.js";
import { createWebhookRuntime, type WebhookOptions } from "./outbound/webhook-runtime.js";
import { guardedFetch } from "./outbound/http-client.js";
import { StreamHub, type HubOptions } from "./stream-engine/hub.js";
import { createReaderAddresses } from "./context/reader-addresses.js";
import { createRecentWriters } from "./context/read-routing.js";
import { ERASURE_BATCH } from "./modules/readers/erasure.js";
import { createInboxFeed } from "./modules/inbox/engine/feed.js";
import { createAlertJobs, type AlertJobs } from "./modules/alerts/engine/alert-jobs.js";
import { createAkismetJobs } from "./modules/moderation/engine/akismet-feedback.js";
import { createKeyStore } from "./modules/federation/engine/keys.js";
import { createReaderIds } from "./auth/reader-ids.js";
import { migrateReaderIds } from "./modules/sign-in/engine/opaque-reader-ids.js";
import { createActivityComposer } from "./modules/federation/engine/delivery.js";
import { createFanoutComposer } from "./modules/federation/engine/outbound.js";
import { createKvStore } from "./modules/federation/engine/kv-store.js";
import { createInboundComposer } from "./modules/federation/engine/inbound.js";
import { createAnnounceComposer } from "./modules/federation/engine/announce-job.js";
import { createFederationEngine, type FederationEngine, type FederationEngineOptions } from "./modules/federation/engine/engine.js";
import { createFollowComposer } from "./modules/following/engine/fanout.js";
import { createEmailSender, type EmailSender } from "./modules/email/engine/worker.js";
import { createWebmentionJobs, WEBMENTION_BUDGET_WINDOW_SECONDS, WEBMENTION_MAX_SOURCE_BYTES } from "./modules/webmention/engine/verify.js";
import { createWebhookHttpClient } from "./outbound/http-client.js";
import { BLUESKY_MAX_RESPONSE_BYTES } from "./modules/bluesky/client.js";
import { createSearchProjector, type SearchProjector } from "./modules/comments/engine/search-projector.js";

export interface Runtime {
  services: AppServices;
  bus: EventBus;
  /** the command connection (one Redis or a cluster), absent without Redis */
  redis: RedisClient | undefined;
  /** bounded storage (src/modules/retention/engine/retention.ts); started by the app */
  retention: RetentionJob;
  /** chat alerts' messages, composed for the webhook worker (their links' address is set at start: src/workers.ts) */
  alerts: AlertJobs;
  /** emails sent by the outbound queue's email pool (their links' address is set at start: src/workers.ts) */
  email: EmailSender;
  /** migrations applied by this start (empty when none were pending or `migrate: false`) */
  migrated: string[];
  /** the fediverse (src/modules/federation/engine/engine.ts): served by the app, its outbound worker started with the others */
  federation: FederationEngine;
  /** comment search's documents from the event log (src/modules/comments/engine/search-projector.ts): started with the workers */
  search: SearchProjector;
  close(): Promise<void>;
}

/** One limiter per budget a tenant's setting names, made on first use (settings hold few distinct values). */
function keyLimiters(make: (points: number) => KeyLimiter): (points: number) => KeyLimiter {
  const made = new Map<number, KeyLimiter>();
  return (points) => {
    let limiter = made.get(points);
    if (!limiter) made.set(points, (limiter = make(points)));
    return limiter;
  };
}

/** How a runtime is built beyond the config: the one declaration of these options (the app and the tests pass them on). */
export interface RuntimeOptions {
  clock?: Clock;
  log?: Logger;
  /** apply pending migrations first (default true) */
  migrate?: boolean;
  stream?: Partial<HubOptions>;
  webhooks?: Partial<WebhookOptions>;
  /** identity providers' key sets: fetch timeout, refetch cooldown, cache age (tests shorten them) */
  identityProviders?: Partial<Pick<IdentityProviderOptions, "timeoutMs" | "cooldownMs" | "cacheMaxAgeMs">>;
  /** "cli": the CLI opens the embedded data folder (a starting server waits for it) */
  lockRole?: LockRole;
  /** a reader's erasure: comments per statement (tests make it small to get many batches) */
  erasure?: { batchSize?: number };
  /** the federation's limits and sweep (tests shorten them) */
  federation?: FederationEngineOptions;
}

export async function createRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  const log = opts.log ?? createLogger(config);
  // the tenant guard's SQL parser (WebAssembly), loaded once before any tenant's store is used
  await loadTenantGuard();
  const metrics = createMetrics();
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    pooler: config.DATABASE_POOLER,
    directUrl: config.DATABASE_DIRECT_URL,
    dataDir: config.DATA_DIR,
    poolSize: config.DATABASE_POOL_SIZE,
    timeoutMs: config.DATABASE_TIMEOUT_MS,
    randomPageCost: config.DATABASE_RANDOM_PAGE_COST === "server" ? undefined : config.DATABASE_RANDOM_PAGE_COST,
    ...(opts.lockRole ? { lockRole: opts.lockRole } : {}),
    onIdleError: (err) => log.warn({ err: err.message }, "idle database connection failed"),
    onCreated: (database) => log.info({ database }, "created the database named by DATABASE_URL"),
    replicas: {
      urls: config.DATABASE_REPLICA_URLS,
      maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS,
      onFallback: (replica, reason, err) => {
        metrics.replicaFallbacks.inc({ replica, reason });
        const detail = { replica, reason, err: err instanceof Error ? err.message : String(err) };
        if (reason === "refused") log.warn(detail, "a read on a replica was refused and ran on the primary");
      },
      onStateChange: (replica, from, to, lagMs) => log.warn({ replica, from, to, lagMs }, `database replica ${to}`),
    },
  });
  try {
    let migrated: string[] = [];
    if (opts.migrate !== false) {
      migrated = (await db.migrate()).applied;
      if (migrated.length) log.info({ applied: migrated }, "applied database migrations");
      // comments written before bodies were stored rendered get their bodyHtml before anything is answered
      const rendered = await renderUnrenderedBodies(db.sql);
      if (rendered) log.info({ comments: rendered }, "rendered the bodies of earlier comments");
    }
    const adminJwtSecret = resolveAdminSecret(config);
    const keySource = config.SECRET_ENCRYPTION_KEY
      ? "SECRET_ENCRYPTION_KEY"
      : config.ADMIN_JWT_SECRET
        ? "ADMIN_JWT_SECRET"
        : `ADMIN_JWT_SECRET (generated in ${join(config.DATA_DIR, "admin-jwt-secret")})`;
    const secretBox = createSecretBox(config.SECRET_ENCRYPTION_KEY ?? adminJwtSecret, {
      onUnreadable: () =>
        log.error(
          { keySource },
          "a stored secret was sealed under another key than this instance's (restored from elsewhere?): requests needing it answer 503 secret_key_mismatch",
        ),
    });
    // the stored secrets were sealed with this key, or one line says which setting differs (src/db/key-check.ts)
    await verifySecretKey({ prisma: db.prisma, box: secretBox, keySource });
    // REDIS_URL or REDIS_CLUSTER_NODES; every connection comes from src/lib/redis-connection.ts.
    // The command connection fails fast: a stalled or lost Redis (or shard) makes its users fall back.
    const redisTarget = redisTargetOf(config);
    const redis = redisTarget && createCommandConnection(redisTarget, { name: "eng-cmd" });
    redis?.on("error", (err: Error) => log.warn({ err: err.message }, "redis error"));
    const bus = createBus({ redis: redisTarget, onError: (err) => log.warn({ err: err.message }, "bus error") });
    const clock = opts.clock ?? systemClock;
    const base = { config, prisma: db.prisma, sql: db.sql, clock, log, secretBox, metrics };
    const scoped = createScopeCache(db.prisma);
    const stores = createTenantStores(scoped, db.sql);
    // chat alerts and Akismet's submissions go through the webhook queue: their requests are composed by their engines
    const alerts = createAlertJobs({ config, stores, secretBox, linkSecret: adminJwtSecret });
    const akismet = createAkismetJobs({ stores, secretBox });
    // and email: each rendered message a job, sent over SMTP by its composer (a tenant's server through the SSRF guard)
    const email = createEmailSender({
      config,
      sql: db.sql,
      prisma: db.prisma,
      secretBox,
      adminJwtSecret,
      policy: { allowHttpLoopback: config.ALLOW_HTTP_WEBHOOKS, allowList: config.WEBHOOK_ALLOWLIST },
    });
    // ActivityPub activities too: signed by the tenant's actor when the worker claims them
    const federationKeys = createKeyStore({ stores, secretBox });
    // the hosted sign-in's opaque reader ids: each tenant's key (src/auth/reader-ids.ts)
    const readerIds = createReaderIds({ sql: db.sql, secretBox });
    // ids of the plain-hash form made opaque, once a tenant, before anything is served (a data
    // migration: it runs where the schema's were applied by another process too)
    const keyed = await migrateReaderIds({ prisma: db.prisma, readerIds, log });
    if (keyed) log.info({ tenants: keyed }, "tenants given a reader id key");
    // the spec each remote server accepted is kept in the federation's store (the engine's own, below, is the same table)
    const activitypub = createActivityComposer({ sql: db.sql, keys: federationKeys, kv: createKvStore({ sql: db.sql, clock }) });
    // webmentions' sources are fetched through the same SSRF guard, by a client bounded to a page's size
    // Bluesky's XRPC calls (the AppView's threads, the site account's posts) through the same SSRF guard, bounded to a thread's size
    const blueskyHttp = createWebhookHttpClient({
      allowHttpLoopback: config.ALLOW_HTTP_WEBHOOKS,
      allowList: config.WEBHOOK_ALLOWLIST,
      maxResponseBytes: BLUESKY_MAX_RESPONSE_BYTES,
    });
    const sourceHttp = createWebhookHttpClient({
      allowHttpLoopback: config.ALLOW_HTTP_WEBHOOKS,
      allowList: config.WEBHOOK_ALLOWLIST,
      maxResponseBytes: WEBMENTION_MAX_SOURCE_BYTES,
    });
    // webmentions' budgets (contract section 24, 31): per sender address before verification, per site
    // and source domain for what verification finds
    const webmentions = {
      perAddress: createKeyLimiter({
        redis,
        keyPrefix: `${signInKeyPrefix(config.DATABASE_URL)}:webmention-sender`,
        points: config.WEBMENTION_REQUESTS_PER_ADDRESS,
        windowSeconds: WEBMENTION_BUDGET_WINDOW_SECONDS,
      }),
      perSourceDomain: createKeyLimiter({
        redis,
        keyPrefix: `${signInKeyPrefix(config.DATABASE_URL)}:webmention-site-source`,
        points: config.WEBMENTION_REQUESTS_PER_SOURCE_DOMAIN,
        windowSeconds: WEBMENTION_BUDGET_WINDOW_SECONDS,
      }),
    };
    // its writes need the statement services, built below with the worker's nudge
    const webmention = createWebmentionJobs({
      http: sourceHttp,
      clock,
      stores,
      pipeline: () => services,
      perSourceDomain: webmentions.perSourceDomain,
    });
    // a federated discussion's events become their activities in the federation's context (built below)
    const activitypubFanout = createFanoutComposer(() => federation);
    // inbound activities are applied by the federation's inbox listeners (the engine, built below with the services)
    const activitypubInbound = createInboundComposer({ engine: () => federation });
    const webhooks = createWebhookRuntime(
      {
        ...base,
        composers: {
          alert: alerts,
          akismet,
          activitypub,
          activitypub_fanout: activitypubFanout,
          activitypub_inbound: activitypubInbound,
          // POST /federation/announce: a site's discussions not yet announced, a batch at a time
          activitypub_announce: createAnnounceComposer({ stores }),
          webmention,
          // a new comment told to its discussion's followers: its writes announce inbox items after commit
          follow: createFollowComposer({ stores, events: () => services }),
          email,
          // a reader's due email items made into their message (and its `email` job)
          email_compose: email.mail,
        },
      },
      opts.webhooks,
    );
    const authCache = createAuthCache({ redisTarget, redis, log });
    const origins = createOriginIndex({ prisma: base.prisma, serverOrigins: config.CORS_ORIGINS, log });
    const streams = new StreamHub({
      app: base,
      bus,
      redis,
      redisTarget,
      // presence names readers and client addresses in Redis by a keyed hash every instance computes alike
      presenceSecret: createHmac("sha256", adminJwtSecret).update("engagement presence v1").digest(),
      // readers' own streams read their inbox items (GET /api/v1/stream/me)
      readerFeed: createInboxFeed(db.sql),
      replicas: db.replicas,
      onReplayRead: (target) => metrics.databaseReads.inc({ target, reason: "replay" }),
      tenantSettings: {
        cached: (tenantId) => {
          const t = authCache.tenant(tenantId);
          return t && resolveSettings(t.settings);
        },
        read: async (tenantId) => {
          const t = await tenantRow({ prisma: base.prisma, authCache }, tenantId);
          return t && resolveSettings(t.settings);
        },
      },
      options: { ...opts.stream },
      onBusEvent: (ev) => metrics.fanoutLag.observe(Math.max(0, Date.now() - Date.parse(ev.envelope.occurredAt)) / 1000),
      onFanout: (seconds) => metrics.fanout.observe(seconds),
    });
    // comment search's documents, projected from the log off the write path: woken by the pipeline below
    const search = createSearchProjector({ sql: db.sql, log, metrics }, { pollMs: config.SEARCH_POLL_MS });
    const services: AppServices = {
      ...base,
      db,
      adminJwtSecret,
      // the same key on every instance (a token comes back to any of them), apart from the secret box's
      consistencyTokens: createConsistencyTokens(config.SECRET_ENCRYPTION_KEY ?? adminJwtSecret),
      sql: db.sql,
      idempotency: createIdempotencyRecords({ sql: db.sql, tenantSql: (tenantId) => stores(tenantId).sql, secretBox, log }),
      // after a write commits: its events on the bus, the search projector and the webhook worker woken (src/events/pipeline.ts)
      events: createEventPipeline({
        bus,
        metrics,
        nudgeWorker: () => webhooks.worker.nudge(),
        nudgeSearch: (keys) => search.nudge(keys),
        log,
      }),
      search,
      rateLimiter: createRateLimiter({
        prisma: db.prisma,
        redis,
        onRefusal: () => metrics.rateLimitRefusals.inc(),
        onStoreCall: () => metrics.rateLimitStoreCalls.inc(),
      }),
      readerIds,
      signInThrottle: createSignInThrottle({ redis, keyPrefix: signInKeyPrefix(config.DATABASE_URL) }),
      readerSignIn: {
        perAddress: createKeyLimiter({
          redis,
          keyPrefix: `${signInKeyPrefix(config.DATABASE_URL)}:reader-addr`,
          points: config.SIGN_IN_REQUESTS_PER_ADDRESS,
          windowSeconds: 600,
        }),
        // contract section 20: at most 5 email links per address per hour
        perEmail: createKeyLimiter({
          redis,
          keyPrefix: `${signInKeyPrefix(config.DATABASE_URL)}:reader-email`,
          points: 5,
          windowSeconds: 3600,
        }),
      },
      webmentions,
      bluesky: { http: blueskyHttp },
      discussionAutoCreate: keyLimiters((perMinute) =>
        createKeyLimiter({
          redis,
          keyPrefix: `${signInKeyPrefix(config.DATABASE_URL)}:discussion-create:${perMinute}`,
          points: perMinute,
          windowSeconds: 60,
        }),
      ),
      authCache,
      origins,
      scoped,
      stores,
      streams,
      webhooks,
      safety: createSafetyRules(),
      // key sets and discovery documents through the webhooks' client: the same SSRF guard and allow-list
      identityProviders: createIdentityProviders({
        fetch: guardedFetch(webhooks.http, opts.identityProviders?.timeoutMs ?? 3_000),
        clock,
        ...opts.identityProviders,
      }),
      readerAddresses: createReaderAddresses({ sql: db.sql, clock }),
      recentWriters: createRecentWriters(config.DATABASE_REPLICA_STICKY_MS, clock),
      erasure: { batchSize: opts.erasure?.batchSize ?? ERASURE_BATCH },
    };
    registerGauges(services);
    const federation = createFederationEngine(services, { keys: federationKeys, redis }, opts.federation);
    const retention = createRetentionJob({ prisma: db.prisma, clock, log, metrics });
    return {
      services,
      bus,
      redis,
      retention,
      alerts,
      email,
      migrated,
      federation,
      search,
      async close() {
        retention.stop();
        await search.stop();
        await federation.stop();
        await streams.shutdown();
        await authCache.close();
        origins.close();
        await webhooks.close().catch((err: unknown) => log.warn({ err }, "webhooks did not stop cleanly"));
        email.close();
        sourceHttp.close();
        blueskyHttp.close();
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
