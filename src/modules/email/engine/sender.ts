// Sending rendered messages (contract section 15): each `queued` message of email_messages is a job of
// the outbound queue (webhook_deliveries, kind `email`, the job's id the message's), inserted by the
// statement that writes the message (queueingJobs below). The outbound worker's email pool claims it
// under a lease as it claims any job (FOR UPDATE SKIP LOCKED: several instances never hold one at
// once) and the composer below sends it over SMTP; the queue records the attempt while the claim holds:
//  - accepted → the message `sent`, the job succeeded;
//  - SMTP 4xx, or the server unreachable → a failed attempt, retried by the queue with backoff (30 s
//    doubling, jittered: EMAIL_TUNABLES), the message `failed` after EMAIL_MAX_ATTEMPTS;
//  - SMTP 5xx for the recipient → `suppressed`, and the reader's address is marked suppressed for that
//    tenant: nothing more is queued for it until their identity gives another address.
// Each SMTP server (host and port, across tenants: smtp_servers, src/outbound/server-breaker.ts) has a breaker: after
// SERVER_BREAKER_THRESHOLD attempts in a row that could not reach it or that it turned away whole
// (421), its messages wait (deferred, no attempt counted) for a cooldown that doubles each time it
// opens again, from one minute up to an hour; one message it answers closes it.
// A worker that dies mid-send leaves its jobs leased until the lease ends; then another sends them. A
// message already recorded `sent` is not sent again. Each message carries a Message-ID made from its
// id, so a receiver can tell a resend from a new one.
// A message with a one-time link (the hosted sign-in's: links.ts) gets its link put in as it is sent.
import nodemailer from "nodemailer";
import type { Transporter } from "nodemailer";
import type { Sql } from "../../../db/sql.js";
import type { SecretBox } from "../../../lib/secret-box.js";
import type { Composed, MessageComposer } from "../../../outbound/composers.js";
import { jobInsert } from "../../../outbound/jobs.js";
import { parseOutboundUrl } from "../../../lib/outbound-url.js";
import { oneLine } from "../../../lib/single-line.js";
import type { UrlGuardOptions } from "../../../outbound/url-guard.js";
import { sendFailure, smtpTransportOptions, type SmtpServer } from "../transport.js";
import { withLink } from "./links.js";
import { keyedBatcher } from "../../../lib/batcher.js";
import { createServerBreaker, SERVER_BREAKER_RULES } from "../../../outbound/server-breaker.js";

/** Messages sent at once through one SMTP server: its pool's connections, and the email pool's slots per server. */
export const SEND_SLOTS = 4;

export const EMAIL_MAX_ATTEMPTS = 10;
/** The queue's retry rule for email: an SMTP server's temporary refusals last minutes, not seconds. */
export const EMAIL_TUNABLES = { maxAttempts: EMAIL_MAX_ATTEMPTS, backoffBaseMs: 30_000 } as const;

export const SERVER_BREAKER_THRESHOLD = SERVER_BREAKER_RULES.threshold;

export interface SenderDeps {
  sql: Sql;
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
  state: string;
  from: string | null;
  replyTo: string | null;
  /** the tenant's own SMTP server, sealed */
  smtpUrlEnc: string | null;
}

/** What became of the messages this composer was given: counted since it was made (the email worker reads them). */
export interface SendResult {
  sent: number;
  retried: number;
  failed: number;
  suppressed: number;
}

/**
 * `insert`, an INSERT INTO email_messages, as one statement that also queues the `email` job of each
 * message it writes `queued` (the job's id the message's, due when the message was made): a message
 * is never queued without its job. `before`: common table expressions the insert may use.
 */
export function queueingJobs(insert: string, before = ""): string {
  return `WITH ${before ? `${before}, ` : ""}m AS (${insert} RETURNING id, tenant_id, state, created_at)
    ${jobInsert("email", "m", { id: "m.id", tenantId: "m.tenant_id", at: "m.created_at", where: "m.state = 'queued'" })}`;
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

export interface EmailComposer extends MessageComposer {
  /** the outcomes of the messages it was given, since it was made */
  readonly tally: Readonly<SendResult>;
  /** closes its SMTP pools */
  close(): void;
}

/** The server's key in smtp_servers: its host and port (no credentials). */
const serverKey = (url: string): string | null => {
  const parsed = parseOutboundUrl(url, "smtp");
  return parsed.ok ? `${parsed.target.host}:${parsed.target.port}` : null;
};

/** A failure that says nothing of the server's health: it answered (a 4xx or 5xx about this message, other than 421). */
const answered = (err: unknown): boolean => {
  const code = (err as { responseCode?: unknown }).responseCode;
  return typeof code === "number" && code !== 421;
};

/** The composer of `email` jobs (src/outbound/composers.ts): one message sent over SMTP, its outcome recorded on the message. */
export function createEmailComposer(deps: SenderDeps): EmailComposer {
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
  const tally: SendResult = { sent: 0, retried: 0, failed: 0, suppressed: 0 };

  // The messages' reads and their "sent" marks are group commits (src/lib/batcher.ts): the sends in
  // flight read their messages in one statement and record their ends in one, not one each.
  const loadBatch = keyedBatcher<{ id: string; tenantId: string }, QueuedMessage | undefined>(async (_key, items) => {
    const rows = await deps.sql.query<QueuedMessage>(
      `SELECT m.id::text, m.tenant_id AS "tenantId", m.kind, m.reader_id AS "readerId", m.to_address AS "toAddress", m.subject,
              m.text_body AS "textBody", m.html_body AS "htmlBody", m.unsubscribe_url AS "unsubscribeUrl", m.state,
              t.settings #>> '{email,from}' AS "from", t.settings #>> '{email,replyTo}' AS "replyTo",
              t.settings #>> '{email,smtpUrlEnc}' AS "smtpUrlEnc"
         FROM unnest($1::uuid[], $2::text[]) AS v(id, tenant_id)
         JOIN email_messages m ON m.id = v.id AND m.tenant_id = v.tenant_id
         JOIN tenants t ON t.id = m.tenant_id`,
      [items.map((i) => i.value.id), items.map((i) => i.value.tenantId)],
      "email_messages_load",
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const i of items) i.resolve(byId.get(i.value.id));
  });
  const load = (id: string, tenantId: string) => loadBatch("load", { id, tenantId });

  const sentBatch = keyedBatcher<{ m: QueuedMessage; attempts: number; at: Date }, void>(async (_key, items) => {
    await deps.sql.query(
      `UPDATE email_messages m SET state = 'sent', attempts = v.attempts, last_error = NULL, sent_at = v.at
         FROM unnest($1::uuid[], $2::text[], $3::int[], $4::timestamptz[]) AS v(id, tenant_id, attempts, at)
        WHERE m.id = v.id AND m.tenant_id = v.tenant_id AND m.state = 'queued'`,
      [
        items.map((i) => i.value.m.id),
        items.map((i) => i.value.m.tenantId),
        items.map((i) => i.value.attempts),
        items.map((i) => i.value.at),
      ],
      "email_messages_sent",
    );
    for (const i of items) i.resolve();
  });

  /** The SMTP servers' breakers (read at most once a second here: server-breaker.ts). */
  const breaker = createServerBreaker(deps.sql, "smtp_servers");

  /** The message's new state after an attempt (only while it is still queued: an erased message stays gone). */
  async function mark(m: QueuedMessage, state: string, attempts: number, error: string | null, now: Date): Promise<void> {
    await deps.sql.query(
      `UPDATE email_messages SET state = $3, attempts = $4, last_error = $5, sent_at = CASE WHEN $3 = 'sent' THEN $6::timestamptz END
        WHERE id = $1::uuid AND tenant_id = $2 AND state = 'queued'`,
      [m.id, m.tenantId, state, attempts, error, now],
      "email_message_outcome",
    );
  }

  return {
    tally,
    tunables: EMAIL_TUNABLES,
    async compose(job, now): Promise<Composed> {
      const m = await load(job.id, job.tenantId);
      // erased with its reader, or recorded already (a worker that sent it died before its job's end was written)
      if (!m) return { done: "the message is gone" };
      if (m.state !== "queued") return { done: `the message is ${m.state}` };
      if (deps.outbox) {
        await mark(m, "outbox", job.attempts, null, now);
        return { done: "kept in the outbox (EMAIL_OUTBOX)" };
      }
      const server: SmtpServer | null = m.smtpUrlEnc
        ? { url: deps.secretBox.open(m.smtpUrlEnc), guard: deps.guard }
        : deps.smtpUrl
          ? { url: deps.smtpUrl, guard: null }
          : null;
      const key = server ? serverKey(server.url) : null;
      /** failures in a row the server's breaker counts: none (no row, or 0) needs no write when it answers */
      let failures = 0;
      if (key !== null) {
        const state = await breaker.state(key, now);
        if (state.until && state.until > now) return { defer: state.until };
        failures = state.failures;
      }
      const attempts = job.attempts + 1;
      try {
        if (!server) throw Object.assign(new Error("no SMTP server"), { code: "ECONNECTION" });
        const bodies = deps.links ? withLink(m, deps.links.secret, deps.links.base()) : m;
        await (await transportOf(server)).sendMail({ ...headerFields(m, deps.defaultFrom), text: bodies.textBody, html: bodies.htmlBody });
      } catch (err) {
        const error = sendFailure(err);
        const code = (err as { responseCode?: number }).responseCode;
        if (key !== null && (!answered(err) || failures > 0)) await breaker.settle(key, answered(err), now);
        if (typeof code === "number" && code >= 500 && code < 600) {
          await deps.sql.query(
            `WITH m AS (UPDATE email_messages SET state = 'suppressed', attempts = $3, last_error = $4
                         WHERE id = $1::uuid AND tenant_id = $2 AND state = 'queued' RETURNING tenant_id, reader_id, to_address)
             UPDATE readers r SET email_suppressed_at = $5 FROM m
              WHERE r.tenant_id = m.tenant_id AND r.id = m.reader_id AND r.email = m.to_address`,
            [m.id, m.tenantId, attempts, error, now],
            "email_suppressed",
          );
          tally.suppressed++;
          return { drop: error };
        }
        const last = attempts >= EMAIL_MAX_ATTEMPTS;
        await mark(m, last ? "failed" : "queued", attempts, error, now);
        tally[last ? "failed" : "retried"]++;
        return { fail: error };
      }
      // recorded before the job's end: a worker that dies in between leaves a job that finds it sent
      await sentBatch("sent", { m, attempts, at: now });
      if (key !== null && failures > 0) await breaker.settle(key, true, now);
      tally.sent++;
      return { done: "sent" };
    },
    close() {
      for (const t of transports.values()) t.close();
      transports.clear();
    },
  };
}
