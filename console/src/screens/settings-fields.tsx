// The pieces the settings forms share (General, settings.tsx; Delivery & limits, settings-delivery.tsx):
// the number settings in groups, each with a label in words and its unit and a line of help (settings
// kept in ms are shown in seconds); a labelled field with its help and the answer's problem beside it;
// and the save: only the fields the operator changed (form-diff.ts), each problem of the answer's
// `errors` kept by the path it names, the outcome beside the Save button.
import { useState } from "preact/hooks";
import { ApiError, gql } from "../api";
import { SettingsDocument, UpdateSettingsDocument, type AllSettingsFragment, type SettingsPatch } from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useLoad } from "../ui";
import { changedFields } from "../form-diff";
import { FieldError } from "../components/fields";

export type Groups = "delivery" | "replay" | "rateLimits" | "stream" | "retention" | "inbox" | "idempotency";

/** A number setting as the form shows it: a label in words with its unit, a line of help, and (for a setting kept in ms) the factor seconds are multiplied by. */
interface NumberField {
  name: string;
  label: string;
  help: string;
  /** the setting is kept in milliseconds and shown in seconds */
  ms?: true;
}

export const NUMBER_GROUPS: { group: Groups; title: string; fields: NumberField[] }[] = [
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
