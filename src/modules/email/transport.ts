// How email leaves the service (contract section 15): nodemailer over the service's SMTP server
// (SMTP_URL, credentials in the URL, never logged). No SMTP_URL: email is off — /readyz says so, and
// nothing that would send one fails for it. A send here (the test email) opens its own connection;
// the queued mail goes through sender.ts, which keeps a pool per SMTP server.
import nodemailer from "nodemailer";
import type { Config } from "../../config.js";

export type EmailMode = "smtp" | "off";

export const emailMode = (config: Pick<Config, "SMTP_URL">): EmailMode => (config.SMTP_URL ? "smtp" : "off");

export interface OutgoingEmail {
  from: string;
  to: string;
  replyTo?: string | null;
  subject: string;
  text: string;
  html: string;
}

/** Sends one message; the SMTP server's id for it. Throws what the server or the connection said. */
export async function sendEmail(url: string, message: OutgoingEmail): Promise<string> {
  const transport = nodemailer.createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
  try {
    const info = await transport.sendMail({ ...message, replyTo: message.replyTo ?? undefined });
    return String(info.messageId);
  } finally {
    transport.close();
  }
}

/** What went wrong with a send, in words an operator can act on (no credentials). */
export function sendFailure(err: unknown): string {
  const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
  if (e.responseCode) return `The SMTP server refused it: ${e.responseCode} ${String(e.response ?? "").slice(0, 200)}`;
  if (e.code === "ECONNREFUSED" || e.code === "ESOCKET" || e.code === "ECONNECTION") return "The SMTP server could not be reached.";
  if (e.code === "ETIMEDOUT") return "The SMTP server did not answer in time.";
  if (e.code === "EAUTH") return "The SMTP server did not accept the credentials in SMTP_URL.";
  return "Sending failed.";
}
