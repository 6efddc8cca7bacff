// Stored overrides → the full settings: merged over the defaults, checked, and a stored value a rule
// now refuses dropped alone; a PATCH merged into the stored overrides.
import { DEFAULT_SETTINGS, SettingsSchema, type Settings, type SettingsPatch } from "./tree.js";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function deepMerge<T>(base: T, over: unknown): T {
  if (!isObject(base) || !isObject(over)) return (over === undefined ? base : over) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    out[k] = isObject(out[k]) && isObject(v) ? deepMerge(out[k], v) : v;
  }
  return out as T;
}

/** Resolved settings per stored JSON object: a cached tenant row's settings are parsed once. */
const resolved = new WeakMap<object, Settings>();

/**
 * Stored overrides (JSON column) → full settings. A stored value that a rule now refuses (one
 * written before the rule: an SMTP URL with a query, a sender with a line break) falls back to its
 * default alone — the smallest stored member holding it is dropped — so the tenant keeps every other
 * setting; what still does not resolve falls back to the defaults. The result is shared and must not
 * be changed by the caller.
 */
export function resolveSettings(stored: unknown): Settings {
  if (stored !== null && typeof stored === "object") {
    const hit = resolved.get(stored);
    if (hit) return hit;
  }
  const parsed = checkSettings(stored);
  const settings = parsed.success ? parsed.data : (salvageSettings(stored, parsed.error.issues) ?? DEFAULT_SETTINGS);
  if (stored !== null && typeof stored === "object") resolved.set(stored, settings);
  return settings;
}

/** The stored overrides without the members the issues point at (each the smallest stored one holding it), resolved; null when that does not resolve either. */
function salvageSettings(stored: unknown, first: readonly { path: readonly PropertyKey[] }[]): Settings | null {
  if (!isObject(stored)) return null;
  const copy = structuredClone(stored) as Record<string, unknown>;
  let issues = first;
  for (let round = 0; round < 10; round++) {
    let removed = false;
    // the deepest paths first, so that removing an array's element shifts no index still to come
    const paths = issues.map((i) => i.path).sort((a, b) => b.length - a.length || indexOf(b) - indexOf(a));
    for (const path of paths) {
      for (let n = path.length; n > 0; n--) {
        if (removeMember(copy, path.slice(0, n))) {
          removed = true;
          break;
        }
      }
    }
    if (!removed) return null;
    const again = checkSettings(copy);
    if (again.success) return again.data;
    issues = again.error.issues;
  }
  return null;
}

const indexOf = (path: readonly PropertyKey[]): number => (typeof path.at(-1) === "number" ? (path.at(-1) as number) : -1);

/** Removes the member at `path` from `root` (an array's element is spliced out); whether there was one. */
function removeMember(root: Record<string, unknown>, path: readonly PropertyKey[]): boolean {
  let node: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node) && !Array.isArray(node)) return false;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  const last = path[path.length - 1]!;
  if (Array.isArray(node) && typeof last === "number" && last < node.length) {
    node.splice(last, 1);
    return true;
  }
  if (isObject(node) && typeof last === "string" && Object.hasOwn(node, last)) {
    delete node[last];
    return true;
  }
  return false;
}

/** Stored overrides merged over the defaults and validated: the full settings, or every problem. */
export function checkSettings(stored: unknown) {
  return SettingsSchema.safeParse(deepMerge(DEFAULT_SETTINGS, stored ?? {}));
}

export function applySettingsPatch(stored: unknown, patch: SettingsPatch): Record<string, unknown> {
  return deepMerge(isObject(stored) ? stored : {}, patch) as Record<string, unknown>;
}
