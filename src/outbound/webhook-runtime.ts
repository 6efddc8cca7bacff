/**
 * The webhook machinery of one app instance: the outbound HTTP client (keep-alive agents, URL
 * policy from ALLOW_HTTP_WEBHOOKS / WEBHOOK_ALLOWLIST), the delivery worker and background
 * handshakes, and the signed calls made on the request path (signed-calls.ts: the tenants' moderation
 * hooks). Delivery jobs
 * are created by the write statements themselves, in the event's own transaction
 * (src/events/statement.ts); the event pipeline wakes the worker after such a commit. Built once by
 * the composition root (src/runtime.ts) and handed out as `services.webhooks`.
 *
 * Two kinds run in pools of their own, each a worker on the same queue that claims only them, so that
 * webhook deliveries never wait behind them (not for a slot, and not in the per-tenant count of the
 * jobs a worker holds): the webmentions' verifications (kind `webmention`: a GET of a page anyone may
 * name, which may be slow on purpose), `mentionWorker`, with WEBMENTION_CONCURRENCY attempts at most
 * (a quarter of them per source host, half per tenant); and the follow jobs (kind `follow`: database
 * work, a batch of a discussion's followers at a time), `followWorker`, polling every FOLLOW_POLL_MS;
 * and the emails (kind `email`: an SMTP send, seconds long, and kind `email_compose`: a reader's due
 * items made into their message), `emailWorker`, polling every EMAIL_POLL_MS.
 * The delivery worker claims every other kind.
 */
import { setMaxListeners } from "node:events";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Sql } from "../db/sql.js";
import type { Clock } from "../lib/clock.js";
import type { SecretBox } from "../lib/secret-box.js";
import type { Metrics } from "../lib/metrics.js";
import { createWebhookHttpClient, type WebhookHttpClient } from "./http-client.js";
import { HANDSHAKE_TIMEOUT_MS } from "./handshake.js";
import type { AddressPolicy } from "./url-guard.js";
import { createWebhookWorker, type WebhookWorker, type WorkerDeps, type WorkerOptions } from "./worker.js";
import { createSignedCalls, type SignedCalls } from "./signed-calls.js";
import { ALL_KINDS, type JobKind } from "./jobs.js";
import type { MessageComposers } from "./composers.js";

export interface WebhookOptions {
  /** Handshake timeout (contract: 30 s); tests shorten it. */
  handshakeTimeoutMs: number;
  worker: Partial<WorkerOptions>;
  /** the webmentions' pool's options over those from WEBMENTION_CONCURRENCY (tests) */
  mentionWorker?: Partial<WorkerOptions>;
  /** the follow jobs' pool's options (tests) */
  followWorker?: Partial<WorkerOptions>;
  /** the email jobs' pool's options (tests) */
  emailWorker?: Partial<WorkerOptions>;
}

/** The kinds whose jobs run in a pool of their own (`mentionWorker`, `followWorker`, `emailWorker`), not in the delivery worker. */
const OWN_POOL_KINDS: readonly JobKind[] = ["webmention", "follow", "email", "email_compose"];
/** What the delivery worker claims: every other kind. */
const SHARED_KINDS: readonly JobKind[] = ALL_KINDS.filter((k) => !OWN_POOL_KINDS.includes(k));

/** The webmentions' pool: WEBMENTION_CONCURRENCY attempts, a quarter per source host and half per tenant (at least one). */
export function mentionPoolOptions(concurrency: number): Partial<WorkerOptions> {
  return {
    concurrency,
    batchSize: concurrency,
    maxPerEndpoint: Math.max(1, Math.ceil(concurrency / 4)),
    maxPerTenant: Math.max(1, Math.ceil(concurrency / 2)),
    kinds: ["webmention"],
  };
}

/** The follow jobs' pool: a few jobs at once (each holds a database connection while it works), two per tenant. */
export function followPoolOptions(pollIntervalMs: number): Partial<WorkerOptions> {
  return { concurrency: 4, batchSize: 8, maxPerEndpoint: 2, maxPerTenant: 2, pollIntervalMs, kinds: ["follow"] };
}

/**
 * The email pool: 4 messages at once per SMTP server (a pool of 4 SMTP connections each:
 * src/modules/email/engine/sender.ts), 16 in all, polling every EMAIL_POLL_MS; and the readers' compose
 * jobs (src/modules/email/engine/mail-queue.ts: database work), 4 at once per tenant.
 */
export function emailPoolOptions(pollIntervalMs: number): Partial<WorkerOptions> {
  return { concurrency: 16, batchSize: 16, maxPerEndpoint: 4, maxPerTenant: 4, pollIntervalMs, kinds: ["email", "email_compose"] };
}

export interface WebhookRuntime {
  readonly http: WebhookHttpClient;
  readonly policy: AddressPolicy;
  readonly options: WebhookOptions;
  /** the delivery worker: webhooks and every other kind of job but the webmentions' verifications */
  readonly worker: WebhookWorker;
  /** the webmentions' verifications, in a pool of their own (WEBMENTION_CONCURRENCY) */
  readonly mentionWorker: WebhookWorker;
  /** the follow jobs (a new comment told to its discussion's followers), in a pool of their own */
  readonly followWorker: WebhookWorker;
  /** the email jobs (a rendered message sent over SMTP), in a pool of their own; started with the email worker (RUN_EMAIL_WORKER) */
  readonly emailWorker: WebhookWorker;
  /** the services its workers were built with (a test builds a worker of another composer on them) */
  readonly workerDeps: WorkerDeps;
  /** Another delivery worker on this runtime's client and services, as another instance runs one (tests); its caller starts and stops it. */
  createWorker(options: Partial<WorkerOptions>): WebhookWorker;
  /** signed calls on the request path (the tenants' moderation hooks) with the same client and policy */
  readonly signedCalls: SignedCalls;
  /** Aborted when the runtime closes (background handshakes stop). */
  readonly closing: AbortSignal;
  /** Runs a background task (a handshake) that close() waits for. */
  background(task: () => Promise<void>): void;
  /** Resolves once no background task is running (tests). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** What the webhook machinery needs of the app's services. */
export interface WebhookServices {
  metrics?: Pick<Metrics, "webhookDeliveries" | "webhookLatency">;
  config: Pick<
    Config,
    | "ALLOW_HTTP_WEBHOOKS"
    | "WEBHOOK_ALLOWLIST"
    | "WEBHOOK_CONCURRENCY"
    | "WEBHOOK_MAX_PER_ENDPOINT"
    | "WEBHOOK_MAX_PER_TENANT"
    | "WEBMENTION_CONCURRENCY"
    | "FOLLOW_POLL_MS"
    | "EMAIL_POLL_MS"
  >;
  prisma: PrismaClient;
  sql: Sql;
  clock: Clock;
  log: Logger;
  secretBox: SecretBox;
  /** what composes the queue's other kinds of job (composers.ts): the chat alerts' */
  composers: MessageComposers;
}

export function createWebhookRuntime(services: WebhookServices, options: Partial<WebhookOptions> = {}): WebhookRuntime {
  const policy: AddressPolicy = {
    allowHttpLoopback: services.config.ALLOW_HTTP_WEBHOOKS,
    allowList: services.config.WEBHOOK_ALLOWLIST,
  };
  const { config } = services;
  // the operator's caps (env), then what the composition root passes (tests)
  const caps: Partial<WorkerOptions> = {
    concurrency: config.WEBHOOK_CONCURRENCY,
    maxPerEndpoint: config.WEBHOOK_MAX_PER_ENDPOINT,
    maxPerTenant: config.WEBHOOK_MAX_PER_TENANT,
  };
  const workerOptions: Partial<WorkerOptions> = { ...caps, ...options.worker };
  // keep-alive sockets per receiver: one per attempt an endpoint may have in flight
  const http = createWebhookHttpClient({ ...policy, maxSocketsPerHost: Math.max(64, workerOptions.maxPerEndpoint ?? 0) });
  const workerDeps: WorkerDeps = {
    prisma: services.prisma,
    sql: services.sql,
    clock: services.clock,
    log: services.log,
    http,
    secretBox: services.secretBox,
    composers: services.composers,
    onResult: (result, seconds) => {
      services.metrics?.webhookDeliveries.inc({ outcome: result });
      services.metrics?.webhookLatency.observe(seconds);
    },
  };
  const createWorker = (o: Partial<WorkerOptions>) => createWebhookWorker(workerDeps, { ...caps, kinds: SHARED_KINDS, ...o });
  const worker = createWorker(workerOptions);
  const { workerId, ...timing } = options.worker ?? {};
  const mentionWorker = createWebhookWorker(workerDeps, {
    // the delivery worker's timing (poll, lease, stop grace), its own caps, kinds and name
    ...timing,
    ...(workerId === undefined ? {} : { workerId: `${workerId}:webmention` }),
    ...mentionPoolOptions(config.WEBMENTION_CONCURRENCY),
    ...options.mentionWorker,
  });
  const followWorker = createWebhookWorker(workerDeps, {
    ...timing,
    ...(workerId === undefined ? {} : { workerId: `${workerId}:follow` }),
    ...followPoolOptions(config.FOLLOW_POLL_MS),
    ...options.followWorker,
  });
  const emailWorker = createWebhookWorker(workerDeps, {
    ...timing,
    ...(workerId === undefined ? {} : { workerId: `${workerId}:email` }),
    ...emailPoolOptions(config.EMAIL_POLL_MS),
    ...options.emailWorker,
  });
  const signedCalls = createSignedCalls({ http, clock: services.clock });
  const closer = new AbortController();
  setMaxListeners(0, closer.signal); // one listener per background handshake
  const tasks = new Set<Promise<void>>();

  const rt: WebhookRuntime = {
    http,
    policy,
    options: { handshakeTimeoutMs: options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS, worker: workerOptions },
    worker,
    mentionWorker,
    followWorker,
    emailWorker,
    workerDeps,
    createWorker,
    signedCalls,
    closing: closer.signal,
    background(task) {
      const p = task()
        .catch((err: unknown) => services.log.warn({ err }, "webhook background task failed"))
        .finally(() => tasks.delete(p));
      tasks.add(p);
    },
    async settled() {
      while (tasks.size) await Promise.allSettled([...tasks]);
    },
    async close() {
      closer.abort();
      await Promise.all([worker.stop(), mentionWorker.stop(), followWorker.stop(), emailWorker.stop()]);
      await rt.settled();
      http.close();
    },
  };
  return rt;
}
