// The email worker (contract section 15). A reply's or a followed discussion's email is queued by its
// write with the reader's compose job (kind `email_compose`: mail-queue.ts), which, when due, writes
// the reader's message with its job (kind `email`); the queue's email pool
// (src/outbound/webhook-runtime.ts, `emailWorker`) claims both kinds under a lease, the mail composer
// composing and the email composer (sender.ts) sending, retried with the queue's backoff and held by a
// breaker per SMTP server. Every EMAIL_POLL_MS it also writes the operators' moderation digests that
// are due (moderation-digests.ts: a schedule, not a write's effect). Any number of instances may run
// it: a job is held by one claim at a time, and a due operator by one transaction. `runOnce()` does one
// whole pass (the digests, then every due job of the email pool until none is left), so tests drive it
// with the injectable clock. Started with the server unless RUN_EMAIL_WORKER=0 (the digests and the
// email pool both). A tenant's mail goes through its own SMTP server (email.smtpUrl), else SMTP_URL;
// with neither (and no EMAIL_OUTBOX) its due replies are dropped.
// Under engine/: it crosses tenants, no tenant's request, taking whatever mail is due, of every tenant,
// on the app's raw clients (each job carries its tenant, whose settings it reads).
import type { AppServices } from "../../../context/services.js";
import type { UrlGuardOptions } from "../../../outbound/url-guard.js";
import { emailPoolOptions } from "../../../outbound/webhook-runtime.js";
import { createWebhookWorker, type WebhookWorker } from "../../../outbound/worker.js";
import { createMailComposer, type ComposeResult, type MailComposer } from "./mail-queue.js";
import { createEmailComposer, type EmailComposer, type SendResult } from "./sender.js";
import { signUnsubscribeToken, type UnsubscribeKind } from "./unsubscribe.js";
import { composeModerationDigests } from "./moderation-digests.js";
import { mailCanGo } from "./links.js";
import { pollLoop } from "../../../lib/poll-loop.js";

export interface EmailWorker {
  /** one pass: the moderation digests due, then the email pool's due jobs (composes and sends) until none is left */
  runOnce(): Promise<ComposeResult & SendResult>;
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

/**
 * The email composer with where its links point (PUBLIC_URL, else the server's own address, set at
 * start-up), and the mail composer of the same app, whose unsubscribe links point there too.
 */
export interface EmailSender extends EmailComposer {
  useServerUrl(serverUrl: string): void;
  base(): string;
  /** the composer of `email_compose` jobs */
  readonly mail: MailComposer;
  /** a one-click unsubscribe link (unsubscribe.ts) at that address */
  unsubscribeUrl(tenantId: string, subjectId: string, kind: UnsubscribeKind): string;
}

/** The email composer of an app: the service's SMTP_URL, EMAIL_OUTBOX and EMAIL_FROM, tenants' servers through the SSRF guard. */
export function createEmailSender(
  app: Pick<AppServices, "config" | "sql" | "prisma" | "secretBox" | "adminJwtSecret"> & { policy: UrlGuardOptions },
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
  const unsubscribeUrl = (tenantId: string, subjectId: string, kind: UnsubscribeKind) =>
    `${baseUrl.replace(/\/$/, "")}/api/v1/unsubscribe/${signUnsubscribeToken(app, { tenantId, subjectId, kind })}`;
  const mail = createMailComposer({
    prisma: app.prisma,
    outbox: app.config.EMAIL_OUTBOX,
    canSend: (settings) => mailCanGo(app, settings),
    unsubscribeUrl,
  });
  return Object.assign(composer, {
    useServerUrl(url: string) {
      baseUrl = app.config.PUBLIC_URL ?? url;
    },
    base: () => baseUrl,
    mail,
    unsubscribeUrl,
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
        {
          ...app.webhooks.workerDeps,
          clock: app.clock,
          composers: { ...app.webhooks.workerDeps.composers, email: sender, email_compose: sender.mail },
        },
        {
          ...emailPoolOptions(pollMs),
          ...(opts.workerId !== undefined ? { workerId: opts.workerId } : {}),
          ...(opts.leaseMs !== undefined ? { leaseMs: opts.leaseMs } : {}),
        },
      )
    : shared.pool;
  /** Writes the operators' moderation digests that are due, 100 operators a transaction. */
  async function digests(): Promise<number> {
    let total = 0;
    for (;;) {
      const written = await composeModerationDigests({
        prisma: app.prisma,
        clock: app.clock,
        outbox: app.config.EMAIL_OUTBOX,
        // a tenant whose mail can go nowhere has nothing written, not kept for a server that may never come
        canSend: (settings) => mailCanGo(app, settings),
        consoleUrl: `${sender.base().replace(/\/$/, "")}/console/`,
        unsubscribeUrl: (tenantId, operatorId) => sender.unsubscribeUrl(tenantId, operatorId, "moderation"),
      });
      total += written;
      if (written === 0) break;
    }
    // their jobs are due now: the pool claims them at once rather than at its next poll
    if (total > 0) pool.nudge();
    return total;
  }

  async function runOnce(): Promise<ComposeResult & SendResult> {
    const before = { ...sender.tally, ...sender.mail.tally };
    const written = await digests();
    // a pool's pass takes at most its batch of claims: again until nothing due is left (a compose's
    // message is due at once, so the pass after it sends it)
    while ((await pool.runOnce()) > 0);
    const after = { ...sender.tally, ...sender.mail.tally };
    return {
      messages: written + after.messages - before.messages,
      dropped: after.dropped - before.dropped,
      sent: after.sent - before.sent,
      retried: after.retried - before.retried,
      failed: after.failed - before.failed,
      suppressed: after.suppressed - before.suppressed,
    };
  }

  const loop = pollLoop(digests, pollMs, (err) =>
    app.log.warn({ err: err instanceof Error ? err.message : String(err) }, "email worker pass failed"),
  );

  return {
    runOnce,
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
