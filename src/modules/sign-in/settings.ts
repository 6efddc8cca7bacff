// Hosted sign-in's settings (`signIn`, contract section 20): a PATCH's OIDC providers carry
// `clientSecret` in the clear; it is sealed with the app's SecretBox into `clientSecretEnc` (as
// Akismet's key is: src/modules/akismet/settings.ts), never answered, and masked in the audit log. A
// provider patched without a secret keeps the one stored under its id. Every endpoint's host passes
// the webhooks' SSRF guard (src/outbound/url-guard.ts) when it is set, and again on each call.
import type { RequestContext } from "../../context/request.js";
import { errors, type FieldError } from "../../lib/errors.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Settings, SettingsPatch } from "../../tenancy/settings/tree.js";
import { checkWebhookUrl } from "../../outbound/url-guard.js";
import type { SecretSetting } from "../settings/sealed-field.js";

const ENDPOINTS = ["issuer", "authorizationEndpoint", "tokenEndpoint", "userinfoEndpoint"] as const;

/** A PATCH's provider endpoints must be ones a webhook could be sent to: 422 on the field otherwise. */
export async function checkSignInEndpoints(ctx: RequestContext, patch: SettingsPatch): Promise<void> {
  const problems: FieldError[] = [];
  for (const [i, provider] of (patch.signIn?.oidc ?? []).entries()) {
    for (const field of ENDPOINTS) {
      const url = provider[field];
      if (url === undefined) continue;
      const verdict = await checkWebhookUrl(url, ctx.app.webhooks.policy);
      if (!verdict.ok) problems.push({ path: `signIn.oidc.${i}.${field}`, message: verdict.message });
    }
  }
  if (problems.length) throw errors.validation(problems);
}

/**
 * The stored settings with each patched provider's `clientSecret` sealed into `clientSecretEnc`, or the
 * stored secret of the provider with its id kept; 422 on `signIn.oidc.N.clientSecret` for a new
 * provider without one.
 */
export function sealSignInSecrets(
  box: SecretBox,
  before: Settings,
  stored: Record<string, unknown>,
  patch: SettingsPatch,
): Record<string, unknown> {
  const patched = patch.signIn?.oidc;
  if (!patched) return stored;
  const signIn = stored.signIn as Record<string, unknown>;
  const problems: FieldError[] = [];
  const oidc = patched.map((provider, i) => {
    const { clientSecret, ...rest } = provider;
    const kept = before.signIn.oidc.find((p) => p.id === provider.id)?.clientSecretEnc;
    const clientSecretEnc = clientSecret !== undefined ? box.seal(clientSecret) : kept;
    if (clientSecretEnc === undefined) problems.push({ path: `signIn.oidc.${i}.clientSecret`, message: "is required for a new provider" });
    return { ...rest, clientSecretEnc };
  });
  if (problems.length) throw errors.validation(problems);
  return { ...stored, signIn: { ...signIn, oidc } };
}

/** A PATCH as the audit log records it: providers' secrets masked. */
export function withMaskedSignInSecrets(patch: SettingsPatch): SettingsPatch {
  const oidc = patch.signIn?.oidc;
  if (!oidc) return patch;
  return {
    ...patch,
    signIn: { ...patch.signIn, oidc: oidc.map((p) => (p.clientSecret === undefined ? p : { ...p, clientSecret: "****" })) },
  };
}

/** Settings without the sealed secrets: what answers and the audit log show. */
export function withoutSignInSecrets(settings: Settings): Settings {
  if (!settings.signIn.oidc.length) return settings;
  const oidc = settings.signIn.oidc.map(({ clientSecretEnc: _sealed, ...rest }) => rest as (typeof settings.signIn.oidc)[number]);
  return { ...settings, signIn: { ...settings.signIn, oidc } };
}

/**
 * Where a reader-facing client opens the hosted sign-in (ReaderSettings.signInUrl): on PUBLIC_URL
 * when it is set, else a path the client puts after the service's address it already uses.
 */
export const signInPageUrl = (publicUrl: string | undefined, tenantId: string): string =>
  `${(publicUrl ?? "").replace(/\/+$/, "")}/auth/v1/${encodeURIComponent(tenantId)}/sign-in`;

/** Providers' client secrets as the settings' PATCH treats a write-only secret (src/modules/settings/settings.ts). */
export const signInSecrets: SecretSetting = {
  check: checkSignInEndpoints,
  seal: sealSignInSecrets,
  masked: withMaskedSignInSecrets,
  without: withoutSignInSecrets,
};
