// Tenant settings (manage_settings): GET, PATCH (merges the named fields), identity-secret rotation.
import { bodyObject, route } from "../../http/rest/router.js";
import {
  RestGetSettingsDocument,
  RestRotateIdentitySecretDocument,
  RestUpdateSettingsDocument,
  type SettingsPatch,
} from "../../generated/operations.js";

export const settingsRoutes = [
  route({
    method: "GET",
    path: "/settings",
    document: RestGetSettingsDocument,
    variables: () => ({}),
    respond: (d) => d.settings,
  }),
  route({
    method: "PATCH",
    path: "/settings",
    document: RestUpdateSettingsDocument,
    variables: ({ body }) => ({ input: bodyObject(body) as SettingsPatch }),
    respond: (d) => d.updateSettings,
  }),
  route({
    method: "POST",
    path: "/settings/identity-secret/rotate",
    document: RestRotateIdentitySecretDocument,
    variables: () => ({}),
    respond: (d) => d.rotateIdentitySecret,
  }),
];
