// Tenant settings (manage_settings): GET, PATCH (merges the named fields), identity-secret rotation.
// The moderation hook's Send test is src/modules/moderation-hook/routes.ts.
import { bodyObject, route } from "../../http/rest/router.js";
import {
  RestGetSettingsDocument,
  RestRotateIdentitySecretDocument,
  RestUpdateSettingsDocument,
  type SettingsFieldsFragment,
  type SettingsPatch,
} from "../../generated/operations.js";

/** The hook's secret is only in the answer that made it: other answers and reads omit the member. */
function withoutNullSecret(s: SettingsFieldsFragment): unknown {
  const hook = s.safety.hook;
  if (!hook || hook.secret !== null) return s;
  const { secret: _none, ...shown } = hook;
  return { ...s, safety: { ...s.safety, hook: shown } };
}

export const settingsRoutes = [
  route({
    method: "GET",
    path: "/settings",
    document: RestGetSettingsDocument,
    variables: () => ({}),
    respond: (d) => withoutNullSecret(d.settings),
  }),
  route({
    method: "PATCH",
    path: "/settings",
    document: RestUpdateSettingsDocument,
    variables: ({ body }) => ({ input: bodyObject(body) as SettingsPatch }),
    respond: (d) => withoutNullSecret(d.updateSettings),
  }),
  route({
    method: "POST",
    path: "/settings/identity-secret/rotate",
    document: RestRotateIdentitySecretDocument,
    variables: () => ({}),
    respond: (d) => d.rotateIdentitySecret,
  }),
];
