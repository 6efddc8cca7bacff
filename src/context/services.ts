// The app's long-lived services, built once by the composition root (src/runtime.ts) and handed to
// every request through its context (ctx.app). Infrastructure below this room takes only the
// narrow part it needs (e.g. WriteServices, StreamHubServices, WebhookServices).
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import type { Sql } from "../db/sql.js";
import type { TenantStore } from "../db/tenant-store.js";
import type { Metrics } from "../lib/metrics.js";
import type { ScopedPrisma } from "../db/tenant-scope.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import type { SecretBox } from "../lib/secret-box.js";
import type { RateLimiter } from "../auth/rate-limit.js";
import type { KeyLimiter, SignInThrottle } from "../auth/sign-in-throttle.js";
import type { AuthCache } from "../auth/auth-cache.js";
import type { ReaderIds } from "../auth/reader-ids.js";
import type { OriginIndex } from "../auth/origins.js";
import type { EventPipeline } from "../events/pipeline.js";
import type { IdempotencyRecords } from "../idempotency/records.js";
import type { StreamHub } from "../stream-engine/hub.js";
import type { WebhookRuntime } from "../outbound/webhook-runtime.js";
import type { WebhookHttpClient } from "../outbound/http-client.js";
import type { SafetyRules } from "../tenancy/safety-rules.js";
import type { IdentityProviders } from "../auth/identity-providers.js";
import type { ReaderAddresses } from "./reader-addresses.js";
import type { Replica } from "../db/replicas/replica-set.js";
import type { ConsistencyTokens } from "../db/replicas/consistency-token.js";
import type { HeaderBag } from "./headers.js";

export interface AppServices {
  config: Config;
  db: Database;
  prisma: PrismaClient;
  clock: Clock;
  log: Logger;
  secretBox: SecretBox;
  /** X-Service-Consistency's tokens, sealed for their tenant (src/db/replicas/consistency-token.ts) */
  consistencyTokens: ConsistencyTokens;
  adminJwtSecret: string;
  /** plain SQL on the database's connections: the hot paths' single statements */
  sql: Sql;
  /** Idempotency-Key records: claims, the writes' results, kept answers (src/idempotency/records.ts) */
  idempotency: IdempotencyRecords;
  /** what follows a committed event: fan-out, the search projector's nudge, and a webhook worker wake-up when jobs were queued */
  events: EventPipeline;
  /** comment search's documents, a projection of the event log (src/modules/comments/engine/search-projector.ts) */
  search: SearchProjection;
  rateLimiter: RateLimiter;
  /** console password sign-in attempts, counted across instances through Redis (src/auth/sign-in-throttle.ts) */
  signInThrottle: SignInThrottle;
  /** the hosted reader sign-in's budgets (contract section 20): requests per client address and tenant, email links per address */
  readerSignIn: { perAddress: KeyLimiter; perEmail: KeyLimiter };
  /** the hosted sign-in's opaque reader ids: each tenant's key and the ids made with it (src/auth/reader-ids.ts) */
  readerIds: ReaderIds;
  /** discussions a page's origin may create per minute (settings discussions.autoCreatePerMinute): the limiter of that budget */
  discussionAutoCreate: (perMinute: number) => KeyLimiter;
  /**
   * webmentions' budgets in 10 minutes (src/modules/webmention/): per sender's client address, before
   * verification (WEBMENTION_REQUESTS_PER_ADDRESS); per site and source domain, for the mentions
   * verification finds linking (WEBMENTION_REQUESTS_PER_SOURCE_DOMAIN, keyed `<tenant id>\n<domain>`)
   */
  webmentions: { perAddress: KeyLimiter; perSourceDomain: KeyLimiter };
  /** Bluesky's XRPC calls: the guarded client they go through (src/modules/bluesky/client.ts) */
  bluesky: { http: WebhookHttpClient };
  /** API keys and tenant rows in process, invalidated across instances (src/auth/auth-cache.ts) */
  authCache: AuthCache;
  /** browser origins allowed by CORS_ORIGINS and the tenants' allowedOrigins (src/auth/origins.ts) */
  origins: OriginIndex;
  /** Prometheus metrics (src/lib/metrics.ts) */
  metrics: Metrics;
  /** Tenant-scoped Prisma clients (src/db/tenant-scope.ts): the primary's, or a read replica's. */
  scoped: (tenantId: string, replica?: Replica | null) => ScopedPrisma;
  /** Each tenant's store: its scoped Prisma client and its guarded SQL (src/db/tenant-store.ts), on the primary or a read replica. */
  stores: (tenantId: string, replica?: Replica | null) => TenantStore;
  /** which reader identities and keys wrote lately on this instance (DATABASE_REPLICA_STICKY_MS: src/context/read-routing.ts) */
  recentWriters: RecentWriters;
  /** the instance's SSE streams and GraphQL subscriptions */
  streams: StreamHub;
  /** outbound webhooks: client, URL policy, delivery worker, handshakes */
  webhooks: WebhookRuntime;
  /** the tenants' safety rules, compiled once per settings change (src/tenancy/safety-rules.ts) */
  safety: SafetyRules;
  /** the tenants' identity providers: their tokens verified with key sets cached per instance (src/auth/identity-providers.ts) */
  identityProviders: IdentityProviders;
  /** readers' email addresses from their identities, recorded once per instance (src/context/reader-addresses.ts) */
  readerAddresses: ReaderAddresses;
  /** a reader's erasure (src/modules/readers/erasure.ts): how many of their comments one statement takes */
  erasure: { batchSize: number };
}

/** The search projector, as what a request needs of it (src/modules/comments/engine/search-projector.ts). */
export interface SearchProjection {
  /** these discussions have new events: this instance's projector takes them now (when it runs: RUN_SEARCH_PROJECTOR) */
  nudge(keys: Iterable<{ tenantId: string; discussionId: string }>): void;
  /** resolves once this instance's projector ends its next run of steps, or after `ms` */
  passed(ms: number): Promise<void>;
}

/** The callers that wrote on this instance lately, by a hash of their credentials. */
export interface RecentWriters {
  /** a write was answered to the caller of these headers */
  wrote(headers: HeaderBag): void;
  /** the caller of these headers wrote within the sticky window */
  wroteLately(headers: HeaderBag): boolean;
}
