// Settings › Email (#/settings/email, owners; contract section 15): whether email goes out
// (emailStatus: through the service's SMTP_URL, kept in the Outbox under EMAIL_OUTBOX=1, or off), the
// tenant's `email` settings — sender, reply-to address, the daily digest's hour, how often readers who
// have not chosen hear of replies, the daily limit per reader — saved with only the fields changed
// (form-diff.ts; an emptied From or Reply-to is null), each problem of the answer beside its field, each
// field's label and hint as the settings' description gives them (textOf);
// and "Send test email" (sendTestEmail), whose answer is shown in words.
import { useState } from "preact/hooks";
import { ApiError, gql } from "../api";
import {
  EmailSettingsDocument,
  SendTestEmailDocument,
  UpdateEmailSettingsDocument,
  type EmailFieldsFragment,
  type EmailSettingsPatch,
  type EmailSettingsQuery,
  type SendTestEmailMutation,
} from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useAction, useLoad } from "../ui";
import { changedFields } from "../form-diff";
import { SettingsViews } from "./settings-views";
import { FieldError, type Errors } from "../components/fields";
import { textOf } from "./settings-fields";

type Status = EmailSettingsQuery["emailStatus"];

const REPLIES = [
  { value: "immediate", label: "immediate (each reply within minutes)" },
  { value: "daily", label: "daily (one digest a day)" },
  { value: "off", label: "off (only readers who ask for emails get them)" },
] as const;

/** aria-invalid and the hint and problem that describe a field. */
const describe = (errors: Errors, path: string, hint?: string) => {
  const ids = [...(hint ? [hint] : []), ...(errors[path] ? [`err-email-${path}`] : [])];
  return { "aria-invalid": errors[path] ? ("true" as const) : undefined, "aria-describedby": ids.length ? ids.join(" ") : undefined };
};

/** The answer's problems by field: `email.digestHour` → `digestHour` (several for one field joined). */
function errorsByField(fields: { path: string; message: string }[]): Errors {
  const out: Errors = {};
  for (const f of fields) {
    const key = f.path.replace(/^email\./, "");
    out[key] = out[key] ? `${out[key]}; ${f.message}` : f.message;
  }
  return out;
}

export function EmailScreen() {
  const loaded = useLoad(() => gql(EmailSettingsDocument));
  const [notice, setNotice] = useState<string | null>(null);
  const d = loaded.data;
  return (
    <section aria-labelledby="email-title">
      <SettingsViews current="email" />
      <h1 id="email-title">Email</h1>
      <ErrorMessage error={loaded.error} />
      {d && <EmailStatusText status={d.emailStatus} />}
      {notice && <Notice>{notice}</Notice>}
      {d && (
        <EmailForm
          key={JSON.stringify(d.settings.email)}
          current={d.settings.email}
          onSaved={(msg) => {
            setNotice(msg);
            // the sender shown above follows email.from
            loaded.reload();
          }}
          onNotice={setNotice}
        />
      )}
      {d && <TestEmail />}
    </section>
  );
}

/** Whether email goes out, in words. */
function EmailStatusText({ status }: { status: Status }) {
  if (status.mode === "off")
    return (
      <div class="email-status off" role="region" aria-label="Email status">
        <p>
          <strong>Email is off.</strong> There is no SMTP server, so no email is sent: not to readers, not as a test. An SMTP server below,
          or the service's <code>SMTP_URL</code> (its environment), turns it on; the settings below are kept until then.
        </p>
      </div>
    );
  if (status.mode === "outbox")
    return (
      <div class="email-status outbox" role="region" aria-label="Email status">
        <p>
          <strong>Email is kept in the Outbox, not sent</strong> (the service runs with <code>EMAIL_OUTBOX=1</code>). Messages are written
          as readers would receive them, from <code>{status.from}</code>, and kept for you to read in the <a href="#/outbox">Outbox</a>.
        </p>
      </div>
    );
  return (
    <div class="email-status on" role="region" aria-label="Email status">
      <p>
        <strong>Email is on.</strong> Messages go out through the SMTP server below, else the service's (<code>SMTP_URL</code>), from{" "}
        <code>{status.from}</code>.
      </p>
    </div>
  );
}

function EmailForm({
  current,
  onSaved,
  onNotice,
}: {
  current: EmailFieldsFragment;
  onSaved: (notice: string) => void;
  onNotice: (n: string | null) => void;
}) {
  const [errors, setErrors] = useState<Errors>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const save = (form: HTMLFormElement) => {
    const f = new FormData(form);
    const text = (name: string) => String(f.get(name) ?? "").trim() || null;
    const whole = (name: string, min: number, max: number, problems: Errors) => {
      const v = String(f.get(name) ?? "").trim();
      if (/^\d+$/.test(v)) return Number(v);
      problems[name] = `must be a whole number, ${min} to ${max}`;
      return 0;
    };
    const problems: Errors = {};
    const edited: EmailSettingsPatch = {
      from: text("from"),
      replyTo: text("replyTo"),
      digestHour: whole("digestHour", 0, 23, problems),
      defaultReplies: String(f.get("defaultReplies")),
      maxPerReaderPerDay: whole("maxPerReaderPerDay", 1, 1000, problems),
      smtpUrl: text("smtpUrl"),
    };
    // the answer masks the password: a changed URL must be typed whole, password included
    if (edited.smtpUrl && edited.smtpUrl !== current.smtpUrl && edited.smtpUrl.includes("****")) {
      problems.smtpUrl = "type the whole URL again, with its password (the one shown is masked)";
    }
    setErrors(problems);
    setError(null);
    onNotice(null);
    if (Object.keys(problems).length > 0) {
      setError("Some settings are not valid; see the messages beside them.");
      return;
    }
    // only what the operator changed: a value shown but left alone is never written back
    const patch = changedFields(current, edited);
    const names = Object.keys(patch);
    if (names.length === 0) {
      onNotice("Nothing changed: no setting was saved.");
      return;
    }
    setBusy(true);
    gql(UpdateEmailSettingsDocument, { input: { email: patch } })
      .then(
        () => onSaved(`Email settings saved: ${names.join(", ")}.`),
        (e: unknown) => {
          const fields = e instanceof ApiError ? e.fields : [];
          setError(fields.length ? "Some settings are not valid; see the messages beside them." : messageOf(e));
          setErrors(errorsByField(fields));
        },
      )
      .finally(() => setBusy(false));
  };

  return (
    <form
      class="settings email-settings"
      aria-labelledby="email-settings-title"
      // the service checks every field and its answer is shown beside each
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        save(e.currentTarget);
      }}
    >
      <h2 id="email-settings-title">Sender and reply emails</h2>
      <ErrorMessage error={error} />
      <fieldset>
        <legend>Sender</legend>
        <div>
          <label>
            {textOf("email.from").label}
            <input
              name="from"
              defaultValue={current.from ?? ""}
              placeholder="The Daily <news@daily.example>"
              spellcheck={false}
              autoComplete="off"
              {...describe(errors, "from", "email-from-hint")}
            />
          </label>
          <span id="email-from-hint" class="hint">
            {textOf("email.from").help}
          </span>
          <FieldError idPrefix="err-email-" errors={errors} path="from" />
        </div>
        <div>
          <label>
            {textOf("email.replyTo").label}
            <input
              name="replyTo"
              type="email"
              defaultValue={current.replyTo ?? ""}
              placeholder="letters@daily.example"
              spellcheck={false}
              autoComplete="off"
              {...describe(errors, "replyTo", "email-reply-to-hint")}
            />
          </label>
          <span id="email-reply-to-hint" class="hint">
            {textOf("email.replyTo").help}
          </span>
          <FieldError idPrefix="err-email-" errors={errors} path="replyTo" />
        </div>
        <div>
          <label>
            {textOf("email.smtpUrl").label}
            <input
              name="smtpUrl"
              defaultValue={current.smtpUrl ?? ""}
              placeholder="smtp://user:password@mail.daily.example:587"
              spellcheck={false}
              autoComplete="off"
              {...describe(errors, "smtpUrl", "email-smtp-hint")}
            />
          </label>
          <span id="email-smtp-hint" class="hint">
            {textOf("email.smtpUrl").help}
          </span>
          <FieldError idPrefix="err-email-" errors={errors} path="smtpUrl" />
        </div>
      </fieldset>
      <fieldset>
        <legend>Replies and digests</legend>
        <div>
          <label>
            {textOf("email.defaultReplies").label}
            {/* `selected` on the option: a select has no defaultValue, so the server's value must be marked */}
            <select name="defaultReplies" {...describe(errors, "defaultReplies", "email-default-hint")}>
              {REPLIES.map((r) => (
                <option key={r.value} value={r.value} selected={current.defaultReplies === r.value}>
                  {r.label}
                </option>
              ))}
            </select>
          </label>
          <span id="email-default-hint" class="hint">
            {textOf("email.defaultReplies").help}
          </span>
          <FieldError idPrefix="err-email-" errors={errors} path="defaultReplies" />
        </div>
        <div>
          <label>
            {textOf("email.digestHour").label}
            <input
              name="digestHour"
              type="number"
              min={0}
              max={23}
              defaultValue={String(current.digestHour)}
              {...describe(errors, "digestHour", "email-hour-hint")}
            />
          </label>
          <span id="email-hour-hint" class="hint">
            {textOf("email.digestHour").help}
          </span>
          <FieldError idPrefix="err-email-" errors={errors} path="digestHour" />
        </div>
        <div>
          <label>
            {textOf("email.maxPerReaderPerDay").label}
            <input
              name="maxPerReaderPerDay"
              type="number"
              min={1}
              max={1000}
              defaultValue={String(current.maxPerReaderPerDay)}
              {...describe(errors, "maxPerReaderPerDay", "email-limit-hint")}
            />
          </label>
          <span id="email-limit-hint" class="hint">
            {textOf("email.maxPerReaderPerDay").help}
          </span>
          <FieldError idPrefix="err-email-" errors={errors} path="maxPerReaderPerDay" />
        </div>
      </fieldset>
      <button type="submit" disabled={busy}>
        Save email settings
      </button>
    </form>
  );
}

type TestAnswer = SendTestEmailMutation["sendTestEmail"];

/** "Send test email": one message to the address given, from the saved sender, and what happened. */
function TestEmail() {
  const action = useAction();
  const [to, setTo] = useState("");
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [answer, setAnswer] = useState<{ to: string; a: TestAnswer } | null>(null);
  const [off, setOff] = useState(false);
  return (
    <form
      class="email-test"
      aria-labelledby="email-test-title"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const address = to.trim();
        setAnswer(null);
        setOff(false);
        setFieldError(null);
        void action.run(async () => {
          try {
            setAnswer({ to: address, a: (await gql(SendTestEmailDocument, { to: address })).sendTestEmail });
          } catch (err) {
            if (err instanceof ApiError && err.code === "email_not_configured") setOff(true);
            else if (err instanceof ApiError && err.fields.length) setFieldError(err.fields.map((x) => x.message).join("; "));
            else throw err;
          }
        });
      }}
    >
      <h2 id="email-test-title">Test email</h2>
      <p class="hint">
        Sends one message from the saved sender through the saved SMTP server (else the service's), to see that email arrives.
      </p>
      <div class="inline">
        <label>
          Address
          <input
            type="email"
            name="to"
            value={to}
            onInput={(e) => setTo(e.currentTarget.value)}
            autoComplete="email"
            spellcheck={false}
            placeholder="you@example.com"
            aria-invalid={fieldError ? "true" : undefined}
            aria-describedby={fieldError ? "err-email-test-to" : undefined}
          />
        </label>
        <button type="submit" disabled={action.busy || !to.trim()}>
          Send test email
        </button>
      </div>
      {fieldError && (
        <span class="field-error" id="err-email-test-to">
          {fieldError}
        </span>
      )}
      <ErrorMessage error={action.error} />
      <div role="status" class={answer || off ? `hook-answer ${answer?.a.sent ? "ok" : "failed"}` : undefined}>
        {action.busy && "Sending…"}
        {off && "Email is off: the service has no SMTP_URL, so nothing was sent."}
        {answer &&
          (answer.a.sent ? (
            <>
              Sent to {answer.to}. Message id: <code>{answer.a.messageId ?? "none given"}</code>
            </>
          ) : (
            `Not sent: ${answer.a.error ?? "the SMTP server did not take it"}`
          ))}
      </div>
    </form>
  );
}
