/**
 * The webhook machinery of one app instance: the outbound HTTP client (keep-alive agents, URL
 * policy from ALLOW_HTTP_WEBHOOKS / WEBHOOK_ALLOWLIST), the delivery worker, background handshakes
 * and the post-commit nudge. Attached to the app's services (createRuntime) and looked up with
 * `webhooksOf(ctx.app)`.
 */
import { setMaxListeners } from "node:events";
import type { AppServices } from "../context/request.js";
import type { StoredEvent } from "../events/types.js";
import { createWebhookHttpClient, type WebhookHttpClient } from "./http-client.js";
import { HANDSHAKE_TIMEOUT_MS } from "./handshake.js";
import { installJobHook, takeJobsCreated } from "./jobs.js";
import type { AddressPolicy } from "./url-guard.js";
import { createWebhookWorker, type WebhookWorker, type WorkerOptions } from "./worker.js";

export interface WebhookOptions {
  /** Handshake timeout (contract: 30 s); tests shorten it. */
  handshakeTimeoutMs: number;
  worker: Partial<WorkerOptions>;
}

export interface WebhookRuntime {
  readonly http: WebhookHttpClient;
  readonly policy: AddressPolicy;
  readonly options: WebhookOptions;
  readonly worker: WebhookWorker;
  /** Aborted when the runtime closes (background handshakes stop). */
  readonly closing: AbortSignal;
  /** Runs a background task (a handshake) that close() waits for. */
  background(task: () => Promise<void>): void;
  /** Resolves once no background task is running (tests). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const registry = new WeakMap<AppServices, WebhookRuntime>();

export function webhooksOf(app: AppServices): WebhookRuntime {
  const rt = registry.get(app);
  if (!rt) throw new Error("webhooks are not attached to these services (createRuntime does it)");
  return rt;
}

export function attachWebhooks(services: AppServices, options: Partial<WebhookOptions> = {}): WebhookRuntime {
  installJobHook();
  const policy: AddressPolicy = {
    allowHttpLoopback: services.config.ALLOW_HTTP_WEBHOOKS,
    allowList: services.config.WEBHOOK_ALLOWLIST,
  };
  const http = createWebhookHttpClient({ ...policy, maxSocketsPerHost: 64 });
  const worker = createWebhookWorker(
    { prisma: services.prisma, clock: services.clock, log: services.log, http, secretBox: services.secretBox },
    options.worker,
  );
  const closer = new AbortController();
  setMaxListeners(0, closer.signal); // one listener per background handshake
  const tasks = new Set<Promise<void>>();

  // After a commit, events whose transaction created jobs wake the local worker at once.
  const publisher = services.events;
  services.events = {
    publish(events: StoredEvent[]) {
      publisher.publish(events);
      let created = false;
      for (const e of events) created = takeJobsCreated(e.envelope.id) || created;
      if (created) worker.nudge();
    },
  };

  const rt: WebhookRuntime = {
    http,
    policy,
    options: { handshakeTimeoutMs: options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS, worker: options.worker ?? {} },
    worker,
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
      await worker.stop();
      await rt.settled();
      http.close();
    },
  };
  registry.set(services, rt);
  return rt;
}
