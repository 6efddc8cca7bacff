// The console's words for the settings it shows as numbers (console/src/screens/settings-fields.tsx):
// each group with a `title` and its settings with a `label`, their help and unit, in the order the
// description gives them. `npm run schema:print` writes them to console/src/settings-text.ts (the
// console does not bundle zod); `npm run schema:check` fails when that file is stale.
import type { z } from "zod";
import { groupMetaOf, unwrap } from "./define.js";
import { SettingsSchema } from "./tree.js";

export interface ConsoleSettingText {
  label: string;
  help: string;
  unit?: "ms";
}

export function consoleText(): Record<string, { title: string; fields: Record<string, ConsoleSettingText> }> {
  const out: Record<string, { title: string; fields: Record<string, ConsoleSettingText> }> = {};
  for (const [key, field] of Object.entries(SettingsSchema.shape)) {
    const { inner } = unwrap(field as z.ZodType);
    const title = groupMetaOf(inner)?.title;
    if (!title) continue;
    const fields: Record<string, ConsoleSettingText> = {};
    for (const [name, f] of Object.entries((inner as z.ZodObject).shape)) {
      const { label, help, unit } = unwrap(f as z.ZodType).meta;
      if (label === undefined) continue;
      if (help === undefined) throw new Error(`setting ${key}.${name} has a label and no help`);
      fields[name] = { label, help, ...(unit ? { unit } : {}) };
    }
    out[key] = { title, fields };
  }
  return out;
}
