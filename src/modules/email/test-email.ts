// "Send test email" (contract section 15, the console's email settings): one message to the address
// an operator gives, from the tenant's sender, through its SMTP server (its own, else the service's),
// and what happened.
import { loadTenant, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { randomUUID } from "node:crypto";
import { escapeHtml } from "./templates.js";
import { headerFields } from "./engine/sender.js";
import { sendEmail, sendFailure } from "./transport.js";
import { smtpServerFor } from "./smtp-url.js";

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
  const server = smtpServerFor(ctx, settings);
  if (!server) throw errors.emailNotConfigured();
  // the same header boundary as every queued message (headerFields in src/modules/email/engine/sender.ts):
  // values on one line, structured addresses
  const fields = headerFields(
    {
      id: randomUUID(),
      toAddress: to,
      subject: `Test email from ${tenant.name}`,
      unsubscribeUrl: null,
      from: email.from,
      replyTo: email.replyTo,
    },
    ctx.app.config.EMAIL_FROM,
  );
  const sender = fields.from.name ? `${fields.from.name} <${fields.from.address}>` : fields.from.address;
  try {
    const messageId = await sendEmail(server, {
      ...fields,
      text: `This is a test email from ${tenant.name}'s comments.\n\nIf it reached you, replies and digests will reach readers too.\nSender: ${sender}\n`,
      html: `<p>This is a test email from <strong>${escapeHtml(tenant.name)}</strong>'s comments.</p><p>If it reached you, replies and digests will reach readers too.<br>Sender: ${escapeHtml(sender)}</p>`,
    });
    return { sent: true, messageId, error: null };
  } catch (err) {
    return { sent: false, messageId: null, error: sendFailure(err) };
  }
}
