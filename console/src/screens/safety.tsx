// Safety: the tenant's trust-and-safety settings (`safety`, docs/safety.md) — banned and suspect word
// lists (one entry per line, counted against the 2,000 allowed), maxLinks, newReaderHold, the report
// threshold and action, the moderation hook and Akismet (./safety-akismet.tsx). Saving sends only the
// safety fields the operator changed (form-diff.ts) through the settings mutation, so nothing else
// (moderation among them) is written back; each problem of the answer is shown beside the field it names.
// The settings' labels and help are the settings' description's (src/tenancy/settings/safety.ts,
// through console/src/settings-text.ts); the fieldsets that group them ("Word lists", "Thresholds") are the form's.
import { useState } from "preact/hooks";
import { ApiError, gql } from "../api";
import { SafetySettingsDocument, UpdateSafetyDocument, type SafetyFieldsFragment, type SafetySettingsPatch } from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useLoad } from "../ui";
import { changedFields } from "../form-diff";
import { HookSecret, HookTest } from "./safety-hook";
import { AkismetFields, akismetSaved, readAkismet, type AkismetEdit } from "./safety-akismet";
import { FieldError, type Errors } from "../components/fields";
import { optionsOf, textOf } from "./settings-fields";

type Safety = SafetyFieldsFragment;
/** The settings as the form compares them: Akismet's key only when one is typed. */
type Edited = Omit<Safety, "akismet"> & { akismet: AkismetEdit | null };

export const MAX_WORDS = 2000;
/** A text area's entries: one a line, trimmed, empty lines left out. */
const entries = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);

/** The changed fields' names, nested ones as group.field (hook.url). */
const changedNames = (patch: Record<string, unknown>, prefix = ""): string[] =>
  Object.entries(patch).flatMap(([k, v]) =>
    typeof v === "object" && v !== null && !Array.isArray(v)
      ? changedNames(v as Record<string, unknown>, `${prefix}${k}.`)
      : [`${prefix}${k}`],
  );

/**
 * The answer's problems by the field they name (`safety.bannedWords[3]` → `bannedWords`, saying which
 * line and entry); several for one field are joined.
 */
function errorsByField(fields: { path: string; message: string }[], sent: { bannedWords: string[]; suspectWords: string[] }): Errors {
  const out: Errors = {};
  for (const f of fields) {
    const m = /^(?:safety\.)?([A-Za-z.]+?)(?:\[(\d+)\])?$/.exec(f.path);
    const key = m?.[1] ?? f.path;
    const i = m?.[2] === undefined ? undefined : Number(m[2]);
    const list = key === "bannedWords" || key === "suspectWords" ? sent[key] : undefined;
    const entry = list?.[i ?? -1];
    const shown = entry && entry.length > 40 ? `${entry.slice(0, 40)}…` : entry;
    const message = i === undefined ? f.message : `entry ${i + 1}${shown ? ` (“${shown}”)` : ""}: ${f.message}`;
    out[key] = out[key] ? `${out[key]}; ${message}` : message;
  }
  return out;
}

const invalid = (errors: Errors, path: string) => ({
  "aria-invalid": errors[path] ? ("true" as const) : undefined,
});
const described = (errors: Errors, path: string, ...more: string[]) =>
  [...more, ...(errors[path] ? [`err-${path}`] : [])].join(" ") || undefined;

/** A word list as a text area, one entry a line, with its count against the limit. */
function WordList({ name, label, hint, words, errors }: { name: string; label: string; hint: string; words: string[]; errors: Errors }) {
  const [count, setCount] = useState(words.length);
  const over = count > MAX_WORDS;
  return (
    <div class="word-list">
      <label>
        {label}
        <textarea
          name={name}
          rows={10}
          spellcheck={false}
          defaultValue={words.join("\n")}
          onInput={(e) => setCount(entries(e.currentTarget.value).length)}
          aria-describedby={described(errors, name, `${name}-count`)}
          {...invalid(errors, name)}
        />
      </label>
      <span id={`${name}-count`} class={over ? "field-error" : "hint"}>
        {count.toLocaleString("en")} of {MAX_WORDS.toLocaleString("en")} entries{over ? ": too many" : ""} · {hint}
      </span>
      <FieldError errors={errors} path={name} />
    </div>
  );
}

function NumberField({ label, name, value, errors, hint }: { label: string; name: string; value: string; errors: Errors; hint?: string }) {
  return (
    <div>
      <label>
        {label}
        <input
          name={name}
          type="number"
          min={0}
          defaultValue={value}
          aria-describedby={described(errors, name, ...(hint ? [`${name}-hint`] : []))}
          {...invalid(errors, name)}
        />
      </label>
      {hint && (
        <span id={`${name}-hint`} class="hint">
          {hint}
        </span>
      )}
      <FieldError errors={errors} path={name} />
    </div>
  );
}

/** What the form says, in the settings' shape (hook null when its URL is empty; akismet null when it is off). */
function read(form: HTMLFormElement): Edited {
  const f = new FormData(form);
  const text = (n: string) => String(f.get(n) ?? "").trim();
  const int = (n: string) => (text(n) === "" ? null : Number(text(n)));
  const url = text("hook.url");
  return {
    bannedWords: entries(String(f.get("bannedWords") ?? "")),
    suspectWords: entries(String(f.get("suspectWords") ?? "")),
    maxLinks: int("maxLinks"),
    newReaderHold: int("newReaderHold") ?? 0,
    reportThreshold: int("reportThreshold") ?? 0,
    reportAction: text("reportAction") as Safety["reportAction"],
    hook: url
      ? { url, timeoutMs: int("hook.timeoutMs") ?? 1500, onTimeout: text("hook.onTimeout") as NonNullable<Safety["hook"]>["onTimeout"] }
      : null,
    akismet: readAkismet(f),
  };
}

export function SafetyScreen() {
  const loaded = useLoad(() => gql(SafetySettingsDocument));
  const [errors, setErrors] = useState<Errors>({});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  // each save renews the form: a key typed in is not kept in it
  const [saves, setSaves] = useState(0);
  const s = loaded.data?.settings;

  const save = (form: HTMLFormElement, current: Safety) => {
    const edited = read(form);
    // only what the operator changed: a value shown but left alone is never written back
    const patch = changedFields({ ...current, akismet: akismetSaved(current.akismet) }, edited) as SafetySettingsPatch;
    setErrors({});
    setError(null);
    setNotice(null);
    if (Object.keys(patch).length === 0) {
      setNotice("Nothing changed: no setting was saved.");
      return;
    }
    setBusy(true);
    gql(UpdateSafetyDocument, { input: { safety: patch } })
      .then(
        (d) => {
          const { moderation, safety } = d.updateSettings;
          const { secret: shown, ...hook } = safety.hook ?? { secret: null };
          // the secret is in this answer only: shown once, never kept with the settings
          loaded.setData({ settings: { moderation, safety: { ...safety, hook: safety.hook ? (hook as Safety["hook"]) : null } } });
          if (shown) setSecret(shown);
          setSaves((n) => n + 1);
          setNotice(`Safety settings saved: ${changedNames(patch).join(", ")}.`);
        },
        (e: unknown) => {
          const fields = e instanceof ApiError ? e.fields : [];
          setError(fields.length ? "Some settings are not valid; see the messages beside them." : messageOf(e));
          setErrors(errorsByField(fields, edited));
        },
      )
      .finally(() => setBusy(false));
  };

  return (
    <section aria-labelledby="safety-title">
      <h1 id="safety-title">Safety</h1>
      <p class="hint">
        Rules applied to every new and edited comment before a person sees it. They only make the outcome stricter
        {s ? (s.moderation === "pre" ? ": this tenant also holds every comment for approval (pre-moderation)." : ".") : "."}
      </p>
      <ErrorMessage error={loaded.error ?? error} />
      {notice && <Notice>{notice}</Notice>}
      {secret && <HookSecret secret={secret} onDone={() => setSecret(null)} />}
      {s && (
        <form
          class="settings safety"
          aria-labelledby="safety-title"
          key={`${saves}:${JSON.stringify(s.safety)}`}
          onSubmit={(e) => {
            e.preventDefault();
            save(e.currentTarget, s.safety);
          }}
        >
          <fieldset>
            <legend>Word lists</legend>
            <p class="hint">
              Whole words, whatever their case, accents, look-alike letters, leetspeak or spacing (s.p.a.m). An entry may be a few words
              (buy now).
            </p>
            <div class="word-lists">
              <WordList
                name="bannedWords"
                label={textOf("safety.bannedWords").label}
                hint={textOf("safety.bannedWords").help}
                words={s.safety.bannedWords}
                errors={errors}
              />
              <WordList
                name="suspectWords"
                label={textOf("safety.suspectWords").label}
                hint={textOf("safety.suspectWords").help}
                words={s.safety.suspectWords}
                errors={errors}
              />
            </div>
          </fieldset>
          <fieldset>
            <legend>Thresholds</legend>
            <NumberField
              label={textOf("safety.maxLinks").label}
              name="maxLinks"
              value={s.safety.maxLinks === null ? "" : String(s.safety.maxLinks)}
              errors={errors}
              hint={textOf("safety.maxLinks").help}
            />
            <NumberField
              label={textOf("safety.newReaderHold").label}
              name="newReaderHold"
              value={String(s.safety.newReaderHold)}
              errors={errors}
              hint={textOf("safety.newReaderHold").help}
            />
            <NumberField
              label={textOf("safety.reportThreshold").label}
              name="reportThreshold"
              value={String(s.safety.reportThreshold)}
              errors={errors}
              hint={textOf("safety.reportThreshold").help}
            />
            <label>
              {textOf("safety.reportAction").label}
              {/* `selected` on the option: a select has no defaultValue, so the server's value must be marked */}
              <select name="reportAction" aria-describedby={described(errors, "reportAction")} {...invalid(errors, "reportAction")}>
                {optionsOf("safety.reportAction").map(([value, o]) => (
                  <option key={value} value={value} selected={s.safety.reportAction === value}>
                    {o.label}
                  </option>
                ))}
              </select>
            </label>
            <FieldError errors={errors} path="reportAction" />
          </fieldset>
          <fieldset>
            <legend>{textOf("safety.hook").label}</legend>
            <p class="hint" id="hook-hint">
              {textOf("safety.hook").help}
            </p>
            <div>
              <label>
                {textOf("safety.hook.url").label}
                <input
                  name="hook.url"
                  type="url"
                  placeholder="https://moderation.example.com/check"
                  defaultValue={s.safety.hook?.url ?? ""}
                  aria-describedby={described(errors, "hook.url", "hook-hint")}
                  {...invalid(errors, "hook.url")}
                />
              </label>
              <FieldError errors={errors} path="hook.url" />
            </div>
            <NumberField
              label={textOf("safety.hook.timeoutMs").label}
              name="hook.timeoutMs"
              value={String(s.safety.hook?.timeoutMs ?? 1500)}
              errors={errors}
              hint={textOf("safety.hook.timeoutMs").help}
            />
            <label>
              {textOf("safety.hook.onTimeout").label}
              <select name="hook.onTimeout" aria-describedby={described(errors, "hook.onTimeout")} {...invalid(errors, "hook.onTimeout")}>
                {(["hold", "approve", "reject"] as const).map((v) => (
                  <option key={v} value={v} selected={(s.safety.hook?.onTimeout ?? "hold") === v}>
                    {v}
                  </option>
                ))}
              </select>
            </label>
            <FieldError errors={errors} path="hook.onTimeout" />
            <FieldError errors={errors} path="hook" />
            <HookTest saved={s.safety.hook} />
          </fieldset>
          <AkismetFields saved={s.safety.akismet} errors={errors} />
          <button type="submit" disabled={busy}>
            Save safety settings
          </button>
        </form>
      )}
    </section>
  );
}
