// The settings' one description (src/tenancy/settings/): the defaults, the PATCH, the GraphQL types
// and the console's words are all read from it, so a setting added to a section appears in each of
// them, and one without a default is refused.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { getNamedType, isInputObjectType, isObjectType, isNonNullType, type GraphQLField, type GraphQLInputField } from "graphql";
import { defaultsOf, group, groupMetaOf, kindOf, patchNameOf, patchOf, setting, unwrap } from "../../src/tenancy/settings/define.js";
import { DEFAULT_SETTINGS, SettingsPatchSchema, SettingsSchema } from "../../src/tenancy/settings/tree.js";
import { consoleText } from "../../src/tenancy/settings/console-text.js";
import { schema } from "../../src/modules/schema.js";
import { SETTINGS_GROUPS, SETTINGS_TEXT } from "../../console/src/settings-text.js";

const shapeOf = (s: z.ZodType) => (s as z.ZodObject).shape as Record<string, z.ZodType>;
const elementOf = (s: z.ZodType) => (s as unknown as { def: { element: z.ZodType } }).def.element;

/** Every object of settings (a group, or a list's item) under `s`, with its path. */
function groupsUnder(s: z.ZodType, path = "settings"): [string, z.ZodType][] {
  const { inner } = unwrap(s);
  if (kindOf(inner) === "array") return groupsUnder(elementOf(inner), `${path}[]`);
  if (kindOf(inner) !== "object") return [];
  return [[path, inner], ...Object.entries(shapeOf(inner)).flatMap(([k, f]) => groupsUnder(f, `${path}.${k}`))];
}

describe("the settings' description", () => {
  it("gives every setting a default that its own rule accepts, and the defaults are a valid PATCH", () => {
    expect(SettingsSchema.safeParse(DEFAULT_SETTINGS).success).toBe(true);
    expect(SettingsPatchSchema.safeParse(DEFAULT_SETTINGS).success).toBe(true);
    expect(DEFAULT_SETTINGS.inbox.retentionDays).toBe(90);
    expect(DEFAULT_SETTINGS.safety.hook).toBeNull();
  });

  it("answers each group as the GraphQL object type it names, with exactly its fields that are not sealed and its computed ones", () => {
    const groups = groupsUnder(SettingsSchema);
    expect(groups.length).toBeGreaterThan(20);
    for (const [path, g] of groups) {
      const meta = groupMetaOf(g);
      expect(meta, path).toBeDefined();
      const type = schema.getType(meta!.name);
      expect(isObjectType(type), `${path}: ${meta!.name}`).toBe(true);
      const fields = (type as { getFields(): Record<string, GraphQLField<unknown, unknown>> }).getFields();
      const answered = Object.entries(shapeOf(g))
        .filter(([, f]) => !unwrap(f).meta.sealed)
        .map(([k]) => k);
      expect(Object.keys(fields).sort(), path).toEqual([...answered, ...Object.keys(meta!.computed ?? {})].sort());
      for (const k of answered) {
        const { nullable, optional, meta: m } = unwrap(shapeOf(g)[k]!);
        // a setting that may be null or left out is answered null, unless it is answered with its default
        expect(isNonNullType(fields[k]!.type), `${path}.${k}`).toBe(!(nullable || optional) || m.readDefault !== undefined);
        if (m.description) expect(fields[k]!.description, `${path}.${k}`).toBe(m.description);
      }
    }
  });

  it("takes a PATCH as the input type of each group, with every field it may send (sealed ones in the clear) and nothing required but a new list item's", () => {
    for (const [path, g] of groupsUnder(SettingsPatchSchema)) {
      const meta = groupMetaOf(g);
      expect(meta, path).toBeDefined();
      const type = schema.getType(patchNameOf(meta!));
      expect(isInputObjectType(type), `${path}: ${patchNameOf(meta!)}`).toBe(true);
      const fields = (type as { getFields(): Record<string, GraphQLInputField> }).getFields();
      expect(Object.keys(fields).sort(), path).toEqual(Object.keys(shapeOf(g)).sort());
      for (const [k, f] of Object.entries(shapeOf(g))) {
        const { optional, defaulted } = unwrap(f);
        expect(isNonNullType(fields[k]!.type), `${path}.${k}`).toBe(!optional && !defaulted);
        if (kindOf(unwrap(f).inner) === "object")
          expect(getNamedType(fields[k]!.type).name).toBe(patchNameOf(groupMetaOf(unwrap(f).inner)!));
      }
    }
    const settingsPatch = schema.getType("SettingsPatch") as { getFields(): Record<string, GraphQLInputField> };
    expect(Object.keys(settingsPatch.getFields())).toContain("inbox");
    expect((schema.getType("EmailSettingsPatch") as { getFields(): Record<string, unknown> }).getFields()).toHaveProperty("smtpUrl");
    expect((schema.getType("EmailSettings") as { getFields(): Record<string, unknown> }).getFields()).not.toHaveProperty("smtpUrlEnc");
  });

  it("derives a new setting's default and PATCH from the one place it is written, and refuses one without a default", () => {
    const section = group(
      { name: "ExampleSettings", title: "Example" },
      {
        kept: setting(z.number().int().min(1).max(10), { default: 5, label: "Kept (days)", help: "How long." }),
        mode: setting(z.enum(["a", "b"]), { default: "a" }),
      },
    );
    expect(defaultsOf(z.object({ example: section }))).toEqual({ example: { kept: 5, mode: "a" } });
    const patch = patchOf(z.object({ example: section }));
    expect(patch.safeParse({ example: { kept: 7 } }).success).toBe(true);
    expect(patch.safeParse({ example: { kept: 0 } }).success).toBe(false);
    expect(patch.safeParse({ example: { other: 1 } }).success).toBe(false);
    const without = group({ name: "BrokenSettings" }, { n: z.number() });
    expect(() => defaultsOf(z.object({ broken: without }))).toThrow("setting broken.n has no default");
  });

  it("gives the console the label, unit and help written with each setting its forms show (console/src/settings-text.ts is current)", () => {
    expect(consoleText()).toEqual({ settings: SETTINGS_TEXT, groups: SETTINGS_GROUPS });
    expect(SETTINGS_TEXT["delivery.backoffBaseMs"]).toEqual({
      label: "First retry after (seconds)",
      help: "The wait before the second attempt; each later wait doubles, with some jitter.",
      unit: "ms",
    });
    expect(SETTINGS_TEXT.moderation.label).toBe("Moderation");
    // a group shown as a fieldset of numbers holds numbers only, each with its words
    for (const [g, { fields }] of Object.entries(SETTINGS_GROUPS)) {
      for (const name of fields) {
        const { inner } = unwrap(shapeOf(unwrap(shapeOf(SettingsSchema)[g]!).inner)[name]!);
        expect(kindOf(inner), `${g}.${name}`).toBe("number");
        expect(SETTINGS_TEXT).toHaveProperty([`${g}.${name}`]);
      }
    }
  });
});
