// The pieces the settings forms share (General, settings.tsx; Delivery & limits, settings-delivery.tsx):
// the number settings in groups, each with a label in words and its unit and a line of help, written
// with the setting itself in src/tenancy/settings/ (settings kept in ms are shown in seconds); a labelled field with its help and the answer's problem beside it;
// and the save: only the fields the operator changed (form-diff.ts), each problem of the answer's
// `errors` kept by the path it names, the outcome beside the Save button.
import { useState } from "preact/hooks";
import { ApiError, gql } from "../api";
import { SettingsDocument, UpdateSettingsDocument, type AllSettingsFragment, type SettingsPatch } from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useLoad } from "../ui";
import { changedFields } from "../form-diff";
import { FieldError } from "../components/fields";
import { SETTINGS_GROUPS, SETTINGS_TEXT } from "../settings-text";

/** The groups of number settings, as the settings' description names them (console/src/settings-text.ts, generated). */
export type Groups = keyof typeof SETTINGS_GROUPS;

/** A setting's path, as the settings' description names it (`editWindowSeconds`, `delivery.maxAttempts`). */
export type SettingPath = keyof typeof SETTINGS_TEXT;

/**
 * A setting's label (with its unit in words) and line of help, written with the setting (src/tenancy/settings/);
 * a list's items' settings by the list's path (`signIn.oidc.clientId`). What a setting has (a help, options) its type says.
 */
export const textOf = <P extends SettingPath>(path: P): (typeof SETTINGS_TEXT)[P] => SETTINGS_TEXT[path];

/** An enum's values in words, in the order the description gives them. */
export const optionsOf = <P extends { [K in SettingPath]: (typeof SETTINGS_TEXT)[K] extends { options: object } ? K : never }[SettingPath]>(
  path: P,
) =>
  Object.entries(SETTINGS_TEXT[path].options) as [keyof (typeof SETTINGS_TEXT)[P]["options"] & string, { label: string; help?: string }][];

/** A write-only secret's line of help: once one is stored, what it says then (`{shown}`: the masked value). */
export const secretHelp = (
  path: { [K in SettingPath]: (typeof SETTINGS_TEXT)[K] extends { storedHelp: string } ? K : never }[SettingPath],
  stored: boolean,
  shown = "",
): string => (stored ? SETTINGS_TEXT[path].storedHelp.replace("{shown}", shown) : SETTINGS_TEXT[path].help);

/** A number setting as the form shows it: a label in words with its unit, a line of help, and (for a setting kept in ms) the factor seconds are multiplied by. */
interface NumberField {
  name: string;
  label: string;
  help: string;
  /** the setting is kept in milliseconds and shown in seconds */
  ms?: true;
}

/** The number settings in groups, with their words from the settings' description. */
export const NUMBER_GROUPS: { group: Groups; title: string; fields: NumberField[] }[] = Object.entries(SETTINGS_GROUPS).map(
  ([group, g]) => ({
    group: group as Groups,
    title: g.title,
    fields: g.fields.map((name: string) => {
      const text = SETTINGS_TEXT[`${group}.${name}` as SettingPath] as { label: string; help: string; unit?: "ms" };
      return { name, label: text.label, help: text.help, ...(text.unit === "ms" ? { ms: true as const } : {}) };
    }),
  }),
);

/** The changed fields' names, nested ones as group.field. */
export const changedNames = (patch: Record<string, unknown>): string[] =>
  Object.entries(patch).flatMap(([k, v]) =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? Object.keys(v).map((n) => `${k}.${n}`) : [k],
  );

/** The field's problem (when the answer named one) and its line of help, as aria-describedby names them. */
export const describedBy = (errors: Record<string, string>, path: string, help = false) =>
  [errors[path] ? `err-${path}` : null, help ? `help-${path}` : null].filter(Boolean).join(" ") || undefined;

export function Help({ path, children }: { path: string; children: string }) {
  return (
    <span class="hint field-help" id={`help-${path}`}>
      {children}
    </span>
  );
}

/** A labelled input with a line of help and the answer's problem for its path beside it. */
export function Field({
  label,
  path,
  value,
  errors,
  help,
  type = "number",
  step,
}: {
  label: string;
  path: string;
  value: string;
  errors: Record<string, string>;
  help: string;
  type?: string;
  step?: string;
}) {
  return (
    <div class="field">
      <label>
        {label}
        <input
          name={path}
          type={type}
          step={step}
          defaultValue={value}
          aria-describedby={describedBy(errors, path, true)}
          aria-invalid={errors[path] ? "true" : undefined}
        />
      </label>
      <FieldError errors={errors} path={path} />
      <Help path={path}>{help}</Help>
    </div>
  );
}

/** A setting kept in ms, in seconds for the form (1500 → "1.5"); and back. */
export const toSeconds = (ms: number) => String(ms / 1000);
export const toMs = (seconds: number) => Math.round(seconds * 1000);

/** The groups' inputs as a patch's values (ms settings from seconds). */
export function numberGroupsOf(f: FormData, groups: typeof NUMBER_GROUPS): Partial<SettingsPatch> {
  const num = (name: string) => Number(String(f.get(name) ?? "").trim());
  return Object.fromEntries(
    groups.map((g) => [
      g.group,
      Object.fromEntries(
        g.fields.map((x) => {
          const v = num(`${g.group}.${x.name}`);
          return [x.name, x.ms ? toMs(v) : v];
        }),
      ),
    ]),
  );
}

/** The groups' fieldsets, showing the server's values. */
export function NumberGroups({
  groups,
  s,
  errors,
}: {
  groups: typeof NUMBER_GROUPS;
  s: AllSettingsFragment;
  errors: Record<string, string>;
}) {
  return (
    <>
      {groups.map((g) => (
        <fieldset key={g.group}>
          <legend>{g.title}</legend>
          {g.fields.map((f) => {
            const value = (s[g.group] as Record<string, number>)[f.name]!;
            return (
              <Field
                key={f.name}
                label={f.label}
                path={`${g.group}.${f.name}`}
                value={f.ms ? toSeconds(value) : String(value)}
                step={f.ms ? "any" : undefined}
                errors={errors}
                help={f.help}
              />
            );
          })}
        </fieldset>
      ))}
    </>
  );
}

/** The tenant's settings, and a save that sends only what the form changed and keeps the answer's problems by field. */
export function useSettingsForm() {
  const settings = useLoad(() => gql(SettingsDocument));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const save = (current: AllSettingsFragment, edited: SettingsPatch) => {
    // only what the operator changed: a value shown but left alone is never written back
    const patch = changedFields(current, edited);
    setErrors({});
    setError(null);
    setNotice(null);
    if (Object.keys(patch).length === 0) {
      setNotice("Nothing changed: no setting was saved.");
      return;
    }
    gql(UpdateSettingsDocument, { input: patch }).then(
      (d) => {
        settings.setData({ settings: d.updateSettings });
        setNotice(`Settings saved: ${changedNames(patch).join(", ")}.`);
      },
      (e: unknown) => {
        setError(e instanceof ApiError && e.fields.length ? "Some settings are not valid; see the messages beside them." : messageOf(e));
        if (e instanceof ApiError) setErrors(Object.fromEntries(e.fields.map((x) => [x.path.replace(/\[\d+\]$/, ""), x.message])));
      },
    );
  };
  /** The Save button with what the save did beside it. */
  const saveBar = (
    <div class="save-bar">
      <button type="submit">Save settings</button>
      <ErrorMessage error={error} />
      {notice && <Notice>{notice}</Notice>}
    </div>
  );
  return { settings, s: settings.data?.settings, errors, save, saveBar };
}
