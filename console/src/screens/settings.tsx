// Settings: every tenant setting in one form showing the server's current values; saving sends only
// the fields the operator changed (form-diff.ts), each problem of the answer's `errors` shown beside
// the field it names; allowed origins; identity-secret rotation (the new secret shown once). Identity
// providers are the second view (settings-identity.tsx).
import { useState } from "preact/hooks";
import { gql } from "../api";
import {
  RotateIdentitySecretDocument,
  SettingsDocument,
  UpdateSettingsDocument,
  type AllSettingsFragment,
  type SettingsPatch,
} from "../gql/graphql";
import { ApiError } from "../api";
import { Copy, ErrorMessage, Notice, messageOf, useLoad } from "../ui";
import { changedFields } from "../form-diff";
import { SettingsViews } from "./settings-identity";

type Groups = "delivery" | "replay" | "rateLimits" | "stream" | "retention" | "idempotency";
const NUMBER_GROUPS: { group: Groups; title: string; fields: string[] }[] = [
  {
    group: "delivery",
    title: "Webhook delivery",
    fields: ["maxAttempts", "backoffBaseMs", "attemptTimeoutMs", "breakerThreshold", "breakerCooldownMs", "disableThreshold"],
  },
  { group: "replay", title: "Stream replay", fields: ["maxEvents", "maxAgeSeconds"] },
  {
    group: "rateLimits",
    title: "Rate limits",
    fields: ["requestsPerMinute", "streamConnections", "publishableKeyRequestsPerMinute", "readerRequestsPerMinute"],
  },
  { group: "stream", title: "Streams", fields: ["maxConnectionSeconds", "heartbeatSeconds"] },
  { group: "retention", title: "Retention", fields: ["deliveryLogDays"] },
  { group: "idempotency", title: "Idempotency keys", fields: ["ttlHours"] },
];

function FieldError({ errors, path }: { errors: Record<string, string>; path: string }) {
  const msg = errors[path];
  return msg ? (
    <span class="field-error" id={`err-${path}`}>
      {msg}
    </span>
  ) : null;
}

/** The changed fields' names, nested ones as group.field. */
const changedNames = (patch: Record<string, unknown>): string[] =>
  Object.entries(patch).flatMap(([k, v]) =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? Object.keys(v).map((n) => `${k}.${n}`) : [k],
  );

const describedBy = (errors: Record<string, string>, path: string) => (errors[path] ? `err-${path}` : undefined);

/** A labelled input with the answer's problem for its path beside it. */
function Field({
  label,
  path,
  value,
  errors,
  type = "number",
}: {
  label: string;
  path: string;
  value: string;
  errors: Record<string, string>;
  type?: string;
}) {
  return (
    <div>
      <label>
        {label}
        <input
          name={path}
          type={type}
          defaultValue={value}
          aria-describedby={describedBy(errors, path)}
          aria-invalid={errors[path] ? "true" : undefined}
        />
      </label>
      <FieldError errors={errors} path={path} />
    </div>
  );
}

export function SettingsScreen() {
  const settings = useLoad(() => gql(SettingsDocument));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const s: AllSettingsFragment | undefined = settings.data?.settings;

  const save = (form: HTMLFormElement, current: AllSettingsFragment) => {
    const f = new FormData(form);
    const num = (name: string) => Number(String(f.get(name) ?? "").trim());
    const edited: SettingsPatch = {
      moderation: String(f.get("moderation")),
      editWindowSeconds: num("editWindowSeconds"),
      maxBodyLength: num("maxBodyLength"),
      reactionKinds: String(f.get("reactionKinds") ?? "")
        .split(",")
        .map((k) => k.trim())
        .filter(Boolean),
      allowedOrigins: String(f.get("allowedOrigins") ?? "")
        .split(/\s+/)
        .filter(Boolean),
    };
    for (const g of NUMBER_GROUPS)
      (edited as Record<string, unknown>)[g.group] = Object.fromEntries(g.fields.map((n) => [n, num(`${g.group}.${n}`)]));
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

  return (
    <section aria-labelledby="settings-title">
      <SettingsViews current="general" />
      <h1 id="settings-title">Settings</h1>
      <ErrorMessage error={settings.error ?? error} />
      {notice && <Notice>{notice}</Notice>}
      {s && (
        <form
          class="settings"
          key={JSON.stringify(s)}
          onSubmit={(e) => {
            e.preventDefault();
            save(e.currentTarget, s);
          }}
        >
          <fieldset>
            <legend>Comments</legend>
            <label>
              Moderation
              {/* `selected` on the option: a select has no defaultValue, so the server's value must be marked */}
              <select name="moderation" aria-describedby={describedBy(errors, "moderation")}>
                <option value="post" selected={s.moderation === "post"}>
                  post (visible at once)
                </option>
                <option value="pre" selected={s.moderation === "pre"}>
                  pre (approve first)
                </option>
              </select>
            </label>
            <FieldError errors={errors} path="moderation" />
            <Field
              label="Edit window (seconds, 0 = no limit)"
              path="editWindowSeconds"
              value={String(s.editWindowSeconds)}
              errors={errors}
            />
            <Field label="Maximum body length" path="maxBodyLength" value={String(s.maxBodyLength)} errors={errors} />
            <Field
              label="Reaction kinds (comma-separated)"
              path="reactionKinds"
              value={s.reactionKinds.join(", ")}
              errors={errors}
              type="text"
            />
          </fieldset>
          {NUMBER_GROUPS.map((g) => (
            <fieldset key={g.group}>
              <legend>{g.title}</legend>
              {g.fields.map((n) => (
                <Field
                  key={n}
                  label={n}
                  path={`${g.group}.${n}`}
                  value={String((s[g.group] as Record<string, number>)[n])}
                  errors={errors}
                />
              ))}
            </fieldset>
          ))}
          <fieldset>
            <legend>Browsers</legend>
            <label>
              Allowed origins (one per line)
              <textarea
                name="allowedOrigins"
                rows={3}
                defaultValue={s.allowedOrigins.join("\n")}
                aria-describedby={describedBy(errors, "allowedOrigins")}
                aria-invalid={errors.allowedOrigins ? "true" : undefined}
              />
            </label>
            <FieldError errors={errors} path="allowedOrigins" />
          </fieldset>
          <button type="submit">Save settings</button>
        </form>
      )}
      <h2>Identity secret</h2>
      <p>Your backend signs readers' identity assertions with it. Rotating it takes effect at once.</p>
      {secret ? (
        <div class="secret" role="region" aria-label="The new identity secret">
          <p class="warning">Copy it now: it is shown only this once.</p>
          <p>
            <code class="raw">{secret}</code> <Copy value={secret} />
          </p>
        </div>
      ) : (
        <button
          type="button"
          onClick={() =>
            void gql(RotateIdentitySecretDocument).then(
              (d) => setSecret(d.rotateIdentitySecret.identitySecret),
              (e: unknown) => setError(messageOf(e)),
            )
          }
        >
          Rotate identity secret
        </button>
      )}
    </section>
  );
}
