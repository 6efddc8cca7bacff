// Chat alerts' settings (`alerts`, contract section 21): a PATCH sends the whole list, each alert's
// `url` in the clear. The URL is the alert's secret (an incoming webhook's URL is all it takes to post
// to the channel): it passes the webhooks' SSRF guard (src/outbound/url-guard.ts) when it is
// set and again at each send, is sealed with the app's SecretBox into `urlEnc` (as a sign-in
// provider's client secret is: src/modules/sign-in/settings.ts), answered masked (scheme and host
// only) and recorded in the audit log masked. Each alert gets an id (`alr_…`) when it is first set; an
// alert patched with its id and without `url` (or with the masked one a read answered) keeps its URL.
import type { RequestContext } from "../../context/request.js";
import { errors, type FieldError } from "../../lib/errors.js";
import { newId } from "../../lib/ids.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { AlertSettings } from "../../tenancy/settings/alerts.js";
import type { Settings, SettingsPatch } from "../../tenancy/settings/tree.js";
import { checkWebhookUrl } from "../../outbound/url-guard.js";
import type { SecretSetting } from "../settings/sealed-field.js";

/** What answers and the audit log show of an alert's URL: its scheme and host, the secret path left out. */
export function maskAlertUrl(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return "…";
  }
}

/** A URL as maskAlertUrl answers it: sent back, it means "keep the stored one". */
const isMasked = (url: string): boolean => url.endsWith("/…");

/** An alert's URL, opened. */
export const alertUrl = (box: SecretBox, alert: Pick<AlertSettings, "urlEnc">): string => box.open(alert.urlEnc);

/** A PATCH's alert URLs must be ones a webhook could be sent to: 422 on `alerts[N].url` otherwise. */
export async function checkAlertUrls(ctx: RequestContext, patch: SettingsPatch): Promise<void> {
  const problems: FieldError[] = [];
  for (const [i, alert] of (patch.alerts ?? []).entries()) {
    if (alert.url === undefined || isMasked(alert.url)) continue; // kept: sealAlertUrls checks it is the alert's own
    const verdict = await checkWebhookUrl(alert.url, ctx.app.webhooks.policy);
    if (!verdict.ok) problems.push({ path: `alerts[${i}].url`, message: verdict.message });
  }
  if (problems.length) throw errors.validation(problems);
}

/**
 * The stored settings with a PATCH's alerts sealed: a new alert gets an id and its URL sealed; one
 * named by its id keeps its stored URL unless the patch gives another. 422 on `alerts[N].url` for a
 * new alert without one, on `alerts[N].id` for an id the site has no alert with.
 */
export function sealAlertUrls(
  box: SecretBox,
  before: Settings,
  stored: Record<string, unknown>,
  patch: SettingsPatch,
): Record<string, unknown> {
  if (!patch.alerts) return stored;
  const problems: FieldError[] = [];
  const alerts = patch.alerts.map((alert, i) => {
    const { url, id, ...rest } = alert;
    const kept = id === undefined ? undefined : before.alerts.find((a) => a.id === id);
    if (id !== undefined && !kept) problems.push({ path: `alerts[${i}].id`, message: "is not the id of one of the site's alerts" });
    const keep = url === undefined || isMasked(url);
    if (keep && id === undefined) problems.push({ path: `alerts[${i}].url`, message: "is required for a new alert" });
    else if (keep && kept && url !== undefined && url !== maskAlertUrl(alertUrl(box, kept))) {
      problems.push({ path: `alerts[${i}].url`, message: "is masked: send the whole URL to change it" });
    }
    return { id: id ?? newId("alr"), ...rest, urlEnc: keep ? (kept?.urlEnc ?? "") : box.seal(url) };
  });
  if (problems.length) throw errors.validation(problems);
  return { ...stored, alerts };
}

/** A PATCH as the audit log records it: the alerts' URLs masked. */
export function withMaskedAlertUrls(patch: SettingsPatch): SettingsPatch {
  if (!patch.alerts) return patch;
  return { ...patch, alerts: patch.alerts.map((a) => (a.url === undefined ? a : { ...a, url: maskAlertUrl(a.url) })) };
}

/** Settings without the sealed URLs: what the audit log records of a change. */
export function withoutAlertUrls(settings: Settings): Settings {
  if (!settings.alerts.length) return settings;
  return { ...settings, alerts: settings.alerts.map(({ urlEnc: _sealed, ...rest }) => rest as AlertSettings) };
}

/** Alerts' URLs as the settings' PATCH treats a write-only secret (src/modules/settings/settings.ts). */
export const alertSecrets: SecretSetting = {
  check: checkAlertUrls,
  seal: sealAlertUrls,
  masked: withMaskedAlertUrls,
  without: withoutAlertUrls,
};
