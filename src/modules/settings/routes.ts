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

/**
 * Settings as REST answers them: the hook's secret only in the answer that made it (other answers and
 * reads omit the member), and a provider's issuer or jwksUri only when it has one.
 */
function restSettings(s: SettingsFieldsFragment): unknown {
  const hook = s.safety.hook;
  const safety = !hook || hook.secret !== null ? s.safety : { ...s.safety, hook: (({ secret: _none, ...shown }) => shown)(hook) };
  const present = <T extends object>(p: T) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== null));
  const providers = s.identity.providers.map(present);
  const oidc = s.signIn.oidc.map((p) => present({ ...p, claims: p.claims && present(p.claims) }));
  return { ...s, safety, identity: { ...s.identity, providers }, signIn: { ...s.signIn, oidc } };
}

export const settingsRoutes = [
  route({
    method: "GET",
    path: "/settings",
    document: RestGetSettingsDocument,
    variables: () => ({}),
    respond: (d) => restSettings(d.settings),
  }),
  route({
    method: "PATCH",
    path: "/settings",
    document: RestUpdateSettingsDocument,
    variables: ({ body }) => ({ input: bodyObject(body) as SettingsPatch }),
    respond: (d) => restSettings(d.updateSettings),
  }),
  route({
    method: "POST",
    path: "/settings/identity-secret/rotate",
    document: RestRotateIdentitySecretDocument,
    variables: () => ({}),
    respond: (d) => d.rotateIdentitySecret,
  }),
];
