// "Send test email" (contract section 15, the console's email settings): one message to the address
// an operator gives, from the tenant's sender, through its SMTP server (its own, else the service's),
// and what happened.
import { loadTenant, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings-model.js";
import { escapeHtml } from "./templates.js";
import { sendEmail, sendFailure } from "./transport.js";
import { smtpUrlFor } from "./smtp-url.js";

export interface TestEmailResult {
  sent: boolean;
  messageId: string | null;
  error: string | null;
}

const ADDRESS = /^[^\s<>@]+@[^\s<>@]+$/;

export async function sendTestEmail(ctx: RequestContext, to: string): Promise<TestEmailResult> {
  if (to.length > 320 || !ADDRESS.test(to)) throw errors.validation([{ path: "to", message: "must be an email address" }]);
  const tenant = await loadTenant(ctx);
  const settings = resolveSettings(tenant.settings);
  const { email } = settings;
  // the tenant's own SMTP server, else the service's (src/modules/email/smtp-url.ts)
  const url = smtpUrlFor(ctx, settings);
  if (!url) throw errors.emailNotConfigured();
  const from = email.from ?? ctx.app.config.EMAIL_FROM;
  try {
    const messageId = await sendEmail(url, {
      from,
      to,
      replyTo: email.replyTo,
      subject: `Test email from ${tenant.name}`,
      text: `This is a test email from ${tenant.name}'s comments.\n\nIf it reached you, replies and digests will reach readers too.\nSender: ${from}\n`,
      html: `<p>This is a test email from <strong>${escapeHtml(tenant.name)}</strong>'s comments.</p><p>If it reached you, replies and digests will reach readers too.<br>Sender: ${escapeHtml(from)}</p>`,
    });
    return { sent: true, messageId, error: null };
  } catch (err) {
    return { sent: false, messageId: null, error: sendFailure(err) };
  }
}
