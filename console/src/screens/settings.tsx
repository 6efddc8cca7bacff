// Settings: every tenant setting in one form, each problem of the answer's `errors` shown beside the
// field it names; allowed origins; identity-secret rotation (the new secret shown once).
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

  const save = (form: HTMLFormElement) => {
    const f = new FormData(form);
    const num = (name: string) => Number(String(f.get(name) ?? "").trim());
    const patch: SettingsPatch = {
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
      (patch as Record<string, unknown>)[g.group] = Object.fromEntries(g.fields.map((n) => [n, num(`${g.group}.${n}`)]));
    setErrors({});
    setError(null);
    setNotice(null);
    gql(UpdateSettingsDocument, { input: patch }).then(
      (d) => {
        settings.setData({ settings: d.updateSettings });
        setNotice("Settings saved.");
      },
      (e: unknown) => {
        setError(e instanceof ApiError && e.fields.length ? "Some settings are not valid; see the messages beside them." : messageOf(e));
        if (e instanceof ApiError) setErrors(Object.fromEntries(e.fields.map((x) => [x.path.replace(/\[\d+\]$/, ""), x.message])));
      },
    );
  };

  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <ErrorMessage error={settings.error ?? error} />
      {notice && <Notice>{notice}</Notice>}
      {s && (
        <form
          class="settings"
          key={JSON.stringify(s)}
          onSubmit={(e) => {
            e.preventDefault();
            save(e.currentTarget);
          }}
        >
          <fieldset>
            <legend>Comments</legend>
            <label>
              Moderation
              <select name="moderation" defaultValue={s.moderation} aria-describedby={describedBy(errors, "moderation")}>
                <option value="post">post (visible at once)</option>
                <option value="pre">pre (approve first)</option>
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
