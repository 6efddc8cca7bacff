// Akismet's settings (`safety.akismet`, contract section 21): a PATCH sends `apiKey`, `blog` and
// optionally `baseUrl`. The key is write-only: sealed with the app's SecretBox into `apiKeyEnc` (as the
// SMTP URL is: src/modules/email/smtp-url.ts), never answered, and recorded in the audit log masked.
// The base URL's host passes the webhooks' SSRF guard (src/outbound/url-guard.ts).
import type { RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Settings, SettingsPatch } from "../../tenancy/settings/tree.js";
import { checkWebhookUrl } from "../../outbound/url-guard.js";

/** A PATCH's new Akismet base URL must be one a webhook could be sent to: 422 on `safety.akismet.baseUrl` otherwise. */
export async function checkAkismetBaseUrl(ctx: RequestContext, patch: SettingsPatch): Promise<void> {
  const url = patch.safety?.akismet?.baseUrl;
  if (!url) return;
  const verdict = await checkWebhookUrl(`${url.replace(/\/$/, "")}/1.1/comment-check`, ctx.app.webhooks.policy);
  if (!verdict.ok) throw errors.validation([{ path: "safety.akismet.baseUrl", message: verdict.message }]);
}

/**
 * The stored settings with a PATCH's `safety.akismet.apiKey` sealed into `apiKeyEnc` and a `baseUrl`
 * of null removed; 422 on `safety.akismet.apiKey` when Akismet is set without a key.
 */
export function sealAkismetKey(box: SecretBox, stored: Record<string, unknown>): Record<string, unknown> {
  const safety = stored.safety as Record<string, unknown> | undefined;
  const akismet = safety?.akismet as Record<string, unknown> | null | undefined;
  if (!safety || !akismet) return stored;
  const { apiKey, baseUrl, ...rest } = akismet;
  const next: Record<string, unknown> = { ...rest };
  if (typeof baseUrl === "string") next.baseUrl = baseUrl;
  if (typeof apiKey === "string") next.apiKeyEnc = box.seal(apiKey);
  if (typeof next.apiKeyEnc !== "string") throw errors.validation([{ path: "safety.akismet.apiKey", message: "is required" }]);
  // new objects: the merged settings may share the patch's own (recorded in the audit log masked)
  return { ...stored, safety: { ...safety, akismet: next } };
}

/** A PATCH as the audit log records it: Akismet's key masked. */
export function withMaskedAkismetKey(patch: SettingsPatch): SettingsPatch {
  const akismet = patch.safety?.akismet;
  if (!akismet?.apiKey) return patch;
  return { ...patch, safety: { ...patch.safety, akismet: { ...akismet, apiKey: "****" } } };
}

/** Settings without the sealed key: what the audit log records of a change. */
export function withoutAkismetKey(settings: Settings): Settings {
  const akismet = settings.safety.akismet;
  if (!akismet) return settings;
  const { apiKeyEnc: _sealed, ...rest } = akismet;
  return { ...settings, safety: { ...settings.safety, akismet: rest as typeof akismet } };
}
