// A tenant's own SMTP server (contract sections 15 and 22, settings `email.smtpUrl`): a PATCH sends the
// URL (smtp:// or smtps://, optional credentials, a host and a port, nothing else: src/lib/outbound-url.ts
// refuses a path or query, which a mail library would take as transport options); it is checked like a
// webhook's host (the SSRF guard of
// src/outbound/url-guard.ts: no private, loopback or metadata addresses unless allowed),
// sealed with the app's SecretBox into `email.smtpUrlEnc`, answered with its password masked, and
// recorded in the audit log masked. `null` removes it: the tenant's mail goes through SMTP_URL again.
import type { RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Settings, SettingsPatch } from "../../tenancy/settings/tree.js";
import { parseOutboundUrl } from "../../lib/outbound-url.js";
import { checkWebhookUrl } from "../../outbound/url-guard.js";
import type { SmtpServer } from "./transport.js";
import type { SecretSetting } from "../settings/sealed-field.js";

/** The URL with its password (if any) replaced by `****`: what answers and the audit log show. */
export function maskSmtpUrl(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "****";
  return u.toString().replace(/\/$/, "");
}

/** The tenant's own SMTP URL, opened; null when it has none. */
export function tenantSmtpUrl(box: SecretBox, settings: Pick<Settings, "email">): string | null {
  return settings.email.smtpUrlEnc ? box.open(settings.email.smtpUrlEnc) : null;
}

/** The SMTP server a tenant's mail goes through: its own (its host guarded at each send), else the service's; null: none. */
export function smtpServerFor(ctx: RequestContext, settings: Pick<Settings, "email">): SmtpServer | null {
  const own = tenantSmtpUrl(ctx.app.secretBox, settings);
  if (own) return { url: own, guard: ctx.app.webhooks.policy };
  return ctx.app.config.SMTP_URL ? { url: ctx.app.config.SMTP_URL, guard: null } : null;
}

/** A PATCH's new SMTP host must be one a webhook could be sent to: 422 on `email.smtpUrl` otherwise. */
export async function checkSmtpUrl(ctx: RequestContext, patch: SettingsPatch): Promise<void> {
  const url = patch.email?.smtpUrl;
  if (!url) return;
  const parsed = parseOutboundUrl(url, "smtp");
  if (!parsed.ok) throw errors.validation([{ path: "email.smtpUrl", message: parsed.problem.message }]);
  const verdict = await checkWebhookUrl(`https://${parsed.target.host}:${parsed.target.port}/`, ctx.app.webhooks.policy);
  if (!verdict.ok) throw errors.validation([{ path: "email.smtpUrl", message: verdict.message.replace(/^url /, "host ") }]);
}

/** The stored settings with a PATCH's `email.smtpUrl` sealed into `smtpUrlEnc` (or removed by null). */
export function sealSmtpUrl(box: SecretBox, stored: Record<string, unknown>): Record<string, unknown> {
  const email = stored.email as Record<string, unknown> | undefined;
  if (!email || !("smtpUrl" in email)) return stored;
  const { smtpUrl, smtpUrlEnc: _old, ...rest } = email;
  const next = typeof smtpUrl === "string" ? { ...rest, smtpUrlEnc: box.seal(smtpUrl) } : rest;
  return { ...stored, email: next };
}

/** A PATCH as the audit log records it: the SMTP URL's password masked. */
export function auditedPatch(patch: SettingsPatch): SettingsPatch {
  const url = patch.email?.smtpUrl;
  return url ? { ...patch, email: { ...patch.email, smtpUrl: maskSmtpUrl(url) } } : patch;
}

/** The SMTP URL as the settings' PATCH treats a write-only secret (src/modules/settings/settings.ts). */
export const smtpUrlSecret: SecretSetting = {
  check: checkSmtpUrl,
  seal: (box, _before, stored) => sealSmtpUrl(box, stored),
  masked: auditedPatch,
  without: (settings) => settings,
};
