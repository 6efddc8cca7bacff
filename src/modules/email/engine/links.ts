// Emails that carry a one-time link (the hosted sign-in's: contract section 20): a sign-in link
// (kind `sign_in`) and a guest's address confirmation (kind `email_confirm`). They go through the
// same queue as reply emails (email_messages, each with its `email` job: sender.ts), but the link itself is never
// stored: the message's bodies hold LINK_PLACEHOLDER, and the sender puts the link in as it sends
// (its token an HMAC of the message's id under the service's secret, so only a process holding
// ADMIN_JWT_SECRET can make it, and sign_in_tokens keeps only its SHA-256). What the console shows
// of such a message, the outbox included, is the placeholder; the link exists only in the mail.
import { createHmac, randomUUID } from "node:crypto";
import type { AppServices } from "../../../context/services.js";
import { resolveSettings } from "../../../tenancy/settings/resolve.js";
import { sha256 } from "../../../lib/sha256.js";
import { escapeHtml } from "../templates.js";
import { jobInsert } from "../../../outbound/jobs.js";

/** The message kinds that carry a link, and the path under /auth/v1/{tenantId}/ it opens. */
export const LINK_KINDS = { sign_in: "email", email_confirm: "email" } as const;
export type LinkKind = keyof typeof LINK_KINDS;

export const isLinkKind = (kind: string): kind is LinkKind => Object.hasOwn(LINK_KINDS, kind);

/** Where a link goes in a message's text and HTML until it is sent. */
export const LINK_PLACEHOLDER = "{{link}}";

/** The link's token for a message: 43 URL-safe characters, reproducible only with the service's secret. */
export const linkToken = (secret: string, messageId: string): string =>
  createHmac("sha256", secret).update(`engagement email link v1\n${messageId}`).digest("base64url");

/** A message's bodies with its link in place (`base`: PUBLIC_URL, else the server's own address). */
export function withLink(
  m: { id: string; tenantId: string; kind: string; textBody: string; htmlBody: string },
  secret: string,
  base: string,
): { textBody: string; htmlBody: string } {
  if (!isLinkKind(m.kind)) return m;
  const link = `${base.replace(/\/+$/, "")}/auth/v1/${encodeURIComponent(m.tenantId)}/${LINK_KINDS[m.kind]}/${linkToken(secret, m.id)}`;
  return { textBody: m.textBody.split(LINK_PLACEHOLDER).join(link), htmlBody: m.htmlBody.split(LINK_PLACEHOLDER).join(escapeHtml(link)) };
}

/** Whether a tenant's mail can go anywhere: the outbox, the service's SMTP server, or its own. */
export const mailCanGo = (app: Pick<AppServices, "config">, settings: unknown): boolean =>
  app.config.EMAIL_OUTBOX || !!app.config.SMTP_URL || !!resolveSettings(settings).email.smtpUrlEnc;

export interface LinkEmail {
  kind: LinkKind;
  to: string;
  subject: string;
  /** both with LINK_PLACEHOLDER where the link goes */
  text: string;
  html: string;
}

export interface LinkToken {
  /** sign_in_tokens.kind */
  kind: string;
  /** what a limit counts by (an address's hash) */
  subject: string | null;
  data: Record<string, unknown>;
  expiresAt: Date;
}

// the link's token, its message and the message's job of the outbound queue (kind `email`, the same
// id; none for a message kept in the outbox) in one statement (all or none)
const QUEUE_LINK = `WITH token AS (
    INSERT INTO sign_in_tokens (tenant_id, kind, token_hash, subject, data, created_at, expires_at)
    VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)), message AS (
  INSERT INTO email_messages (id, tenant_id, kind, to_address, subject, text_body, html_body, item_count, state, created_at)
  VALUES ($8::uuid, $1, $9, $10, $11, $12, $13, 1, $14, $6))
  ${jobInsert("email", "(SELECT 1) one", { id: "$8::uuid", tenantId: "$1", at: "$6", where: "$14 = 'queued'" })}`;

/**
 * Queues a message with a one-time link and records the link's token (hashed) in sign_in_tokens, in
 * one statement on the tenant's store: the outbound worker's email pool sends it (sender.ts).
 */
export async function queueLinkEmail(app: AppServices, tenantId: string, email: LinkEmail, token: LinkToken): Promise<void> {
  const id = randomUUID();
  const now = app.clock.now();
  await app
    .stores(tenantId)
    .sql.query(QUEUE_LINK, [
      token.kind,
      sha256(linkToken(app.adminJwtSecret, id), "hex"),
      token.subject,
      JSON.stringify(token.data),
      now,
      token.expiresAt,
      id,
      email.kind,
      email.to,
      email.subject,
      email.text,
      email.html,
      app.config.EMAIL_OUTBOX ? "outbox" : "queued",
    ]);
}
