// Settings › Chat alerts (#/settings/alerts, owners; contract section 21): up to 5 alerts to the
// moderators' Slack or Discord (settings `alerts`), each with its chat, its incoming webhook URL and
// when it is sent (a comment held for review, held by the moderation hook, reported). The URL is
// write-only: a saved alert shows it masked and keeps it unless a new one is typed. Saving sends the
// whole list (a saved alert named by its id, its URL only when typed); each problem of the answer is
// shown beside its field. A saved alert's "Send test" (testAlert) posts a sample message at once and
// says what the chat answered. The settings' labels and help are the settings' description's
// (src/tenancy/settings/alerts.ts, through console/src/settings-text.ts).
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { ApiError, gql } from "../api";
import {
  AlertSettingsDocument,
  TestAlertDocument,
  UpdateAlertsDocument,
  type AlertFieldsFragment,
  type AlertInput,
  type TestAlertMutation,
} from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useAction, useLoad } from "../ui";
import { SettingsViews } from "./settings-views";
import { optionsOf, secretHelp, textOf } from "./settings-fields";

const MAX_ALERTS = 5;
const KINDS = optionsOf("alerts.kind").map(([value, o]) => ({ value, label: o.label }));
const TRIGGERS = optionsOf("alerts.on").map(([value, o]) => ({ value, label: o.label }));

interface Row {
  /** the saved alert's id; absent for a new one */
  id?: string;
  /** what the service shows of the saved URL */
  shown?: string;
  kind: string;
  /** a new URL as typed; empty keeps the saved one */
  url: string;
  on: string[];
  /** a key for the list */
  key: string;
}

type Errors = Record<string, string>;

let keys = 0;
const rowOf = (a: AlertFieldsFragment): Row => ({ id: a.id, shown: a.url, kind: a.kind, url: "", on: [...a.on], key: a.id });
const newRow = (): Row => ({ kind: "slack", url: "", on: ["pending"], key: `new-${++keys}` });

/** The answer's problems by field: `alerts[1].url` → `1.url` (several for one field joined). */
function errorsByField(fields: { path: string; message: string }[]): Errors {
  const out: Errors = {};
  for (const f of fields) {
    const m = /^alerts(?:\[(\d+)\](?:\.(\w+))?)?/.exec(f.path);
    const key = m?.[1] !== undefined ? `${m[1]}.${m[2] ?? "url"}` : "list";
    out[key] = out[key] ? `${out[key]}; ${f.message}` : f.message;
  }
  return out;
}

export function AlertsScreen() {
  const loaded = useLoad(() => gql(AlertSettingsDocument));
  const [notice, setNotice] = useState<string | null>(null);
  const alerts = loaded.data?.settings.alerts;
  return (
    <section aria-labelledby="alerts-title">
      <SettingsViews current="alerts" />
      <h1 id="alerts-title">Chat alerts</h1>
      <p class="hint">
        A message in your moderators' Slack or Discord channel when a comment needs them, naming the comment, its reader, discussion and
        reason, with one-click Approve and Reject links (each works once, for 7 days, and opens a page that asks before it acts).
      </p>
      <ErrorMessage error={loaded.error} />
      {notice && <Notice>{notice}</Notice>}
      {alerts && (
        <AlertsForm
          key={JSON.stringify(alerts)}
          saved={alerts}
          onSaved={(msg) => {
            setNotice(msg);
            loaded.reload();
          }}
          onNotice={setNotice}
        />
      )}
    </section>
  );
}

function AlertsForm({
  saved,
  onSaved,
  onNotice,
}: {
  saved: AlertFieldsFragment[];
  onSaved: (notice: string) => void;
  onNotice: (n: string | null) => void;
}) {
  const [rows, setRows] = useState<Row[]>(() => saved.map(rowOf));
  const [errors, setErrors] = useState<Errors>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const change = (i: number, next: Partial<Row>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...next } : r)));

  const save = () => {
    const problems: Errors = {};
    rows.forEach((r, i) => {
      if (!r.id && !r.url.trim()) problems[`${i}.url`] = "is required for a new alert";
      if (r.on.length === 0) problems[`${i}.on`] = "choose at least one";
    });
    setErrors(problems);
    setError(null);
    onNotice(null);
    if (Object.keys(problems).length) {
      setError("Some alerts are not complete; see the messages beside them.");
      return;
    }
    // a saved alert is named by its id; its URL is sent only when a new one was typed
    const input: AlertInput[] = rows.map((r) => ({
      ...(r.id ? { id: r.id } : {}),
      kind: r.kind,
      on: r.on,
      ...(r.url.trim() ? { url: r.url.trim() } : {}),
    }));
    setBusy(true);
    gql(UpdateAlertsDocument, { input: { alerts: input } })
      .then(
        (d) => onSaved(`Chat alerts saved: ${d.updateSettings.alerts.length} alert${d.updateSettings.alerts.length === 1 ? "" : "s"}.`),
        (e: unknown) => {
          const fields = e instanceof ApiError ? e.fields : [];
          setError(fields.length ? "Some alerts are not valid; see the messages beside them." : messageOf(e));
          setErrors(errorsByField(fields));
        },
      )
      .finally(() => setBusy(false));
  };

  return (
    <form
      class="settings alerts-settings"
      aria-labelledby="alerts-list-title"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <h2 id="alerts-list-title">Alerts</h2>
      <ErrorMessage error={error} />
      {errors.list && <p class="field-error">{errors.list}</p>}
      {rows.length === 0 && <p>No chat alerts yet.</p>}
      {rows.map((r, i) => (
        <AlertRow
          key={r.key}
          row={r}
          index={i}
          errors={errors}
          savedIndex={r.id ? saved.findIndex((s) => s.id === r.id) : -1}
          onChange={(next) => change(i, next)}
          onRemove={() => setRows(rows.filter((_, j) => j !== i))}
        />
      ))}
      <div class="inline">
        <button type="button" class="btn-plain" disabled={rows.length >= MAX_ALERTS} onClick={() => setRows([...rows, newRow()])}>
          Add alert
        </button>
        <button type="submit" disabled={busy}>
          Save chat alerts
        </button>
      </div>
      {rows.length >= MAX_ALERTS && <p class="hint">At most {MAX_ALERTS} alerts.</p>}
    </form>
  );
}

function AlertRow({
  row,
  index,
  errors,
  savedIndex,
  onChange,
  onRemove,
}: {
  row: Row;
  index: number;
  errors: Errors;
  /** its place in the saved list (what Send test names); -1 while not saved */
  savedIndex: number;
  onChange: (next: Partial<Row>) => void;
  onRemove: () => void;
}) {
  const id = `alert-${row.key}`;
  const problem = (field: string) => errors[`${index}.${field}`];
  const described = (field: string, hint: string) => ({
    "aria-invalid": problem(field) ? ("true" as const) : undefined,
    "aria-describedby": [hint, ...(problem(field) ? [`${id}-err-${field}`] : [])].join(" "),
  });
  return (
    <fieldset class="alert-row">
      <legend>Alert {index + 1}</legend>
      <div>
        <label>
          {textOf("alerts.kind").label}
          <select
            name={`kind-${index}`}
            onChange={(e) => onChange({ kind: e.currentTarget.value })}
            {...described("kind", `${id}-kind-hint`)}
          >
            {KINDS.map((k) => (
              <option key={k.value} value={k.value} selected={row.kind === k.value}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        <span id={`${id}-kind-hint`} class="hint">
          {textOf("alerts.kind").help}
        </span>
        {problem("kind") && (
          <span class="field-error" id={`${id}-err-kind`}>
            {problem("kind")}
          </span>
        )}
      </div>
      <div>
        <label>
          {textOf("alerts.url").label}
          <input
            name={`url-${index}`}
            type="url"
            value={row.url}
            onInput={(e) => onChange({ url: e.currentTarget.value })}
            placeholder={row.shown ? `${row.shown} (saved)` : "https://hooks.slack.com/services/…"}
            spellcheck={false}
            autoComplete="off"
            {...described("url", `${id}-url-hint`)}
          />
        </label>
        <span id={`${id}-url-hint`} class="hint">
          {secretHelp("alerts.url", Boolean(row.shown), row.shown ?? "")}
        </span>
        {problem("url") && (
          <span class="field-error" id={`${id}-err-url`}>
            {problem("url")}
          </span>
        )}
      </div>
      <fieldset class="alert-triggers" aria-describedby={problem("on") ? `${id}-err-on` : undefined}>
        <legend>{textOf("alerts.on").label}</legend>
        {TRIGGERS.map((t) => (
          <label key={t.value} class="check">
            <input
              type="checkbox"
              checked={row.on.includes(t.value)}
              onChange={(e) => onChange({ on: e.currentTarget.checked ? [...row.on, t.value] : row.on.filter((v) => v !== t.value) })}
            />
            {t.label}
          </label>
        ))}
        {problem("on") && (
          <span class="field-error" id={`${id}-err-on`}>
            {problem("on")}
          </span>
        )}
      </fieldset>
      <SendTest index={savedIndex} label={`alert ${index + 1}`}>
        <button type="button" class="btn-delete" onClick={onRemove} aria-label={`Remove alert ${index + 1}`}>
          Remove
        </button>
      </SendTest>
    </fieldset>
  );
}

type TestAnswer = TestAlertMutation["testAlert"];

/** "Send test" (a saved alert's: `index` ≥ 0) beside the row's other buttons; what the chat answered below them. */
function SendTest({ index, label, children }: { index: number; label: string; children: ComponentChildren }) {
  const action = useAction();
  const [answer, setAnswer] = useState<TestAnswer | null>(null);
  return (
    <>
      <div class="inline">
        {index >= 0 && (
          <button
            type="button"
            class="btn-plain"
            aria-label={`Send test of ${label}`}
            disabled={action.busy}
            onClick={() => {
              setAnswer(null);
              void action.run(async () => setAnswer((await gql(TestAlertDocument, { index })).testAlert));
            }}
          >
            Send test
          </button>
        )}
        {children}
      </div>
      <ErrorMessage error={action.error} />
      <p role="status" class={answer ? `hook-answer ${answer.ok ? "ok" : "failed"}` : undefined}>
        {action.busy && "Sending…"}
        {answer &&
          (answer.ok
            ? `Delivered: the chat answered ${answer.status ?? "?"} in ${answer.latencyMs} ms.`
            : `Not delivered: ${answer.error ?? "no answer"}.`)}
      </p>
    </>
  );
}
