// Akismet on the Safety screen (docs/safety.md): its fields — on or off, the API key (write-only: the
// form never holds the saved one, it says the key is set; left empty it keeps it, typed it replaces
// it), the blog and an optional base URL — and "Verify key" (verifyAkismetKey), which asks Akismet,
// from the service, about the key and blog the form shows (an empty key field: the saved key) and
// says what it answered. Verifying saves nothing. The settings' labels and help are the settings'
// description's (src/tenancy/settings/safety.ts, through console/src/settings-text.ts).
import { useState } from "preact/hooks";
import type { ComponentChildren } from "preact";
import { gql } from "../api";
import { VerifyAkismetKeyDocument, type AkismetKeyInput, type VerifyAkismetKeyMutation } from "../gql/graphql";
import { ErrorMessage, useAction } from "../ui";
import { FieldError, type Errors } from "../components/fields";
import { secretHelp, textOf } from "./settings-fields";

export const DEFAULT_AKISMET_BASE_URL = "https://rest.akismet.com";

/** Akismet as the form compares it: the key only when one is typed; the default base URL as null. */
export interface AkismetEdit {
  blog: string;
  baseUrl: string | null;
  apiKey?: string;
}

/** The saved settings in the form's terms (the service answers the default base URL when none is set). */
export const akismetSaved = (a: { blog: string; baseUrl: string } | null): AkismetEdit | null =>
  a && { blog: a.blog, baseUrl: a.baseUrl === DEFAULT_AKISMET_BASE_URL ? null : a.baseUrl };

/** What the form says: null when Akismet is off (its fields are then disabled, so not in the form data). */
export function readAkismet(f: FormData): AkismetEdit | null {
  if (!f.get("akismet.enabled")) return null;
  const text = (n: string) => String(f.get(n) ?? "").trim();
  const apiKey = text("akismet.apiKey");
  const baseUrl = text("akismet.baseUrl");
  return {
    blog: text("akismet.blog"),
    baseUrl: baseUrl === "" || baseUrl === DEFAULT_AKISMET_BASE_URL ? null : baseUrl,
    ...(apiKey ? { apiKey } : {}),
  };
}

type Answer = VerifyAkismetKeyMutation["verifyAkismetKey"];

/** aria-invalid, and aria-describedby naming the field's hint and its problem (if any). */
const described = (errors: Errors, path: string, hint: string) => ({
  "aria-invalid": errors[path] ? ("true" as const) : undefined,
  "aria-describedby": [hint, ...(errors[path] ? [`err-${path}`] : [])].join(" "),
});

function Field({ children, hint, id }: { children: ComponentChildren; hint: string; id: string }) {
  return (
    <div>
      {children}
      <span class="hint" id={id}>
        {hint}
      </span>
    </div>
  );
}

/** The Akismet fieldset of the Safety form. */
export function AkismetFields({ saved, errors }: { saved: { blog: string; baseUrl: string } | null; errors: Errors }) {
  const [enabled, setEnabled] = useState(saved !== null);
  const [key, setKey] = useState("");
  const current = akismetSaved(saved);
  return (
    <fieldset class="akismet">
      <legend>{textOf("safety.akismet").label}</legend>
      <p class="hint" id="akismet-hint">
        {textOf("safety.akismet").help}
      </p>
      <label class="check">
        <input
          type="checkbox"
          name="akismet.enabled"
          checked={enabled}
          aria-describedby="akismet-hint"
          onChange={(e) => setEnabled(e.currentTarget.checked)}
        />
        Check new comments with Akismet
      </label>
      <FieldError errors={errors} path="akismet" />
      <Field id="akismet-key-hint" hint={secretHelp("safety.akismet.apiKey", saved !== null)}>
        <label>
          {textOf("safety.akismet.apiKey").label}
          <input
            name="akismet.apiKey"
            type="password"
            autoComplete="off"
            spellcheck={false}
            disabled={!enabled}
            placeholder={saved ? "set" : ""}
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
            {...described(errors, "akismet.apiKey", "akismet-key-hint")}
          />
        </label>
        <FieldError errors={errors} path="akismet.apiKey" />
      </Field>
      <Field id="akismet-blog-hint" hint={textOf("safety.akismet.blog").help}>
        <label>
          {textOf("safety.akismet.blog").label}
          <input
            name="akismet.blog"
            type="url"
            spellcheck={false}
            disabled={!enabled}
            placeholder="https://news.example.com"
            defaultValue={current?.blog ?? ""}
            {...described(errors, "akismet.blog", "akismet-blog-hint")}
          />
        </label>
        <FieldError errors={errors} path="akismet.blog" />
      </Field>
      <Field id="akismet-base-hint" hint={textOf("safety.akismet.baseUrl").help}>
        <label>
          {textOf("safety.akismet.baseUrl").label}
          <input
            name="akismet.baseUrl"
            type="url"
            spellcheck={false}
            disabled={!enabled}
            placeholder={DEFAULT_AKISMET_BASE_URL}
            defaultValue={current?.baseUrl ?? ""}
            {...described(errors, "akismet.baseUrl", "akismet-base-hint")}
          />
        </label>
        <FieldError errors={errors} path="akismet.baseUrl" />
      </Field>
      <AkismetVerify enabled={enabled} keySaved={saved !== null} keyTyped={key.trim() !== ""} />
    </fieldset>
  );
}

/** What Akismet answered, in words. */
export function verifyText(a: Answer, blog: string): string {
  const took = `${a.latencyMs.toLocaleString("en")} ms`;
  if (a.valid) return `Akismet says the key is valid for ${blog} (${took}).`;
  if (a.error === null) return `Akismet says the key is not valid for ${blog} (${took})${a.debugHelp ? `: ${a.debugHelp}` : "."}`;
  return `Akismet did not answer, so the key could not be verified: ${a.error} (${took}).`;
}

/** "Verify key": the form's key (or the saved one), blog and base URL, asked of Akismet from the service. */
function AkismetVerify({ enabled, keySaved, keyTyped }: { enabled: boolean; keySaved: boolean; keyTyped: boolean }) {
  const action = useAction();
  const [answer, setAnswer] = useState<{ a: Answer; blog: string } | null>(null);
  const usable = enabled && (keySaved || keyTyped);
  return (
    <div class="akismet-verify">
      <div class="actions">
        <button
          type="button"
          class="btn-plain"
          disabled={!usable || action.busy}
          aria-describedby="akismet-verify-hint"
          onClick={(e) => {
            const form = e.currentTarget.form;
            const edit = form && readAkismet(new FormData(form));
            if (!edit) return;
            const input: AkismetKeyInput = {
              baseUrl: edit.baseUrl,
              ...(edit.blog ? { blog: edit.blog } : {}),
              ...(edit.apiKey ? { apiKey: edit.apiKey } : {}),
            };
            void action.run(async () => {
              setAnswer(null);
              const a = (await gql(VerifyAkismetKeyDocument, { input })).verifyAkismetKey;
              setAnswer({ a, blog: edit.blog || "the saved blog" });
            });
          }}
        >
          {action.busy ? "Verifying…" : "Verify key"}
        </button>
        <span id="akismet-verify-hint" class="hint">
          {!enabled
            ? "Turn Akismet on to verify a key."
            : usable
              ? "Asks Akismet about the key and blog above (an empty key field: the saved key). Nothing is saved."
              : "Type the API key to verify it."}
        </span>
      </div>
      <ErrorMessage error={action.error} />
      <div role="status" class={answer ? `hook-answer ${answer.a.valid ? "ok" : "failed"}` : undefined}>
        {answer && verifyText(answer.a, answer.blog)}
      </div>
    </div>
  );
}
