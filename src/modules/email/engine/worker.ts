// The email worker (contract section 15): every EMAIL_POLL_MS it composes the messages that are due
// (mail-queue.ts) and sends what is queued (sender.ts). Any number of instances may run it: composing
// takes a reader's items in one transaction, sending claims messages under a lease. `runOnce()` does
// one whole pass, so tests drive it with the injectable clock. Started with the server unless
// RUN_EMAIL_WORKER=0. A tenant's mail goes through its own SMTP server (email.smtpUrl), else SMTP_URL;
// with neither (and no EMAIL_OUTBOX) its due replies are dropped.
// Under engine/: it crosses tenants, no tenant's request, taking whatever mail is due, of every tenant,
// on the app's raw clients (each item carries its tenant, whose settings it reads).
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { AppServices } from "../../../context/services.js";
import { composeDue, type ComposeDeps, type ComposeResult } from "./mail-queue.js";
import { createSender, type SendResult } from "./sender.js";
import { signUnsubscribeToken } from "./unsubscribe.js";
import { composeModerationDigests } from "./moderation-digests.js";
import { mailCanGo } from "./links.js";
import { pollLoop } from "../../../lib/poll-loop.js";

export interface EmailWorker {
  /** one pass: compose what is due, then send what is queued */
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
  leaseMs: number;
  batchSize: number;
  workerId: string;
}

export function createEmailWorker(app: AppServices, opts: Partial<EmailWorkerOptions> = {}): EmailWorker {
  const o: EmailWorkerOptions = {
    pollMs: app.config.EMAIL_POLL_MS,
    leaseMs: 120_000,
    batchSize: 100,
    workerId: `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`,
    ...opts,
  };
  let baseUrl = app.config.PUBLIC_URL ?? `http://127.0.0.1:${app.config.PORT}`;
  const sender = createSender({
    prisma: app.prisma,
    sql: app.sql,
    clock: app.clock,
    smtpUrl: app.config.SMTP_URL ?? null,
    secretBox: app.secretBox,
    guard: app.webhooks.policy,
    outbox: app.config.EMAIL_OUTBOX,
    defaultFrom: app.config.EMAIL_FROM,
    workerId: o.workerId,
    leaseMs: o.leaseMs,
    batchSize: o.batchSize,
    // sign-in links and address confirmations (links.ts) point at the same base as unsubscribe links
    links: { secret: app.adminJwtSecret, base: () => baseUrl },
  });
  // a tenant's mail can go somewhere: the outbox, the service's SMTP server, or its own
  const canSend = (settings: unknown) => mailCanGo(app, settings);

  const unsubscribeBase = () => `${baseUrl.replace(/\/$/, "")}/api/v1/unsubscribe/`;
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
        consoleUrl: `${baseUrl.replace(/\/$/, "")}/console/`,
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
      if (r.messages === 0 && r.dropped === 0) return total;
    }
  }

  async function runOnce(): Promise<ComposeResult & SendResult> {
    const composed = await compose();
    return { ...composed, ...(await sender.sendDue()) };
  }

  const loop = pollLoop(runOnce, o.pollMs, (err) =>
    app.log.warn({ err: err instanceof Error ? err.message : String(err) }, "email worker pass failed"),
  );

  return {
    runOnce,
    compose,
    send: () => sender.sendDue(),
    useServerUrl(url) {
      baseUrl = app.config.PUBLIC_URL ?? url;
    },
    start: loop.start,
    async stop() {
      await loop.stop();
      sender.close();
    },
  };
}
