// An instance's background work, started and stopped in one place: the outbound worker and its pools
// (built with the webhook runtime, src/outbound/webhook-runtime.ts: the follow jobs' pool is the follow
// worker, src/modules/following/engine/fanout.ts), the retention job
// (src/modules/retention/engine/retention.ts), the email worker (src/modules/email/engine/worker.ts, built
// here), auto-close (src/modules/discussions/engine/auto-close.ts, built here) and the search projector
// (built with the runtime, whose event pipeline wakes it: src/modules/comments/engine/search-projector.ts),
// each as the config says: RUN_WEBHOOK_WORKER, RETENTION_INTERVAL_MS, RUN_EMAIL_WORKER,
// RUN_FOLLOW_WORKER, AUTO_CLOSE_INTERVAL_MS, RUN_SEARCH_PROJECTOR. The server starts them once it
// listens (src/app.ts); a process that runs only a worker (the crash tests' children,
// test/support/*-crash-worker.mjs) does the same with the others switched off.
import type { Runtime } from "./runtime.js";
import { createAutoCloseJob, type AutoCloseJob } from "./modules/discussions/engine/auto-close.js";
import { createEmailWorker, type EmailWorker, type EmailWorkerOptions } from "./modules/email/engine/worker.js";
import type { WebhookWorker } from "./outbound/worker.js";
import { createBlueskyPoller, type BlueskyPoller } from "./modules/bluesky/engine/poller.js";

export interface Workers {
  /** composes reply emails and digests, and sends them (the outbound queue's email pool); started unless RUN_EMAIL_WORKER=0 */
  readonly email: EmailWorker;
  /** locks discussions past their tenant's autoLockAfterDays; started unless AUTO_CLOSE_INTERVAL_MS=0 */
  readonly autoClose: AutoCloseJob;
  /** tells discussions' followers of new comments (inbox items, emails): the outbound queue's follow pool; started unless RUN_FOLLOW_WORKER=0 */
  readonly follow: WebhookWorker;
  /** reads linked Bluesky posts' threads and posts autoPost's discussions; started unless BLUESKY_POLL_INTERVAL_MS=0 */
  readonly bluesky: BlueskyPoller;
  /** Starts what the config asks for; emails' links point at `serverUrl` unless PUBLIC_URL is set. */
  start(serverUrl?: string): void;
  /** Stops them all: a pass in progress ends, attempts in flight finish or are given back. */
  stop(): Promise<void>;
}

export interface WorkerSetup {
  /** the email worker's poll, and a lease and id for an email pool of its own (tests) */
  email?: Partial<EmailWorkerOptions>;
}

export function createWorkers(runtime: Runtime, setup: WorkerSetup = {}): Workers {
  const { services } = runtime;
  const { config } = services;
  const email = createEmailWorker(services, setup.email, { sender: runtime.email, pool: services.webhooks.emailWorker });
  const autoClose = createAutoCloseJob({ app: services, clock: services.clock, log: services.log });
  const follow = services.webhooks.followWorker;
  const bluesky = createBlueskyPoller({ app: services, log: services.log }, config.BLUESKY_POLL_INTERVAL_MS || 5_000);
  return {
    email,
    autoClose,
    follow,
    bluesky,
    start(serverUrl) {
      if (config.RUN_WEBHOOK_WORKER) {
        services.webhooks.worker.start();
        services.webhooks.mentionWorker.start(); // the webmentions' verifications, a pool of their own
      }
      if (config.RETENTION_INTERVAL_MS > 0) runtime.retention.start(config.RETENTION_INTERVAL_MS);
      if (serverUrl !== undefined) {
        email.useServerUrl(serverUrl); // the runtime's email composer's links
        runtime.alerts.useServerUrl(serverUrl);
      }
      if (config.RUN_EMAIL_WORKER) email.start();
      if (config.AUTO_CLOSE_INTERVAL_MS > 0) autoClose.start(config.AUTO_CLOSE_INTERVAL_MS);
      if (config.RUN_FOLLOW_WORKER) follow.start();
      if (config.RUN_SEARCH_PROJECTOR) runtime.search.start();
      // the fediverse's origin and its sweep of expired state (its activities are the outbound worker's jobs)
      if (config.RUN_WEBHOOK_WORKER) runtime.federation.start(serverUrl);
      if (config.BLUESKY_POLL_INTERVAL_MS > 0) bluesky.start();
    },
    async stop() {
      runtime.retention.stop();
      autoClose.stop();
      await Promise.all([
        runtime.search.stop(),
        email.stop(),
        runtime.federation.stop(),
        services.webhooks.worker.stop(),
        services.webhooks.mentionWorker.stop(),
        follow.stop(),
        bluesky.stop(),
      ]);
    },
  };
}
