// How email leaves the service (contract section 15): nodemailer over the service's SMTP server
// (SMTP_URL, credentials in the URL, never logged). No SMTP_URL: email is off — /readyz says so, and
// nothing that would send one fails for it. A send here (the test email) opens its own connection;
// the queued mail goes through sender.ts, which keeps a pool per SMTP server.
import { isIP } from "node:net";
import nodemailer, { type SendMailOptions } from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport/index.js";
import type { Config } from "../../config.js";
import { bareHost, parseOutboundUrl } from "../../lib/outbound-url.js";
import { checkWebhookUrl, type UrlGuardOptions } from "../../outbound/url-guard.js";

export type EmailMode = "smtp" | "off";

export const emailMode = (config: Pick<Config, "SMTP_URL">): EmailMode => (config.SMTP_URL ? "smtp" : "off");

/** A message as nodemailer sends it: its header fields as the sender builds them (headerFields in sender.ts), and its bodies. */
export type OutgoingEmail = Pick<SendMailOptions, "from" | "to" | "replyTo" | "subject" | "messageId" | "headers" | "text" | "html">;

/** Where mail goes: an SMTP URL, and whether its host is a tenant's (checked by the SSRF guard at each connection). */
export interface SmtpServer {
  url: string;
  /** the tenant's own server: its host must pass the guard when mail is sent, as when it was set */
  guard: UrlGuardOptions | null;
}

/** A send refused before any connection: the URL or its host is not one the service reaches. */
export class SmtpServerRefused extends Error {
  readonly code = "EREFUSED_SERVER";
}

const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 } as const;

/**
 * nodemailer's options for a server, built from the URL's scheme, credentials, host and port alone
 * (src/lib/outbound-url.ts): nothing else in the URL reaches the transport. A tenant's host is resolved
 * and checked now, and the connection goes to the address checked (TLS still verifies the host name),
 * so a DNS answer that changed since the URL was set cannot point it inside.
 */
export async function smtpTransportOptions(server: SmtpServer): Promise<SMTPTransport.Options> {
  const parsed = parseOutboundUrl(server.url, "smtp");
  if (!parsed.ok) throw new SmtpServerRefused(`its URL is not accepted (${parsed.problem.message}); set it again`);
  const { scheme, host, port, username, password } = parsed.target;
  const hostname = bareHost(host);
  let address = hostname;
  if (server.guard) {
    const verdict = await checkWebhookUrl(`https://${host}:${port}/`, server.guard);
    if (!verdict.ok) throw new SmtpServerRefused(verdict.message.replace(/^url /, "its host "));
    address = verdict.addresses[0]!;
  }
  return {
    host: address,
    port,
    secure: scheme === "smtps",
    ...(isIP(hostname) ? {} : { tls: { servername: hostname } }),
    ...(username !== null ? { auth: { user: username, pass: password ?? "" } } : {}),
    ...TIMEOUTS,
  };
}

/** Sends one message; the SMTP server's id for it. Throws what the server or the connection said. */
export async function sendEmail(server: SmtpServer, message: OutgoingEmail): Promise<string> {
  const transport = nodemailer.createTransport(await smtpTransportOptions(server));
  try {
    const info = await transport.sendMail(message);
    return String(info.messageId);
  } finally {
    transport.close();
  }
}

/** What went wrong with a send, in words an operator can act on (no credentials). */
export function sendFailure(err: unknown): string {
  if (err instanceof SmtpServerRefused) return `The SMTP server is not used: ${err.message}.`;
  const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
  if (e.responseCode) return `The SMTP server refused it: ${e.responseCode} ${String(e.response ?? "").slice(0, 200)}`;
  if (e.code === "ECONNREFUSED" || e.code === "ESOCKET" || e.code === "ECONNECTION") return "The SMTP server could not be reached.";
  if (e.code === "ETIMEDOUT") return "The SMTP server did not answer in time.";
  if (e.code === "EAUTH") return "The SMTP server did not accept the credentials in SMTP_URL.";
  return "Sending failed.";
}
