// Sending only what the operator changed: a form's values compared with the values the server gave,
// field by field (nested groups such as `delivery` field by field too). A field the form shows but
// the operator left alone is never sent back, so a form cannot overwrite what it did not change.
type Values = Record<string, unknown>;

const isGroup = (v: unknown): v is Values => typeof v === "object" && v !== null && !Array.isArray(v);
/** Equal as JSON; a missing value and null are the same (an override that is not set). */
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The fields of `edited` whose value differs from `server`'s; groups keep only their changed fields. */
export function changedFields<T extends Values>(server: Values, edited: T): Partial<T> {
  const out: Values = {};
  for (const [k, v] of Object.entries(edited)) {
    const was = server[k];
    if (isGroup(v) && (isGroup(was) || was == null)) {
      const inner = changedFields(isGroup(was) ? was : {}, v);
      if (Object.keys(inner).length > 0) out[k] = inner;
    } else if (!same(was, v)) out[k] = v;
  }
  return out as Partial<T>;
}
