// The email worker (contract section 15): every EMAIL_POLL_MS it composes the messages that are due
// (mail-queue.ts, moderation-digests.ts), each written with its job of the outbound queue (kind
// `email`); the queue's email pool (src/outbound/webhook-runtime.ts, `emailWorker`) claims those jobs
// under a lease and the email composer (sender.ts) sends them, retried with the queue's backoff and
// held by a breaker per SMTP server. Any number of instances may run it: composing takes a reader's
// items in one transaction, and a job is held by one claim at a time. `runOnce()` does one whole pass
// (compose, then send what is due), so tests drive it with the injectable clock. Started with the
// server unless RUN_EMAIL_WORKER=0 (the compose pass and the email pool both). A tenant's mail goes
// through its own SMTP server (email.smtpUrl), else SMTP_URL; with neither (and no EMAIL_OUTBOX) its
// due replies are dropped.
// Under engine/: it crosses tenants, no tenant's request, taking whatever mail is due, of every tenant,
// on the app's raw clients (each item carries its tenant, whose settings it reads).
import type { AppServices } from "../../../context/services.js";
import type { UrlGuardOptions } from "../../../outbound/url-guard.js";
import { emailPoolOptions } from "../../../outbound/webhook-runtime.js";
import { createWebhookWorker, type WebhookWorker } from "../../../outbound/worker.js";
import { composeDue, type ComposeDeps, type ComposeResult } from "./mail-queue.js";
import { createEmailComposer, type EmailComposer, type SendResult } from "./sender.js";
import { signUnsubscribeToken } from "./unsubscribe.js";
import { composeModerationDigests } from "./moderation-digests.js";
import { mailCanGo } from "./links.js";
import { pollLoop } from "../../../lib/poll-loop.js";

export interface EmailWorker {
  /** one pass: compose what is due, then send the email jobs that are due */
  runOnce(): Promise<ComposeResult & SendResult>;
  /** the halves of a pass (bench/email.ts times them apart) */
  compose(): Promise<ComposeResult>;
  send(): Promise<SendResult>;
  /** Where links point: PUBLIC_URL, else `serverUrl`, the address the server listens on (set at start-up). */
  useServerUrl(serverUrl: string): void;
  start(): void;
  stop(): Promise<void>;
}

export interface EmailWorkerOptions {
  pollMs: number;
  /** the email pool's lease (a worker of its own: with `workerId`) */
  leaseMs?: number;
  /**
   * A worker of its own, as on another instance (tests): its own email pool under this id, with its
   * own composer and SMTP pools. Without it the worker sends through the app's email pool.
   */
  workerId?: string;
}

/** The email composer with where its links point (PUBLIC_URL, else the server's own address, set at start-up). */
export interface EmailSender extends EmailComposer {
  useServerUrl(serverUrl: string): void;
  base(): string;
}

/** The email composer of an app: the service's SMTP_URL, EMAIL_OUTBOX and EMAIL_FROM, tenants' servers through the SSRF guard. */
export function createEmailSender(
  app: Pick<AppServices, "config" | "sql" | "secretBox" | "adminJwtSecret"> & { policy: UrlGuardOptions },
): EmailSender {
  let baseUrl = app.config.PUBLIC_URL ?? `http://127.0.0.1:${app.config.PORT}`;
  const composer = createEmailComposer({
    sql: app.sql,
    smtpUrl: app.config.SMTP_URL ?? null,
    secretBox: app.secretBox,
    guard: app.policy,
    outbox: app.config.EMAIL_OUTBOX,
    defaultFrom: app.config.EMAIL_FROM,
    // sign-in links and address confirmations (links.ts) point at the same base as unsubscribe links
    links: { secret: app.adminJwtSecret, base: () => baseUrl },
  });
  return Object.assign(composer, {
    useServerUrl(url: string) {
      baseUrl = app.config.PUBLIC_URL ?? url;
    },
    base: () => baseUrl,
  });
}

export function createEmailWorker(
  app: AppServices,
  opts: Partial<EmailWorkerOptions> = {},
  /** the app's own composer and email pool (src/workers.ts); a worker with a `workerId` makes its own */
  shared?: { sender: EmailSender; pool: WebhookWorker },
): EmailWorker {
  const pollMs = opts.pollMs ?? app.config.EMAIL_POLL_MS;
  const own = opts.workerId !== undefined || !shared;
  const sender = own ? createEmailSender({ ...app, policy: app.webhooks.policy }) : shared.sender;
  const pool = own
    ? createWebhookWorker(
        { ...app.webhooks.workerDeps, clock: app.clock, composers: { ...app.webhooks.workerDeps.composers, email: sender } },
        {
          ...emailPoolOptions(pollMs),
          ...(opts.workerId !== undefined ? { workerId: opts.workerId } : {}),
          ...(opts.leaseMs !== undefined ? { leaseMs: opts.leaseMs } : {}),
        },
      )
    : shared.pool;
  // a tenant's mail can go somewhere: the outbox, the service's SMTP server, or its own
  const canSend = (settings: unknown) => mailCanGo(app, settings);

  const unsubscribeBase = () => `${sender.base().replace(/\/$/, "")}/api/v1/unsubscribe/`;
  const composeDeps = (): ComposeDeps => ({
    prisma: app.prisma,
    clock: app.clock,
    outbox: app.config.EMAIL_OUTBOX,
    canSend,
    unsubscribeUrl: (tenantId, readerId, about) =>
      unsubscribeBase() + signUnsubscribeToken(app, { tenantId, subjectId: readerId, kind: about }),
  });

  /** Composes everything due: operators' digests, then readers' replies, 200 readers a transaction. */
  async function compose(): Promise<ComposeResult> {
    // a tenant whose mail can go nowhere has its due replies dropped, not kept for a server that may never come
    const total: ComposeResult = { messages: 0, dropped: 0 };
    for (;;) {
      const written = await composeModerationDigests({
        prisma: app.prisma,
        clock: app.clock,
        outbox: app.config.EMAIL_OUTBOX,
        canSend,
        consoleUrl: `${sender.base().replace(/\/$/, "")}/console/`,
        unsubscribeUrl: (tenantId, operatorId) =>
          unsubscribeBase() + signUnsubscribeToken(app, { tenantId, subjectId: operatorId, kind: "moderation" }),
      });
      total.messages += written;
      if (written === 0) break;
    }
    for (;;) {
      const r = await composeDue(composeDeps());
      total.messages += r.messages;
      total.dropped += r.dropped;
      if (r.messages === 0 && r.dropped === 0) break;
    }
    // their jobs are due now: the pool claims them at once rather than at its next poll
    if (total.messages > 0) pool.nudge();
    return total;
  }

  /** Sends the email jobs due now through the pool; what became of the messages meanwhile. */
  async function send(): Promise<SendResult> {
    const before = { ...sender.tally };
    // a pool's pass takes at most 100 claims: again until nothing due is left
    while ((await pool.runOnce()) > 0);
    const after = sender.tally;
    return {
      sent: after.sent - before.sent,
      retried: after.retried - before.retried,
      failed: after.failed - before.failed,
      suppressed: after.suppressed - before.suppressed,
    };
  }

  async function runOnce(): Promise<ComposeResult & SendResult> {
    const composed = await compose();
    return { ...composed, ...(await send()) };
  }

  const loop = pollLoop(compose, pollMs, (err) =>
    app.log.warn({ err: err instanceof Error ? err.message : String(err) }, "email worker pass failed"),
  );

  return {
    runOnce,
    compose,
    send,
    useServerUrl: (url) => sender.useServerUrl(url),
    start() {
      loop.start();
      pool.start();
    },
    async stop() {
      await loop.stop();
      await pool.stop();
      if (own) sender.close();
    },
  };
}
