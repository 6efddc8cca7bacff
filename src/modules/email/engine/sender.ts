// Sending rendered messages (contract section 15). A worker claims due `queued` messages under a
// lease (FOR UPDATE SKIP LOCKED: several instances never hold one message at once), sends each over
// SMTP and records the outcome only while it still holds the lease:
//  - accepted → `sent`;
//  - SMTP 4xx, or the server unreachable → retried with exponential backoff (30 s doubling, jittered),
//    `failed` after EMAIL_MAX_ATTEMPTS;
//  - SMTP 5xx for the recipient → `suppressed`, and the reader's address is marked suppressed for that
//    tenant: nothing more is queued for it until their identity gives another address.
// A worker that dies mid-send leaves its messages locked until the lease ends; then another sends them.
// Each message carries a Message-ID made from its id, so a receiver can tell a resend from a new one.
// A message with a one-time link (the hosted sign-in's: links.ts) gets its link put in as it is sent.
import nodemailer from "nodemailer";
import type { Transporter } from "nodemailer";
import type { PrismaClient } from "../../../generated/prisma/client.js";
import type { Clock } from "../../../lib/clock.js";
import type { Sql } from "../../../db/sql.js";
import type { SecretBox } from "../../../lib/secret-box.js";
import { retryDelayMs } from "../../../outbound/backoff.js";
import { oneLine } from "../../../lib/single-line.js";
import type { UrlGuardOptions } from "../../../outbound/url-guard.js";
import { sendFailure, smtpTransportOptions, type SmtpServer } from "../transport.js";
import { withLink } from "./links.js";

/** Messages sent at once: a pool's connections (per SMTP server), and a worker pass's slots. */
const SEND_SLOTS = 4;

export const EMAIL_MAX_ATTEMPTS = 10;
const BACKOFF_BASE_MS = 30_000;

export interface SenderDeps {
  prisma: PrismaClient;
  sql: Sql;
  clock: Clock;
  /** the service's SMTP server (SMTP_URL); a tenant's own (email.smtpUrl) goes first */
  smtpUrl: string | null;
  /** opens a tenant's sealed SMTP URL */
  secretBox: SecretBox;
  /** the SSRF guard's policy, which a tenant's SMTP host passes at each connection (the service's own is trusted) */
  guard: UrlGuardOptions;
  /** EMAIL_OUTBOX=1: nothing is sent */
  outbox: boolean;
  /** the service's sender, for a tenant without email.from */
  defaultFrom: string;
  workerId: string;
  /** how long a claim holds a message: longer than a send can take (connect, greeting and data timeouts) */
  leaseMs: number;
  batchSize: number;
  random?: () => number;
  /** for messages with a one-time link (links.ts): the secret their tokens are made with, and where links point */
  links?: { secret: string; base: () => string };
}

export interface QueuedMessage {
  id: string;
  tenantId: string;
  kind: string;
  readerId: string | null;
  toAddress: string;
  subject: string;
  textBody: string;
  htmlBody: string;
  unsubscribeUrl: string | null;
  attempts: number;
  from: string | null;
  replyTo: string | null;
  /** the tenant's own SMTP server, sealed */
  smtpUrlEnc: string | null;
}

export interface SendResult {
  sent: number;
  retried: number;
  failed: number;
  suppressed: number;
}

/** The address inside "Name <address>", or the string itself. */
export const bareAddress = (from: string): string => /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from.trim();

/** RFC 8058 and RFC 2369 headers of a message with an unsubscribe URL. */
export function listHeaders(unsubscribeUrl: string | null, mailbox: string): Record<string, string> {
  if (!unsubscribeUrl) return {};
  return {
    "List-Unsubscribe": `<${unsubscribeUrl}>, <mailto:${bareAddress(mailbox)}?subject=unsubscribe>`,
    "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
  };
}

/** A mailbox as nodemailer takes it structured: the name is quoted and the address never parsed as a list. */
export interface Mailbox {
  name: string;
  address: string;
}

const SINGLE_ADDRESS = /^[^\s<>@,;:"()[\]\\]+@[^\s<>@,;:"()[\]\\]+$/;

/** "Name <address>" or an address, on one line, as a Mailbox; null when it holds no single plausible address. */
export function mailbox(value: string): Mailbox | null {
  const line = oneLine(value).trim();
  const named = /^([^<>]*)<([^<>]+)>$/.exec(line);
  const address = (named ? named[2]! : line).trim();
  if (!SINGLE_ADDRESS.test(address)) return null;
  return { name: named ? named[1]!.trim().replace(/^"(.*)"$/, "$1") : "", address };
}

/**
 * A queued message's header fields, each on one line. The subject, the tenant's sender and reply
 * address and the recipient come from stored data, which may be older than the rules that keep line
 * breaks out of them (or have come in another way): here, at the header boundary, every run of line
 * breaks or other control characters becomes a space, whatever the transport does after, and the
 * addresses go to the transport structured, so a name is never read as more addresses. A sender
 * without a plausible address is the service's; a reply address without one is left out.
 */
export function headerFields(
  m: Pick<QueuedMessage, "id" | "toAddress" | "subject" | "unsubscribeUrl" | "from" | "replyTo">,
  defaultFrom: string,
) {
  const from = (m.from !== null ? mailbox(m.from) : null) ?? mailbox(defaultFrom) ?? { name: "", address: oneLine(defaultFrom).trim() };
  const replyTo = m.replyTo !== null ? (mailbox(m.replyTo) ?? undefined) : undefined;
  return {
    from,
    to: { name: "", address: oneLine(m.toAddress).trim() },
    replyTo,
    subject: oneLine(m.subject),
    messageId: `<${m.id}@${from.address.split("@")[1] ?? "localhost"}>`,
    headers: listHeaders(m.unsubscribeUrl === null ? null : oneLine(m.unsubscribeUrl), (replyTo ?? from).address),
  };
}

export interface Sender {
  /** Claims what is due and sends it; resolves when every claimed message has an outcome. */
  sendDue(): Promise<SendResult>;
  close(): void;
}

export function createSender(deps: SenderDeps): Sender {
  // one pool per SMTP server and address checked: the service's, and each tenant's own
  const transports = new Map<string, Transporter>();
  const transportOf = async (server: SmtpServer) => {
    const options = await smtpTransportOptions(server);
    const key = `${server.url}\n${String(options.host)}`;
    let t = transports.get(key);
    if (!t) {
      t = nodemailer.createTransport({ ...options, pool: true, maxConnections: SEND_SLOTS });
      transports.set(key, t);
    }
    return t;
  };

  async function claim(): Promise<QueuedMessage[]> {
    const now = deps.clock.now();
    return deps.prisma.$queryRawUnsafe<QueuedMessage[]>(
      `UPDATE email_messages m
          SET locked_until = $1, locked_by = $2, attempts = m.attempts + 1
         FROM tenants t
        WHERE t.id = m.tenant_id
          AND m.id IN (SELECT id FROM email_messages
                        WHERE state = 'queued' AND next_attempt_at <= $3 AND (locked_until IS NULL OR locked_until <= $3)
                        ORDER BY next_attempt_at LIMIT ${deps.batchSize}
                        FOR UPDATE SKIP LOCKED)
       RETURNING m.id::text, m.tenant_id AS "tenantId", m.kind, m.reader_id AS "readerId", m.to_address AS "toAddress", m.subject,
                 m.text_body AS "textBody", m.html_body AS "htmlBody", m.unsubscribe_url AS "unsubscribeUrl", m.attempts,
                 t.settings #>> '{email,from}' AS "from", t.settings #>> '{email,replyTo}' AS "replyTo",
                 t.settings #>> '{email,smtpUrlEnc}' AS "smtpUrlEnc"`,
      new Date(now.getTime() + deps.leaseMs),
      deps.workerId,
      now,
    );
  }

  // each outcome is recorded only by the worker that still holds the message
  const HELD = `id = $1::uuid AND locked_by = $2 AND state = 'queued'`;

  /** Records accepted messages. */
  async function recordSent(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await deps.sql.query(
      `UPDATE email_messages SET state = 'sent', sent_at = $3, locked_until = NULL, last_error = NULL
        WHERE id = ANY($1::uuid[]) AND locked_by = $2 AND state = 'queued'`,
      [ids, deps.workerId, deps.clock.now()],
      "email_sent",
    );
  }

  /** Records a refused or failed send: retried later, failed for good, or the address suppressed. */
  async function failure(m: QueuedMessage, err: unknown): Promise<"retried" | "failed" | "suppressed"> {
    const now = deps.clock.now();
    const code = (err as { responseCode?: number }).responseCode;
    const error = sendFailure(err);
    if (typeof code === "number" && code >= 500 && code < 600) {
      await deps.sql.query(
        `WITH m AS (UPDATE email_messages SET state = 'suppressed', locked_until = NULL, last_error = $3 WHERE ${HELD}
                    RETURNING tenant_id, reader_id, to_address)
         UPDATE readers r SET email_suppressed_at = $4 FROM m
          WHERE r.tenant_id = m.tenant_id AND r.id = m.reader_id AND r.email = m.to_address`,
        [m.id, deps.workerId, error, now],
        "email_suppressed",
      );
      return "suppressed";
    }
    if (m.attempts >= EMAIL_MAX_ATTEMPTS) {
      await deps.sql.query(
        `UPDATE email_messages SET state = 'failed', locked_until = NULL, last_error = $3 WHERE ${HELD}`,
        [m.id, deps.workerId, error],
        "email_failed",
      );
      return "failed";
    }
    const next = new Date(now.getTime() + retryDelayMs(m.attempts, BACKOFF_BASE_MS, deps.random));
    await deps.sql.query(
      `UPDATE email_messages SET next_attempt_at = $3, locked_until = NULL, last_error = $4 WHERE ${HELD}`,
      [m.id, deps.workerId, next, error],
      "email_retry",
    );
    return "retried";
  }

  async function send(m: QueuedMessage): Promise<void> {
    const server: SmtpServer | null = m.smtpUrlEnc
      ? { url: deps.secretBox.open(m.smtpUrlEnc), guard: deps.guard }
      : deps.smtpUrl
        ? { url: deps.smtpUrl, guard: null }
        : null;
    if (!server) throw Object.assign(new Error("no SMTP server"), { code: "ECONNECTION" });
    const bodies = deps.links ? withLink(m, deps.links.secret, deps.links.base()) : m;
    await (await transportOf(server)).sendMail({ ...headerFields(m, deps.defaultFrom), text: bodies.textBody, html: bodies.htmlBody });
  }

  return {
    async sendDue() {
      const result: SendResult = { sent: 0, retried: 0, failed: 0, suppressed: 0 };
      if (deps.outbox) return result;
      for (;;) {
        const batch = await claim();
        if (batch.length === 0) return result;
        // as many at once as a pool has connections, each accepted message recorded before its slot
        // sends the next: a crash resends at most one message per slot (those in flight), however
        // slowly the database records them
        let next = 0;
        const slot = async () => {
          while (next < batch.length) {
            const m = batch[next++]!;
            const outcome = await send(m).then(
              () => recordSent([m.id]).then(() => "sent" as const),
              (err: unknown) => failure(m, err),
            );
            result[outcome]++;
          }
        };
        await Promise.all(Array.from({ length: Math.min(SEND_SLOTS, batch.length) }, slot));
        if (batch.length < deps.batchSize) return result;
      }
    },
    close() {
      for (const t of transports.values()) t.close();
      transports.clear();
    },
  };
}
