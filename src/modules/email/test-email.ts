// "Send test email" (contract section 15, the console's email settings): one message to the address
// an operator gives, from the tenant's sender, through the service's SMTP server, and what happened.
import { loadTenant, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings-model.js";
import { escapeHtml } from "./templates.js";
import { emailMode, sendEmail, sendFailure } from "./transport.js";

export interface TestEmailResult {
  sent: boolean;
  messageId: string | null;
  error: string | null;
}

const ADDRESS = /^[^\s<>@]+@[^\s<>@]+$/;

export async function sendTestEmail(ctx: RequestContext, to: string): Promise<TestEmailResult> {
  if (to.length > 320 || !ADDRESS.test(to)) throw errors.validation([{ path: "to", message: "must be an email address" }]);
  const url = ctx.app.config.SMTP_URL;
  if (emailMode(ctx.app.config) === "off" || !url) throw errors.emailNotConfigured();
  const tenant = await loadTenant(ctx);
  const { email } = resolveSettings(tenant.settings);
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
