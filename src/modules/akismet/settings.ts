// Akismet's settings (`safety.akismet`, contract section 21): a PATCH sends `apiKey`, `blog` and
// optionally `baseUrl`. The key is write-only: sealed with the app's SecretBox into `apiKeyEnc` as every
// single-field secret is (src/modules/settings/sealed-field.ts), never answered, masked in the audit log.
// The base URL's host passes the webhooks' SSRF guard (src/outbound/url-guard.ts).
import type { RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { SettingsPatch } from "../../tenancy/settings/tree.js";
import { sealField, withMaskedField, withoutField, type SealedField, type SecretSetting } from "../settings/sealed-field.js";
import { checkWebhookUrl } from "../../outbound/url-guard.js";

/** A PATCH's new Akismet base URL must be one a webhook could be sent to: 422 on `safety.akismet.baseUrl` otherwise. */
export async function checkAkismetBaseUrl(ctx: RequestContext, patch: SettingsPatch): Promise<void> {
  const url = patch.safety?.akismet?.baseUrl;
  if (!url) return;
  const verdict = await checkWebhookUrl(`${url.replace(/\/$/, "")}/1.1/comment-check`, ctx.app.webhooks.policy);
  if (!verdict.ok) throw errors.validation([{ path: "safety.akismet.baseUrl", message: verdict.message }]);
}

/** The key's place in the settings: sealed, masked and left out as every single-field secret is (src/modules/settings/sealed-field.ts). */
const AKISMET_KEY: SealedField = { section: ["safety", "akismet"], field: "apiKey" };

/**
 * The stored settings with a PATCH's `safety.akismet.apiKey` sealed into `apiKeyEnc` and a `baseUrl`
 * of null removed; 422 on `safety.akismet.apiKey` when Akismet is set without a key.
 */
function sealAkismetKey(box: SecretBox, stored: Record<string, unknown>, patch: SettingsPatch): Record<string, unknown> {
  const sealed = sealField(box, AKISMET_KEY, stored, patch);
  const safety = sealed.safety as Record<string, unknown> | undefined;
  const akismet = safety?.akismet as Record<string, unknown> | null | undefined;
  if (!safety || !akismet) return sealed;
  const { baseUrl, ...rest } = akismet;
  const next: Record<string, unknown> = typeof baseUrl === "string" ? { ...rest, baseUrl } : rest;
  if (typeof next.apiKeyEnc !== "string") throw errors.validation([{ path: "safety.akismet.apiKey", message: "is required" }]);
  return { ...sealed, safety: { ...safety, akismet: next } };
}

/** Akismet's key as the settings' PATCH treats a write-only secret (src/modules/settings/settings.ts). */
export const akismetSecret: SecretSetting = {
  check: checkAkismetBaseUrl,
  seal: (box, _before, stored, patch) => sealAkismetKey(box, stored, patch),
  masked: (patch) => withMaskedField(AKISMET_KEY, patch),
  without: (settings) => withoutField(AKISMET_KEY, settings),
};
