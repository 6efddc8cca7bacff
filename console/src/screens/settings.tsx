// Settings: every tenant setting in one form showing the server's current values, each with a label in
// words and its unit and a line of help (settings kept in ms are shown in seconds); saving sends only
// the fields the operator changed (form-diff.ts), each problem of the answer's `errors` shown beside
// the field it names and the outcome beside the Save button; allowed origins; identity-secret rotation,
// asked first, saying how long the old secret keeps working (the new secret shown once). Identity
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

type Groups = "delivery" | "replay" | "rateLimits" | "stream" | "retention" | "inbox" | "idempotency";

/** A number setting as the form shows it: a label in words with its unit, a line of help, and (for a setting kept in ms) the factor seconds are multiplied by. */
interface NumberField {
  name: string;
  label: string;
  help: string;
  /** the setting is kept in milliseconds and shown in seconds */
  ms?: true;
}

const NUMBER_GROUPS: { group: Groups; title: string; fields: NumberField[] }[] = [
  {
    group: "delivery",
    title: "Webhook delivery",
    fields: [
      {
        name: "maxAttempts",
        label: "Attempts per event",
        help: "How many times an event is tried at an endpoint before it is given up (1–20).",
      },
      {
        name: "backoffBaseMs",
        label: "First retry after (seconds)",
        help: "The wait before the second attempt; each later wait doubles, with some jitter.",
        ms: true,
      },
      {
        name: "attemptTimeoutMs",
        label: "Attempt timeout (seconds)",
        help: "How long one attempt waits for the endpoint's answer (0.1–60).",
        ms: true,
      },
      {
        name: "breakerThreshold",
        label: "Failures before pausing",
        help: "Failed attempts in a row that pause an endpoint's deliveries for a while.",
      },
      { name: "breakerCooldownMs", label: "Pause (seconds)", help: "How long a paused endpoint waits before one trial attempt.", ms: true },
      {
        name: "disableThreshold",
        label: "Failures before disabling",
        help: "Failed attempts in a row after which an endpoint is disabled until you enable it.",
      },
    ],
  },
  {
    group: "replay",
    title: "Stream replay",
    fields: [
      {
        name: "maxEvents",
        label: "Events kept for replay (per discussion)",
        help: "A reconnecting stream catches up on at most this many events (0: none).",
      },
      {
        name: "maxAgeSeconds",
        label: "Replay window (seconds)",
        help: "Events older than this are not replayed to a reconnecting stream.",
      },
    ],
  },
  {
    group: "rateLimits",
    title: "Rate limits",
    fields: [
      { name: "requestsPerMinute", label: "Requests per minute, per API key", help: "Past it, requests get 429 with Retry-After." },
      {
        name: "streamConnections",
        label: "Open streams (whole tenant)",
        help: "Streams open at once across every instance; past it, new ones get 429.",
      },
      {
        name: "publishableKeyRequestsPerMinute",
        label: "Requests per minute, per publishable key",
        help: "Shared by every browser on your pages.",
      },
      {
        name: "readerRequestsPerMinute",
        label: "Requests per minute, per reader",
        help: "For each signed-in reader behind a publishable key.",
      },
    ],
  },
  {
    group: "stream",
    title: "Streams",
    fields: [
      {
        name: "maxConnectionSeconds",
        label: "Longest stream (seconds)",
        help: "A stream is closed after this long; clients reconnect and resume where they were.",
      },
      {
        name: "heartbeatSeconds",
        label: "Heartbeat (seconds)",
        help: "How often an idle stream sends a keep-alive, so proxies keep it open.",
      },
    ],
  },
  {
    group: "retention",
    title: "Retention",
    fields: [
      { name: "deliveryLogDays", label: "Delivery log kept (days)", help: "How long the log of webhook delivery attempts is kept." },
    ],
  },
  {
    group: "inbox",
    title: "Readers' inboxes",
    fields: [
      {
        name: "retentionDays",
        label: "Inbox items kept (days)",
        help: "How long replies and followed comments stay in a reader's inbox (1–3650).",
      },
    ],
  },
  {
    group: "idempotency",
    title: "Idempotency keys",
    fields: [
      {
        name: "ttlHours",
        label: "Idempotency keys kept (hours)",
        help: "How long a request's answer is kept for a retry with the same Idempotency-Key.",
      },
    ],
  },
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

/** The field's problem (when the answer named one) and its line of help, as aria-describedby names them. */
const describedBy = (errors: Record<string, string>, path: string, help = false) =>
  [errors[path] ? `err-${path}` : null, help ? `help-${path}` : null].filter(Boolean).join(" ") || undefined;

function Help({ path, children }: { path: string; children: string }) {
  return (
    <span class="hint field-help" id={`help-${path}`}>
      {children}
    </span>
  );
}

/** A labelled input with a line of help and the answer's problem for its path beside it. */
function Field({
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
const toSeconds = (ms: number) => String(ms / 1000);
const toMs = (seconds: number) => Math.round(seconds * 1000);

export function SettingsScreen() {
  const settings = useLoad(() => gql(SettingsDocument));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ identitySecret: string; previousSecretExpiresAt?: unknown } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [rotateError, setRotateError] = useState<string | null>(null);
  const s: AllSettingsFragment | undefined = settings.data?.settings;

  const save = (form: HTMLFormElement, current: AllSettingsFragment) => {
    const f = new FormData(form);
    const num = (name: string) => Number(String(f.get(name) ?? "").trim());
    const edited: SettingsPatch = {
      moderation: String(f.get("moderation")),
      editWindowSeconds: num("editWindowSeconds"),
      maxBodyLength: num("maxBodyLength"),
      autoLockAfterDays: num("autoLockAfterDays"),
      reactionKinds: String(f.get("reactionKinds") ?? "")
        .split(",")
        .map((k) => k.trim())
        .filter(Boolean),
      pageReactionKinds: String(f.get("pageReactionKinds") ?? "")
        .split(",")
        .map((k) => k.trim())
        .filter(Boolean),
      allowedOrigins: String(f.get("allowedOrigins") ?? "")
        .split(/\s+/)
        .filter(Boolean),
    };
    for (const g of NUMBER_GROUPS)
      (edited as Record<string, unknown>)[g.group] = Object.fromEntries(
        g.fields.map((f) => {
          const v = num(`${g.group}.${f.name}`);
          return [f.name, f.ms ? toMs(v) : v];
        }),
      );
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

  const overlap = s?.identity.secretOverlapHours;
  const rotate = () =>
    void gql(RotateIdentitySecretDocument).then(
      (d) => {
        setConfirming(false);
        setSecret(d.rotateIdentitySecret);
      },
      (e: unknown) => setRotateError(messageOf(e)),
    );

  return (
    <section aria-labelledby="settings-title">
      <SettingsViews current="general" />
      <h1 id="settings-title">Settings</h1>
      <ErrorMessage error={settings.error} />
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
            <div class="field">
              <label>
                Moderation
                {/* `selected` on the option: a select has no defaultValue, so the server's value must be marked */}
                <select name="moderation" aria-describedby={describedBy(errors, "moderation", true)}>
                  <option value="post" selected={s.moderation === "post"}>
                    post (visible at once)
                  </option>
                  <option value="pre" selected={s.moderation === "pre"}>
                    pre (approve first)
                  </option>
                </select>
              </label>
              <FieldError errors={errors} path="moderation" />
              <Help path="moderation">
                Post: comments appear at once, moderators remove what breaks the rules. Pre: each waits for approval.
              </Help>
            </div>
            <Field
              label="Edit window (seconds, 0 = no limit)"
              path="editWindowSeconds"
              value={String(s.editWindowSeconds)}
              errors={errors}
              help="How long after posting an author may still edit their comment."
            />
            <Field
              label="Maximum body length (characters)"
              path="maxBodyLength"
              value={String(s.maxBodyLength)}
              errors={errors}
              help="Longer comments are refused; at most 10,000."
            />
            <Field
              label="Close discussions after (days, 0 = never)"
              path="autoLockAfterDays"
              value={String(s.autoLockAfterDays)}
              errors={errors}
              help="A discussion this old (from its creation) is locked within a minute: it can be read, not commented on."
            />
            <Field
              label="Reaction kinds (comma-separated)"
              path="reactionKinds"
              value={s.reactionKinds.join(", ")}
              errors={errors}
              type="text"
              help="The reactions readers may add, such as like, love: lower-case letters, digits and _."
            />
            <Field
              label="Page reaction kinds (comma-separated)"
              path="pageReactionKinds"
              value={s.pageReactionKinds.join(", ")}
              errors={errors}
              type="text"
              help="Reactions on the page itself, shown above the comments, such as up, heart; empty: off."
            />
          </fieldset>
          {NUMBER_GROUPS.map((g) => (
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
          <fieldset>
            <legend>Browsers</legend>
            <div class="field">
              <label>
                Allowed origins (one per line)
                <textarea
                  name="allowedOrigins"
                  rows={3}
                  defaultValue={s.allowedOrigins.join("\n")}
                  aria-describedby={describedBy(errors, "allowedOrigins", true)}
                  aria-invalid={errors.allowedOrigins ? "true" : undefined}
                />
              </label>
              <FieldError errors={errors} path="allowedOrigins" />
              <Help path="allowedOrigins">
                The sites whose pages may show your comments with a publishable key, such as https://news.example (scheme, host, port).
              </Help>
            </div>
          </fieldset>
          <div class="save-bar">
            <button type="submit">Save settings</button>
            {/* what the save did, beside the button that did it */}
            <ErrorMessage error={error} />
            {notice && <Notice>{notice}</Notice>}
          </div>
        </form>
      )}
      <h2>Identity secret</h2>
      <p>
        Your backend signs readers' identity assertions with it. After a rotation the new secret signs at once, and the old one keeps
        working for the overlap ({overlap ?? 24} hours, set under Identity providers), so your backend can switch over without signing
        anyone out.
      </p>
      <ErrorMessage error={rotateError} />
      {secret ? (
        <div class="secret" role="region" aria-label="The new identity secret">
          <p class="warning">Copy it now: it is shown only this once.</p>
          <p>
            <code class="raw">{secret.identitySecret}</code> <Copy value={secret.identitySecret} />
          </p>
          <p>
            {secret.previousSecretExpiresAt
              ? `The old secret keeps working until ${new Date(String(secret.previousSecretExpiresAt)).toLocaleString()}.`
              : "The old secret no longer works (the overlap is 0 hours)."}
          </p>
        </div>
      ) : confirming ? (
        <div class="confirm" role="group" aria-label="Rotate the identity secret?">
          <p>
            Rotate the identity secret? Assertions signed with the current one keep working for {overlap ?? 24} hours; update your backend
            before then.
          </p>
          <button type="button" onClick={rotate}>
            Rotate now
          </button>{" "}
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="button" onClick={() => setConfirming(true)}>
          Rotate identity secret
        </button>
      )}
    </section>
  );
}
