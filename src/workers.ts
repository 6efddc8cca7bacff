// An instance's background work, started and stopped in one place: the webhook delivery worker
// (built with the webhook runtime, src/webhook-delivery/webhook-runtime.ts), the retention job
// (src/events/retention.ts) and the email worker (src/modules/email/engine/worker.ts, built here),
// each as the config says: RUN_WEBHOOK_WORKER, RETENTION_INTERVAL_MS, RUN_EMAIL_WORKER. The server
// starts them once it listens (src/app.ts); a process that runs only a worker (the crash tests'
// children, test/support/*-crash-worker.mjs) does the same with the others switched off.
import type { Runtime } from "./runtime.js";
import { createEmailWorker, type EmailWorker, type EmailWorkerOptions } from "./modules/email/engine/worker.js";

export interface Workers {
  /** composes and sends reply emails; started unless RUN_EMAIL_WORKER=0 */
  readonly email: EmailWorker;
  /** Starts what the config asks for; emails' links point at `serverUrl` unless PUBLIC_URL is set. */
  start(serverUrl?: string): void;
  /** Stops them all: a pass in progress ends, attempts in flight finish or are given back. */
  stop(): Promise<void>;
}

export interface WorkerSetup {
  /** the email worker's lease, poll, batch and id (tests) */
  email?: Partial<EmailWorkerOptions>;
}

export function createWorkers(runtime: Runtime, setup: WorkerSetup = {}): Workers {
  const { services } = runtime;
  const { config } = services;
  const email = createEmailWorker(services, setup.email);
  return {
    email,
    start(serverUrl) {
      if (config.RUN_WEBHOOK_WORKER) services.webhooks.worker.start();
      if (config.RETENTION_INTERVAL_MS > 0) runtime.retention.start(config.RETENTION_INTERVAL_MS);
      if (serverUrl !== undefined) email.useServerUrl(serverUrl);
      if (config.RUN_EMAIL_WORKER) email.start();
    },
    async stop() {
      runtime.retention.stop();
      await Promise.all([email.stop(), services.webhooks.worker.stop()]);
    },
  };
}
