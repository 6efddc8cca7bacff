// The moderation hook's signing secret, made by the settings PATCH (src/modules/settings/settings.ts)
// that sets the hook or changes its url: `whsec_…` as webhook endpoints' secrets are
// (src/outbound/signature.ts), sealed with the app's SecretBox in the stored settings
// (`safety.hook.secretEnc`), answered once in its Standard Webhooks form (`safety.hook.secret`, which
// the `standardwebhooks` library takes as it is) and never again. Removing the hook removes it.
import type { RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import type { Settings, SettingsPatch } from "../../tenancy/settings/tree.js";
import { generateSecret, standardWebhooksSecret } from "../../outbound/signature.js";
import { checkWebhookUrl } from "../../outbound/url-guard.js";

type Hook = NonNullable<Settings["safety"]["hook"]>;

/** A hook as the PATCH that made its secret answers it. */
export type ShownHook = Hook & { secret?: string };

/** The SSRF guard of webhook urls (src/outbound/url-guard.ts) on a PATCH's new hook url: 422 on `safety.hook.url`. */
export async function checkHookUrl(ctx: RequestContext, patch: SettingsPatch): Promise<void> {
  const url = patch.safety?.hook?.url;
  if (url === undefined) return;
  const verdict = await checkWebhookUrl(url, ctx.app.webhooks.policy);
  if (!verdict.ok) throw errors.validation([{ path: "safety.hook.url", message: verdict.message }]);
}

/**
 * The stored settings with a new sealed secret when the patch sets a hook where there was none,
 * changes its url, or names a hook that has no secret yet; the plain secret to show, or null.
 */
export function sealHookSecret(
  ctx: RequestContext,
  before: Settings,
  stored: Record<string, unknown>,
  patch: SettingsPatch,
): { stored: Record<string, unknown>; secret: string | null } {
  const named = patch.safety?.hook;
  const safety = stored.safety as Record<string, unknown> | undefined;
  const hook = safety?.hook as Record<string, unknown> | null | undefined;
  if (!named || !safety || !hook || typeof hook.url !== "string") return { stored, secret: null };
  const was = before.safety.hook;
  if (was && was.url === hook.url && was.secretEnc) return { stored, secret: null };
  const secret = generateSecret();
  // new objects: the merged settings may share the patch's own (recorded in the audit log as sent)
  const sealed = { ...hook, secretEnc: ctx.app.secretBox.seal(secret) };
  return { stored: { ...stored, safety: { ...safety, hook: sealed } }, secret: standardWebhooksSecret(secret) };
}

/** Settings without the sealed secret: what the audit log records of a change. */
export function withoutHookSecret(settings: Settings): Settings {
  const hook = settings.safety.hook;
  if (!hook?.secretEnc) return settings;
  const { secretEnc: _sealed, ...rest } = hook;
  return { ...settings, safety: { ...settings.safety, hook: rest } };
}

/** Settings whose hook carries the secret to show once (GraphQL `SafetyHookSettings.secret`). */
export function withShownSecret(settings: Settings, secret: string | null): Settings {
  const hook = settings.safety.hook;
  if (!hook || secret === null) return settings;
  const shown: ShownHook = { ...hook, secret };
  return { ...settings, safety: { ...settings.safety, hook: shown } };
}
