// The settings' GraphQL types, read from their one description (src/tenancy/settings/): an object of
// settings is an object type named by its group (`Settings`, `SafetySettings`, …) and its PATCH an
// input type (`SettingsPatch`, `SafetySettingsPatch`, …); a number is an Int, a list a list, an enum a
// String or the named enum its setting gives; a setting that may be left out is answered null; a
// sealed one is never answered. Values a PATCH sends are checked by the settings' own zod rules (one
// 422 lists every problem), so an enum is a String in a PATCH. Computed fields (`email.smtpUrl`, the
// hook's secret, an alert's masked URL) get their resolvers from src/modules/settings/graphql.ts.
import type { z } from "zod";
import { builder } from "./builder.js";
import type { RequestContext } from "../context/request.js";
import { SettingsPatchSchema, SettingsSchema } from "../tenancy/settings/tree.js";
import { enumValues, groupMetaOf, kindOf, patchNameOf, unwrap, type SettingMeta } from "../tenancy/settings/define.js";

type Row = Record<string, unknown>;

/** A computed field's resolver, named `<Type>.<field>`. */
export type ComputedResolvers = Record<string, (parent: Row, ctx: RequestContext) => unknown>;

type Nullability = boolean;
/** What the generated fields need of Pothos' field builders (their typed forms want a literal field name). */
interface LooseObjectFields {
  field(options: {
    type: unknown;
    nullable?: Nullability;
    description?: string;
    resolve: (p: Row, a: unknown, ctx: RequestContext) => unknown;
  }): unknown;
}
interface LooseInputFields {
  field(options: { type: unknown; required?: boolean; description?: string }): unknown;
}

const defOf = (s: z.ZodType) => (s as unknown as { def: { element: z.ZodType; in: z.ZodType; options: z.ZodType[] } }).def;

const enumRefs = new Map<string, { ref: unknown; values: readonly string[] }>();

/** A setting's named enum (`ReplyEmails`, `VoteMode`, …): made once, from the setting's values. */
function enumRef(inner: z.ZodType, meta: SettingMeta): unknown {
  const { name, description } = meta.enumType!;
  const made = enumRefs.get(name);
  // two settings may answer one enum (Moderation): with the same values
  if (made) {
    if ([...made.values].sort().join() !== [...enumValues(inner)].sort().join())
      throw new Error(`settings enum ${name} named with other values`);
    return made.ref;
  }
  const ref = builder.enumType(name, { ...(description ? { description } : {}), values: enumValues(inner) });
  enumRefs.set(name, { ref, values: enumValues(inner) });
  return ref;
}

/** The named enums of the settings, by name. */
function findEnums(schema: z.ZodType, out = new Map<string, { inner: z.ZodType; meta: SettingMeta }>()) {
  const { inner, meta } = unwrap(schema);
  const kind = kindOf(inner);
  if (kind === "object") for (const f of Object.values((inner as z.ZodObject).shape)) findEnums(f as z.ZodType, out);
  else if (kind === "array") {
    const element = unwrap(defOf(inner).element);
    if (kindOf(element.inner) === "enum" && meta.enumType) out.set(meta.enumType.name, { inner: element.inner, meta });
    else findEnums(defOf(inner).element, out);
  } else if (kind === "enum" && meta.enumType) out.set(meta.enumType.name, { inner, meta });
  return out;
}

/** A settings enum other rooms answer too (`ReplyEmails`: a reader's own choice). */
export function settingsEnum(name: string) {
  const found = findEnums(SettingsSchema).get(name);
  if (!found) throw new Error(`no settings enum ${name}`);
  return enumRef(found.inner, found.meta) as ReturnType<typeof builder.enumType<string, readonly string[]>>;
}

/** Whether a schema (a union, or what a pipe reads) is a list of strings. */
const isStringList = (s: z.ZodType): boolean =>
  kindOf(s) === "pipe"
    ? isStringList(defOf(s).in)
    : kindOf(s) === "union"
      ? defOf(s).options.some((o) => kindOf(o) === "array")
      : kindOf(s) === "array";

export function createSettingsTypes(resolvers: ComputedResolvers) {
  const objects = new Map<string, unknown>();
  const inputs = new Map<string, unknown>();

  function outputType(inner: z.ZodType, meta: SettingMeta): unknown {
    switch (kindOf(inner)) {
      case "object":
        return objectRef(inner);
      case "array": {
        const element = unwrap(defOf(inner).element).inner;
        if (kindOf(element) === "object") return [objectRef(element)];
        return [kindOf(element) === "enum" && meta.enumType ? enumRef(element, meta) : "String"];
      }
      case "enum":
        return meta.enumType ? enumRef(inner, meta) : "String";
      case "number":
        return "Int";
      case "boolean":
        return "Boolean";
      default:
        return isStringList(inner) ? ["String"] : "String";
    }
  }

  function objectRef(schema: z.ZodType): unknown {
    const group = groupMetaOf(schema);
    if (!group) throw new Error("an object of settings without a name (group or named in src/tenancy/settings/)");
    let ref = objects.get(group.name);
    if (ref) return ref;
    // the fields' types are made first (a nested group's type with them), so that every type exists once this returns
    const specs = Object.entries((schema as z.ZodObject).shape).flatMap(([key, field]) => {
      const { inner, nullable, optional, meta } = unwrap(field as z.ZodType);
      if (meta.sealed) return [];
      const fallback = meta.readDefault ?? null;
      return [
        {
          key,
          type: outputType(inner, meta),
          nullable: (nullable || optional) && meta.readDefault === undefined,
          ...(meta.description ? { description: meta.description } : {}),
          resolve: (p: Row) => p[key] ?? fallback,
        },
      ];
    });
    for (const [key, c] of Object.entries(group.computed ?? {})) {
      const resolve = resolvers[`${group.name}.${key}`];
      if (!resolve) throw new Error(`no resolver for the computed setting ${group.name}.${key}`);
      specs.push({
        key,
        type: c.type,
        nullable: c.nullable ?? false,
        ...(c.description ? { description: c.description } : {}),
        resolve: (p: Row, _a?: unknown, ctx?: RequestContext) => resolve(p, ctx!),
      } as (typeof specs)[number]);
    }
    ref = builder.objectRef<Row>(group.name).implement({
      ...(group.description ? { description: group.description } : {}),
      fields: (t) => {
        const loose = t as unknown as LooseObjectFields;
        return Object.fromEntries(specs.map(({ key, ...spec }) => [key, loose.field(spec)])) as never;
      },
    });
    objects.set(group.name, ref);
    return ref;
  }

  function inputType(inner: z.ZodType): unknown {
    switch (kindOf(inner)) {
      case "object":
        return inputRef(inner);
      case "array": {
        const element = unwrap(defOf(inner).element).inner;
        return [kindOf(element) === "object" ? inputRef(element) : "String"];
      }
      case "number":
        return "Int";
      case "boolean":
        return "Boolean";
      default:
        return isStringList(inner) ? ["String"] : "String";
    }
  }

  /** A PATCH's description: its own, or an enum's values ("a | b"). */
  function patchDescription(inner: z.ZodType, meta: SettingMeta): string | undefined {
    if (meta.patchDescription) return meta.patchDescription;
    const element = kindOf(inner) === "array" ? unwrap(defOf(inner).element).inner : inner;
    return kindOf(element) === "enum" ? enumValues(element).join(" | ") : undefined;
  }

  function inputRef(schema: z.ZodType): unknown {
    const group = groupMetaOf(schema);
    if (!group) throw new Error("an object of a settings PATCH without a name (group or named in src/tenancy/settings/)");
    const name = patchNameOf(group);
    let ref = inputs.get(name);
    if (ref) return ref;
    const specs = Object.entries((schema as z.ZodObject).shape).map(([key, field]) => {
      const { inner, optional, defaulted, meta } = unwrap(field as z.ZodType);
      const description = patchDescription(inner, meta);
      return { key, type: inputType(inner), ...(optional || defaulted ? {} : { required: true }), ...(description ? { description } : {}) };
    });
    ref = builder.inputType(name, {
      fields: (t) => {
        const loose = t as unknown as LooseInputFields;
        return Object.fromEntries(specs.map(({ key, ...spec }) => [key, loose.field(spec)])) as never;
      },
    });
    inputs.set(name, ref);
    return ref;
  }

  const Settings = objectRef(SettingsSchema) as ReturnType<typeof builder.objectRef<Row>>;
  const SettingsPatch = inputRef(SettingsPatchSchema) as ReturnType<typeof builder.inputRef<Row>>;
  return {
    Settings,
    SettingsPatch,
    /** a settings object type by name (`FormattingSettings`), for a view of some of them */
    object: (name: string) => objects.get(name) as ReturnType<typeof builder.objectRef<Row>>,
  };
}
