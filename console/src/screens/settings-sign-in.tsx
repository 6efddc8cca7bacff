// Settings › Sign-in (#/settings/sign-in, owners): the service's hosted sign-in for sites with no
// identity provider of their own (contract section 20; README "Readers with no identity provider"):
// which methods the sign-in page offers (an email link, a provider, guests), the guests' options (an
// address required; their comments held for review), how long a session lasts, and up to 5 OpenID
// Connect or OAuth 2 providers. A provider's client secret is write-only: the form never holds the
// stored one (it says "stored"); an empty field keeps it, a typed one replaces it. Saving sends only
// what changed (form-diff.ts): the whole `oidc` list when any provider was added, edited or removed
// (the PATCH replaces the list), and the other fields each on its own. Each problem of the answer is
// shown beside the field it names. A saved provider's "Test" calls its endpoints from the service
// (GraphQL testSignInProvider) and shows each check's outcome. The settings' labels and help are the
// settings' description's (src/tenancy/settings/sign-in.ts, through console/src/settings-text.ts).
import { useState } from "preact/hooks";
import { ApiError, gql } from "../api";
import { SignInSettingsDocument, UpdateSignInDocument, type SignInFieldsFragment, type SignInSettingsPatch } from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useLoad } from "../ui";
import { changedFields } from "../form-diff";
import { SettingsViews } from "./settings-views";
import { FieldError, ProviderList, type Errors } from "../components/fields";
import { MAX_SIGN_IN_PROVIDERS, ProviderFields, blank, described, draftOf, inputOf, type Draft } from "./settings-sign-in-provider";
import { optionsOf, textOf } from "./settings-fields";

const METHODS = optionsOf("signIn.methods").map(([value, o]) => ({ value, label: o.label, hint: o.help }));

/**
 * The answer's problems by the field they name: `signIn.oidc.1.clientSecret` (or `signIn.oidc[1].clientSecret`)
 * → `oidc.1.clientSecret`, `signIn.methods[0]` → `methods`; several for one field are joined.
 */
export function signInErrors(fields: { path: string; message: string }[]): Errors {
  const out: Errors = {};
  for (const f of fields) {
    const key = f.path
      .replace(/^signIn\.?/, "")
      .replace(/\[(\d+)\]/g, ".$1")
      .replace(/^(methods|oidc\.\d+\.scopes)\.\d+$/, "$1")
      .replace(/^$/, "methods");
    out[key] = out[key] ? `${out[key]}; ${f.message}` : f.message;
  }
  return out;
}

/** The paths the form shows a problem beside; another's problem is said in the form's own error. */
const SHOWN =
  /^(methods|sessionDays|guest\.(requireEmail|moderation)|oidc(\.\d+(\.(id|label|issuer|authorizationEndpoint|tokenEndpoint|userinfoEndpoint|clientId|clientSecret|scopes))?)?)$/;

export function SignInScreen({ tenantId }: { tenantId: string }) {
  const loaded = useLoad(() => gql(SignInSettingsDocument));
  const signIn = loaded.data?.settings.signIn;
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <section aria-labelledby="sign-in-title">
      <SettingsViews current="sign-in" />
      <h1 id="sign-in-title">Sign-in</h1>
      <p class="hint">
        For a site with no identity provider of its own: the comment thread shows "Sign in", and the service's own sign-in page signs
        readers in with the methods you turn on here. Their session then stands for them as an identity assertion would. With no method on,
        your pages hand readers' identities to the thread themselves.
      </p>
      <ErrorMessage error={loaded.error} />
      {notice && <Notice>{notice}</Notice>}
      {signIn && (
        <SignInForm
          key={JSON.stringify(signIn)}
          current={signIn}
          tenantId={tenantId}
          onSaved={(saved, msg) => {
            loaded.setData({ settings: { signIn: saved } });
            setNotice(msg);
          }}
          onNotice={setNotice}
        />
      )}
    </section>
  );
}

function SignInForm({
  current,
  tenantId,
  onSaved,
  onNotice,
}: {
  current: SignInFieldsFragment;
  tenantId: string;
  onSaved: (s: SignInFieldsFragment, notice: string) => void;
  onNotice: (n: string | null) => void;
}) {
  const [methods, setMethods] = useState<string[]>(() => [...current.methods]);
  const [requireEmail, setRequireEmail] = useState(current.guest.requireEmail);
  const [hold, setHold] = useState(current.guest.moderation === "pre");
  const [days, setDays] = useState(String(current.sessionDays));
  const [drafts, setDrafts] = useState<Draft[]>(() => current.oidc.map(draftOf));
  const [errors, setErrors] = useState<Errors>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const save = () => {
    setErrors({});
    setError(null);
    onNotice(null);
    const sessionDays = days.trim();
    if (!/^\d+$/.test(sessionDays)) {
      setErrors({ sessionDays: "must be a whole number of days, 1 to 365" });
      setError("Some settings are not valid; see the messages beside them.");
      return;
    }
    // only what the operator changed: the providers list as a whole (the PATCH replaces it), the rest field by field
    const patch = changedFields(
      {
        // in the order the service lists them, whatever order they were ticked in
        methods: METHODS.map((m) => m.value).filter((m) => current.methods.includes(m)),
        guest: { requireEmail: current.guest.requireEmail, moderation: current.guest.moderation },
        sessionDays: current.sessionDays,
        oidc: current.oidc.map((p) => inputOf(draftOf(p))),
      },
      {
        methods: METHODS.map((m) => m.value).filter((m) => methods.includes(m)),
        guest: { requireEmail, moderation: hold ? "pre" : "post" },
        sessionDays: Number(sessionDays),
        oidc: drafts.map(inputOf),
      },
    ) as SignInSettingsPatch;
    if (Object.keys(patch).length === 0) {
      onNotice("Nothing changed: no setting was saved.");
      return;
    }
    setBusy(true);
    gql(UpdateSignInDocument, { input: { signIn: patch } })
      .then(
        (d) => onSaved(d.updateSettings.signIn, `Sign-in settings saved: ${Object.keys(patch).join(", ")}.`),
        (e: unknown) => {
          const fields = e instanceof ApiError ? e.fields : [];
          const byField = signInErrors(fields);
          const elsewhere = Object.entries(byField)
            .filter(([path]) => !SHOWN.test(path))
            .map(([path, message]) => ` ${path}: ${message}.`);
          setError(fields.length ? `Some settings are not valid; see the messages beside them.${elsewhere.join("")}` : messageOf(e));
          setErrors(byField);
        },
      )
      .finally(() => setBusy(false));
  };

  return (
    <form
      class="settings sign-in-settings"
      aria-labelledby="sign-in-title"
      // the service checks every field and its answer is shown beside each
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <fieldset {...described(errors, "methods")}>
        <legend>{textOf("signIn.methods").label}</legend>
        {METHODS.map((m) => (
          <div key={m.value}>
            <label class="check">
              <input
                type="checkbox"
                name={`method-${m.value}`}
                checked={methods.includes(m.value)}
                aria-describedby={`method-hint-${m.value}`}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setMethods((all) => (on ? [...all, m.value] : all.filter((x) => x !== m.value)));
                }}
              />
              {m.label}
            </label>
            <span class="hint" id={`method-hint-${m.value}`}>
              {m.hint}
            </span>
          </div>
        ))}
        <FieldError errors={errors} path="methods" />
      </fieldset>
      <fieldset>
        <legend>Guests</legend>
        <label class="check">
          <input type="checkbox" checked={requireEmail} onChange={(e) => setRequireEmail(e.currentTarget.checked)} />
          {textOf("signIn.guest.requireEmail").label}
        </label>
        <FieldError errors={errors} path="guest.requireEmail" />
        <label class="check">
          <input type="checkbox" checked={hold} aria-describedby="hold-hint" onChange={(e) => setHold(e.currentTarget.checked)} />
          {textOf("signIn.guest.moderation").label}
        </label>
        <span class="hint" id="hold-hint">
          {textOf("signIn.guest.moderation").help}
        </span>
        <FieldError errors={errors} path="guest.moderation" />
      </fieldset>
      <div class="days">
        <label>
          {textOf("signIn.sessionDays").label}
          <input
            name="sessionDays"
            type="number"
            min={1}
            max={365}
            value={days}
            onInput={(e) => setDays(e.currentTarget.value)}
            {...described(errors, "sessionDays", "session-hint")}
          />
        </label>
        <span id="session-hint" class="hint">
          {textOf("signIn.sessionDays").help}
        </span>
        <FieldError errors={errors} path="sessionDays" />
      </div>
      <ProviderList
        title={textOf("signIn.oidc").label}
        titleId="sign-in-providers-title"
        countId="sign-in-providers-count"
        path="oidc"
        errors={errors}
        drafts={drafts}
        setDrafts={setDrafts}
        blank={blank}
        max={MAX_SIGN_IN_PROVIDERS}
        empty={'No provider: "Sign in with a provider" has nothing to offer until you add one.'}
      >
        {(props) => <ProviderFields {...props} tenantId={tenantId} />}
      </ProviderList>
      <div class="actions">
        <button type="submit" disabled={busy}>
          Save sign-in settings
        </button>
      </div>
      {/* what the save did, beside the button that did it */}
      <ErrorMessage error={error} />
    </form>
  );
}
