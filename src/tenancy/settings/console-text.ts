// The console's words for the settings its forms show: each setting's label (with its unit in words),
// its line of help and its unit ("ms": kept in ms, shown in seconds) by path (`editWindowSeconds`,
// `delivery.maxAttempts`; a list's items by the list's path: `signIn.oidc.clientId`), an enum's
// values in words (`options`), a write-only secret's help once one is stored (`storedHelp`), and
// the groups shown as fieldsets of numbers (a group with a `title`), in the order the description
// gives them. What only a PATCH sends (a secret in the clear) is described on the PATCH's schema.
// `npm run schema:print` writes them to console/src/settings-text.ts (the console does not bundle
// zod); `npm run schema:check` fails when that file is stale.
import type { z } from "zod";
import { groupMetaOf, kindOf, unwrap, type SettingMeta } from "./define.js";
import { SettingsSchema } from "./tree.js";

export interface ConsoleSettingText {
  label: string;
  /** absent where the console shows the label alone (a legend, a checkbox) */
  help?: string;
  unit?: "ms";
  options?: Record<string, { label: string; help?: string }>;
  storedHelp?: string;
}

export interface ConsoleText {
  settings: Record<string, ConsoleSettingText>;
  groups: Record<string, { title: string; fields: string[] }>;
}

/** The object of settings a field holds, or each item of a list holds (unwrapped), when it is a named group. */
function groupIn(schema: z.ZodType): z.ZodType | null {
  const { inner } = unwrap(schema);
  const kind = kindOf(inner);
  const item = kind === "array" ? unwrap((inner as z.ZodArray).element as z.ZodType).inner : kind === "object" ? inner : null;
  return item && kindOf(item) === "object" && groupMetaOf(item) ? item : null;
}

const textOf = (meta: SettingMeta): ConsoleSettingText => ({
  label: meta.label!,
  ...(meta.help !== undefined ? { help: meta.help } : {}),
  ...(meta.unit ? { unit: meta.unit } : {}),
  ...(meta.options ? { options: meta.options } : {}),
  ...(meta.storedHelp !== undefined ? { storedHelp: meta.storedHelp } : {}),
});

export function consoleText(): ConsoleText {
  const out: ConsoleText = { settings: {}, groups: {} };
  const walk = (schema: z.ZodType, prefix: string) => {
    for (const [key, field] of Object.entries((schema as z.ZodObject).shape)) {
      const { meta } = unwrap(field as z.ZodType);
      const path = `${prefix}${key}`;
      if (meta.label !== undefined) out.settings[path] = textOf(meta);
      const inner = groupIn(field as z.ZodType);
      if (!inner) continue;
      walk(inner, `${path}.`);
      // what only a PATCH sends (a secret in the clear) has its words too: the group's patchOnly
      // fields, and the fields of the setting's own PATCH schema the stored one lacks
      for (const [name, only] of Object.entries(groupMetaOf(inner)!.patchOnly ?? {})) {
        const m = unwrap(only).meta;
        if (m.label !== undefined) out.settings[`${path}.${name}`] = textOf(m);
      }
      const patched = meta.patch && groupIn(meta.patch);
      if (patched) {
        for (const [name, only] of Object.entries((patched as z.ZodObject).shape)) {
          const m = unwrap(only as z.ZodType).meta;
          if (m.label !== undefined && !out.settings[`${path}.${name}`]) out.settings[`${path}.${name}`] = textOf(m);
        }
      }
      const title = groupMetaOf(inner)!.title;
      if (title) {
        const fields = Object.keys((inner as z.ZodObject).shape).filter((n) => out.settings[`${path}.${n}`]);
        out.groups[path] = { title, fields };
      }
    }
  };
  walk(SettingsSchema, "");
  return out;
}
