// One path for a write-only secret that is a single field of a settings section (Akismet's
// `safety.akismet.apiKey`, Bluesky's `bluesky.appPassword`): a PATCH sends it in the clear; it is
// sealed with the app's SecretBox into `<field>Enc`, never answered, masked in the audit log, and
// left out of the changes the audit log lists. `null` removes it; a PATCH that leaves it out keeps
// the stored one. Secrets of another shape (the SMTP URL answered masked, sign-in providers and chat
// alerts keyed by id, the hook's secret made here) keep their own module.
import type { RequestContext } from "../../context/request.js";
import type { SecretBox } from "../../lib/secret-box.js";
import type { Settings, SettingsPatch } from "../../tenancy/settings/tree.js";

export interface SealedField {
  /** the section's path in the settings: ["bluesky"], ["safety", "akismet"] */
  section: readonly string[];
  /** the field a PATCH sends in the clear */
  field: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const enc = (f: SealedField) => `${f.field}Enc`;

/** The value at `path`, or undefined. */
function at(root: unknown, path: readonly string[]): unknown {
  let v = root;
  for (const k of path) v = isObj(v) ? v[k] : undefined;
  return v;
}

/** `root` with `path` replaced by `value` (new objects along the path: the patch's own are never changed). */
function replaced(root: Obj, path: readonly string[], value: Obj): Obj {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  const inner = root[head];
  return { ...root, [head]: rest.length ? replaced(isObj(inner) ? inner : {}, rest, value) : value };
}

/**
 * The stored settings with the PATCH's secret sealed (or removed by null); the stored one kept when
 * the PATCH leaves it out. A section removed (null) has nothing to seal.
 */
export function sealField(box: SecretBox, f: SealedField, stored: Obj, patch: SettingsPatch): Obj {
  const section = at(stored, f.section);
  if (!isObj(section)) return stored;
  const sent = at(patch, [...f.section, f.field]);
  const { [f.field]: _plain, ...rest } = section;
  if (sent === null) delete rest[enc(f)];
  else if (typeof sent === "string") rest[enc(f)] = box.seal(sent);
  return replaced(stored, f.section, rest);
}

/** A PATCH as the audit log records it: the secret masked. */
export function withMaskedField(f: SealedField, patch: SettingsPatch): SettingsPatch {
  const section = at(patch, f.section);
  if (!isObj(section) || typeof section[f.field] !== "string") return patch;
  return replaced(patch as Obj, f.section, { ...section, [f.field]: "****" }) as SettingsPatch;
}

/** Settings without the sealed secret: what the audit log compares. */
export function withoutField(f: SealedField, settings: Settings): Settings {
  const section = at(settings, f.section);
  if (!isObj(section) || !(enc(f) in section)) return settings;
  const { [enc(f)]: _sealed, ...rest } = section;
  return replaced(settings as unknown as Obj, f.section, rest) as unknown as Settings;
}

/** The secret, opened; null when none is stored. */
export function openField(box: SecretBox, f: SealedField, settings: Settings): string | null {
  const sealed = at(at(settings, f.section), [enc(f)]);
  return typeof sealed === "string" && sealed ? box.open(sealed) : null;
}

/**
 * A section's write-only secrets as the settings' PATCH treats them (src/modules/settings/settings.ts
 * runs each in turn): the new value's check before the write (a URL's SSRF guard), its sealing into
 * the stored settings, its mask in the audit log's patch, and the settings without it for the audit
 * log's changes.
 */
export interface SecretSetting {
  check?(ctx: RequestContext, patch: SettingsPatch): Promise<void>;
  seal(box: SecretBox, before: Settings, stored: Obj, patch: SettingsPatch): Obj;
  masked(patch: SettingsPatch): SettingsPatch;
  without(settings: Settings): Settings;
}
