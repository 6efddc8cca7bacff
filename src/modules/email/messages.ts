// What the console shows of email (contract section 15): whether the tenant's email is on and how (`smtp`: its own SMTP server or SMTP_URL, `outbox`
// under EMAIL_OUTBOX=1, or `off`), and the tenant's messages newest first — under EMAIL_OUTBOX=1 the
// Outbox, where a developer reads what readers would have received. manage_settings.
import { loadTenant, type RequestContext, db } from "../../context/request.js";
import { newestFirstPage, type Page, type PageArgs } from "../../lib/pagination.js";
import { errors } from "../../lib/errors.js";
import { resolveSettings } from "../../tenancy/settings/resolve.js";
import { smtpServerFor } from "./smtp-url.js";

export type EmailDelivery = "smtp" | "outbox" | "off";

export interface EmailStatus {
  mode: EmailDelivery;
  /** the sender messages go out with: the tenant's email.from, else the service's EMAIL_FROM */
  from: string;
}

export const EMAIL_MESSAGE_STATES = ["queued", "sent", "failed", "suppressed", "outbox"] as const;

export interface EmailMessageView {
  id: string;
  readerId: string | null;
  kind: string;
  toAddress: string;
  subject: string;
  textBody: string;
  htmlBody: string;
  itemCount: number;
  state: string;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
}

export async function emailStatus(ctx: RequestContext): Promise<EmailStatus> {
  const tenant = await loadTenant(ctx);
  const settings = resolveSettings(tenant.settings);
  const mode: EmailDelivery = ctx.app.config.EMAIL_OUTBOX ? "outbox" : smtpServerFor(ctx, settings) ? "smtp" : "off";
  return { mode, from: settings.email.from ?? ctx.app.config.EMAIL_FROM };
}

export async function listEmailMessages(ctx: RequestContext, args: PageArgs & { state?: string | null }): Promise<Page<EmailMessageView>> {
  const state = args.state ?? null;
  if (state !== null && !(EMAIL_MESSAGE_STATES as readonly string[]).includes(state)) {
    throw errors.validation([{ path: "state", message: `must be one of ${EMAIL_MESSAGE_STATES.join(", ")}` }]);
  }
  return newestFirstPage(args, (q) =>
    db(ctx).emailMessage.findMany({
      ...q,
      where: { AND: [state ? { state } : {}, q.where] },
      select: {
        id: true,
        readerId: true,
        kind: true,
        toAddress: true,
        subject: true,
        textBody: true,
        htmlBody: true,
        itemCount: true,
        state: true,
        attempts: true,
        lastError: true,
        createdAt: true,
        sentAt: true,
      },
    }),
  );
}
