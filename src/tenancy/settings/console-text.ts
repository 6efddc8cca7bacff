// The console's words for the settings its forms show: each setting's label (with its unit in words),
// its line of help and its unit ("ms": kept in ms, shown in seconds) by path (`editWindowSeconds`,
// `delivery.maxAttempts`), and the groups shown as fieldsets of numbers (a group with a `title`),
// in the order the description gives them. `npm run schema:print` writes them to
// console/src/settings-text.ts (the console does not bundle zod); `npm run schema:check` fails when
// that file is stale.
import type { z } from "zod";
import { groupMetaOf, kindOf, unwrap } from "./define.js";
import { SettingsSchema } from "./tree.js";

export interface ConsoleSettingText {
  label: string;
  help: string;
  unit?: "ms";
}

export interface ConsoleText {
  settings: Record<string, ConsoleSettingText>;
  groups: Record<string, { title: string; fields: string[] }>;
}

export function consoleText(): ConsoleText {
  const out: ConsoleText = { settings: {}, groups: {} };
  const walk = (schema: z.ZodType, prefix: string) => {
    for (const [key, field] of Object.entries((schema as z.ZodObject).shape)) {
      const { inner, meta } = unwrap(field as z.ZodType);
      const path = `${prefix}${key}`;
      if (kindOf(inner) === "object" && groupMetaOf(inner)) {
        walk(inner, `${path}.`);
        // what only a PATCH sends (a secret in the clear) has its words too
        for (const [name, only] of Object.entries(groupMetaOf(inner)!.patchOnly ?? {})) {
          const m = unwrap(only).meta;
          if (m.label === undefined) continue;
          if (m.help === undefined) throw new Error(`setting ${path}.${name} has a label and no help`);
          out.settings[`${path}.${name}`] = { label: m.label, help: m.help };
        }
        const title = groupMetaOf(inner)!.title;
        if (title) {
          const fields = Object.keys((inner as z.ZodObject).shape).filter((n) => out.settings[`${path}.${n}`]);
          out.groups[path] = { title, fields };
        }
      } else if (meta.label !== undefined) {
        if (meta.help === undefined) throw new Error(`setting ${path} has a label and no help`);
        out.settings[path] = { label: meta.label, help: meta.help, ...(meta.unit ? { unit: meta.unit } : {}) };
      }
    }
  };
  walk(SettingsSchema, "");
  return out;
}
