// The settings tree: the sections in the order a problem list names them, the defaults and the PATCH
// derived from their one description (define.ts). A new setting is written in its section's file.
import { z } from "zod";
import { defaultsOf, named, patchOf, type PatchOf } from "./define.js";
import { commentsSettings } from "./comments.js";
import { deliverySettings } from "./delivery.js";
import { discussionsSettings } from "./discussions.js";
import { retentionSettings } from "./retention.js";
import { safetySettings } from "./safety.js";
import { identitySettings } from "./identity.js";
import { privacySettings } from "./privacy.js";
import { emailSettings } from "./email.js";
import { formattingSettings, votesSettings } from "./formatting.js";
import { autoCloseSettings } from "./auto-close.js";
import { signInSettings } from "./sign-in.js";
import { alertsSettings } from "./alerts.js";
import { federationSettings } from "./federation.js";
import { blueskySettings } from "./bluesky.js";

export const SettingsSchema = named(
  z
    .object({
      ...commentsSettings,
      ...deliverySettings,
      ...discussionsSettings,
      ...retentionSettings,
      ...safetySettings,
      ...identitySettings,
      ...privacySettings,
      ...emailSettings,
      ...formattingSettings,
      ...votesSettings,
      ...autoCloseSettings,
      ...signInSettings,
      ...alertsSettings,
      ...federationSettings,
      ...blueskySettings,
    })
    .strict(),
  { name: "Settings", patchName: "SettingsPatch" },
);

export type Settings = z.infer<typeof SettingsSchema>;

export const DEFAULT_SETTINGS = defaultsOf(SettingsSchema) as Settings;

/** A PATCH: any top-level field, and any subset of the nested objects' fields (a list is sent whole). */
export type SettingsPatch = PatchOf<typeof SettingsSchema>;
export const SettingsPatchSchema = patchOf(SettingsSchema) as z.ZodType<SettingsPatch>;
