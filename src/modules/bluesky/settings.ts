// Bluesky's settings (`bluesky`, contract section 30): the app password is write-only — sealed into
// `appPasswordEnc` as every single-field secret is (src/modules/settings/sealed-field.ts), never
// answered (`appPasswordSet` says whether one is stored), masked in the audit log. The account's
// server and the AppView pass the webhooks' SSRF guard (src/outbound/url-guard.ts) when they are set,
// and again on each call (client.ts). `autoPost` needs the account: a handle and an app password.
import type { RequestContext } from "../../context/request.js";
import { errors, type FieldError } from "../../lib/errors.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Settings, SettingsPatch } from "../../tenancy/settings/tree.js";
import { checkWebhookUrl } from "../../outbound/url-guard.js";
import { openField, sealField, withMaskedField, withoutField, type SealedField, type SecretSetting } from "../settings/sealed-field.js";

const APP_PASSWORD: SealedField = { section: ["bluesky"], field: "appPassword" };

/** The site account's app password, opened; null when none is stored. */
export const blueskyAppPassword = (box: SecretBox, settings: Settings): string | null => openField(box, APP_PASSWORD, settings);

/** A PATCH's servers must be ones a webhook could be sent to: 422 on the field otherwise. */
async function checkServers(ctx: RequestContext, patch: SettingsPatch): Promise<void> {
  const problems: FieldError[] = [];
  for (const field of ["service", "appView"] as const) {
    const url = patch.bluesky?.[field];
    if (!url) continue;
    const verdict = await checkWebhookUrl(`${url.replace(/\/$/, "")}/xrpc/_health`, ctx.app.webhooks.policy);
    if (!verdict.ok) problems.push({ path: `bluesky.${field}`, message: verdict.message.replace(/^url /, "address ") });
  }
  if (problems.length) throw errors.validation(problems);
}

/** The password sealed; 422 on `bluesky.autoPost` when it is on without the account to post from. */
function seal(box: SecretBox, stored: Record<string, unknown>, patch: SettingsPatch): Record<string, unknown> {
  const next = sealField(box, APP_PASSWORD, stored, patch);
  const b = next.bluesky as Record<string, unknown> | undefined;
  if (b?.autoPost === true && (typeof b.handle !== "string" || typeof b.appPasswordEnc !== "string")) {
    throw errors.validation([{ path: "bluesky.autoPost", message: "needs the site's account: a handle and an app password" }]);
  }
  return next;
}

/** The app password as the settings' PATCH treats a write-only secret (src/modules/settings/settings.ts). */
export const blueskySecret: SecretSetting = {
  check: checkServers,
  seal: (box, _before, stored, patch) => seal(box, stored, patch),
  masked: (patch) => withMaskedField(APP_PASSWORD, patch),
  without: (settings) => withoutField(APP_PASSWORD, settings),
};
