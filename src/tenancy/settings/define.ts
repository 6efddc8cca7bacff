// How a setting is described, once: its zod schema (the rule), and beside it in `setting(...)` its
// default, the words the GraphQL schema gives it (and so the OpenAPI document, which is read from the
// schema) and the console's label, unit and help. The tree (tree.ts) gathers the sections; its
// defaults and its PATCH schema are derived here, its GraphQL types in src/graphql/settings-types.ts,
// the console's text by `npm run schema:print` (console/src/settings-text.ts).
import { z } from "zod";

/** What a setting says of itself besides its rule. */
export interface SettingMeta {
  /** the default value (a leaf's; an object's is made of its fields' defaults) */
  default?: unknown;
  /** the answer's field: its description in the GraphQL schema */
  description?: string;
  /** the PATCH's field: its description (an enum's, or a list of one's, is its values, "a | b", unless given) */
  patchDescription?: string;
  /** an enum answered as this named GraphQL enum (otherwise a String) */
  enumType?: { name: string; description?: string };
  /** answered as this when the stored setting is absent (the answer's field is then never null) */
  readDefault?: string;
  /** what a PATCH sends for this setting when it is not the setting's own rule made partial */
  patch?: z.ZodType;
  /** a sealed secret (made by `sealed`): stored, never answered, never patched as such */
  sealed?: true;
  /** the console: the label (with its unit in words), a line of help, and "ms" for a setting kept in ms shown in seconds */
  label?: string;
  help?: string;
  unit?: "ms";
  /** the console: an enum's (or a list of one's) values in words, each a label and maybe a line of help, in the order shown */
  options?: Record<string, { label: string; help?: string }>;
  /** the console: a write-only secret's line of help once one is stored (`{shown}`: the masked value the answer gives) */
  storedHelp?: string;
}

/** What an object of settings says of itself: its GraphQL types' names and words, the console's title. */
export interface GroupMeta {
  /** the answer's GraphQL type */
  name: string;
  description?: string;
  /** the PATCH's GraphQL input type (default: name + "Patch") */
  patchName?: string;
  /** the console's title for the group's fieldset */
  title?: string;
  /** fields only a PATCH sends (a secret in the clear, sealed into a `sealed` field) */
  patchOnly?: Record<string, z.ZodType>;
  /** answered fields computed from the stored ones (their resolvers: src/modules/settings/graphql.ts) */
  computed?: Record<string, { type: "String" | "Boolean"; nullable?: true; description?: string }>;
}

const settingMetas = new WeakMap<z.ZodType, SettingMeta>();
const groupMetas = new WeakMap<z.ZodType, GroupMeta>();

// Types only (never present at run time): what a PATCH sends for a setting with its own `patch`, a
// sealed setting, a group's `patchOnly` fields; read by `PatchOf`.
declare const PATCH: unique symbol;
declare const SEALED: unique symbol;
declare const PATCH_ONLY: unique symbol;
type Patched<P> = { readonly [PATCH]: P };
type Sealed = { readonly [SEALED]: true };
type WithPatchOnly<O> = { readonly [PATCH_ONLY]: O };

/** A setting: its rule and what it says of itself. */
export function setting<T extends z.ZodType, P extends z.ZodType = never>(
  schema: T,
  meta: SettingMeta & { patch?: P; sealed?: never },
): [P] extends [never] ? T : T & Patched<P> {
  settingMetas.set(schema, meta);
  return schema as [P] extends [never] ? T : T & Patched<P>;
}

/** A sealed secret: stored, never answered, never patched as such (a PATCH sends it in the clear, in a `patchOnly` field). */
export function sealed<T extends z.ZodType>(schema: T): T & Sealed {
  settingMetas.set(schema, { sealed: true });
  return schema as T & Sealed;
}

/** An object of settings (strict: an unknown member is a problem) named for GraphQL. */
export function group<S extends z.ZodRawShape, O extends Record<string, z.ZodType> = Record<never, z.ZodType>>(
  meta: GroupMeta & { patchOnly?: O },
  shape: S,
) {
  return named(z.object(shape).strict(), meta) as z.ZodObject<S, z.core.$strict> & WithPatchOnly<O>;
}

/** What a PATCH sends for a setting (a group's: any of its fields, each as a PATCH sends it). */
export type PatchOf<F> =
  F extends Patched<infer P extends z.ZodType>
    ? z.output<P>
    : F extends z.ZodObject<infer S>
      ? { [K in keyof S as S[K] extends Sealed ? never : K]?: PatchOf<S[K]> } & (F extends WithPatchOnly<infer O>
          ? { [K in keyof O]?: z.output<O[K]> }
          : unknown)
      : z.output<F>;

/** Names an object schema already made (one with a refinement, a PATCH's own). */
export function named<T extends z.ZodType>(schema: T, meta: GroupMeta): T {
  groupMetas.set(schema, meta);
  return schema;
}

export const groupMetaOf = (schema: z.ZodType): GroupMeta | undefined => groupMetas.get(schema);

/** The GraphQL input type of a group's PATCH (or of a list's item). */
export const patchNameOf = (meta: GroupMeta): string => meta.patchName ?? `${meta.name}Patch`;

/** A field's schema without its wrappers, whether it may be null or left out, and the meta found on any layer (the outer wins). */
export interface Unwrapped {
  inner: z.ZodType;
  nullable: boolean;
  optional: boolean;
  /** whether a zod default fills it */
  defaulted: boolean;
  meta: SettingMeta;
}

export function unwrap(schema: z.ZodType): Unwrapped {
  let s = schema;
  let nullable = false;
  let optional = false;
  let defaulted = false;
  const metas: SettingMeta[] = [];
  for (;;) {
    const m = settingMetas.get(s);
    if (m) metas.push(m);
    const def = (s as unknown as { def: { type: string; innerType?: z.ZodType } }).def;
    if (def.type === "nullable") nullable = true;
    else if (def.type === "optional") optional = true;
    else if (def.type === "default") defaulted = true;
    else break;
    s = def.innerType!;
  }
  return { inner: s, nullable, optional, defaulted, meta: Object.assign({}, ...metas.reverse()) as SettingMeta };
}

/** The kind of a schema, as the GraphQL types and the defaults read it. */
export const kindOf = (s: z.ZodType): string => (s as unknown as { def: { type: string } }).def.type;

const shapeOf = (s: z.ZodType): Record<string, z.ZodType> => (s as z.ZodObject).shape as Record<string, z.ZodType>;

/** The defaults of an object of settings: each field's `default`, an object's made of its fields'. */
export function defaultsOf(schema: z.ZodType, path = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(shapeOf(schema))) {
    const { inner, meta } = unwrap(field);
    if (meta.sealed) continue;
    if ("default" in meta) out[key] = meta.default;
    else if (kindOf(inner) === "object") out[key] = defaultsOf(inner, `${path}${key}.`);
    else throw new Error(`setting ${path}${key} has no default`);
  }
  return out;
}

/**
 * What a PATCH may send for an object of settings: any of its fields; a nested object's fields the
 * same way, a field's own `patch` schema where it has one; sealed fields left out and the group's
 * `patchOnly` ones added.
 */
export function patchOf(schema: z.ZodType): z.ZodType {
  const meta = groupMetas.get(schema);
  const shape: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(shapeOf(schema))) {
    const { inner, meta: m } = unwrap(field);
    if (m.sealed) continue;
    if (m.patch && !settingMetas.has(m.patch)) settingMetas.set(m.patch, { patchDescription: m.patchDescription });
    shape[key] = m.patch ?? (kindOf(inner) === "object" && groupMetas.has(inner) ? patchOf(inner) : field);
  }
  Object.assign(shape, meta?.patchOnly);
  const patch = z.object(shape).partial().strict();
  if (meta) groupMetas.set(patch, { name: patchNameOf(meta), patchName: patchNameOf(meta) });
  return patch;
}

/** An enum's values, as a PATCH's description says them. */
export const enumValues = (s: z.ZodType): readonly string[] => (s as z.ZodEnum).options as readonly string[];
