// Settings › Sign-in (#/settings/sign-in, owners): the service's hosted sign-in for sites with no
// identity provider of their own (contract section 20; README "Readers with no identity provider"):
// which methods the sign-in page offers (an email link, a provider, guests), the guests' options (an
// address required; their comments held for review), how long a session lasts, and up to 5 OpenID
// Connect or OAuth 2 providers. A provider's client secret is write-only: the form never holds the
// stored one (it says "stored"); an empty field keeps it, a typed one replaces it. Saving sends only
// what changed (form-diff.ts): the whole `oidc` list when any provider was added, edited or removed
// (the PATCH replaces the list), and the other fields each on its own. Each problem of the answer is
// shown beside the field it names. A saved provider's "Test" calls its endpoints from the service
// (GraphQL testSignInProvider) and shows each check's outcome.
import { useState } from "preact/hooks";
import { ApiError, gql } from "../api";
import {
  SignInSettingsDocument,
  TestSignInProviderDocument,
  UpdateSignInDocument,
  type TestSignInProviderMutation,
  type SignInFieldsFragment,
  type SignInProviderInput,
  type SignInSettingsPatch,
} from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useAction, useLoad } from "../ui";
import { changedFields } from "../form-diff";
import { SettingsViews } from "./settings-identity";

export const MAX_SIGN_IN_PROVIDERS = 5;
const METHODS = [
  { value: "email", label: "Email link", hint: "A one-time link sent to the reader's address (through your tenant's email settings)." },
  {
    value: "oidc",
    label: "Sign in with a provider (OpenID Connect / OAuth 2)",
    hint: "A button for each provider below, such as GitHub, Google or your own OpenID Connect server.",
  },
  {
    value: "guest",
    label: "Guests",
    hint: "A name (and an address if you ask for one) behind a proof-of-work check instead of a captcha.",
  },
] as const;
const ENDPOINTS = [
  { key: "authorizationEndpoint", label: "Authorization endpoint", placeholder: "https://github.com/login/oauth/authorize" },
  { key: "tokenEndpoint", label: "Token endpoint", placeholder: "https://github.com/login/oauth/access_token" },
  { key: "userinfoEndpoint", label: "Userinfo endpoint", placeholder: "https://api.github.com/user" },
] as const;

type Errors = Record<string, string>;
type Provider = SignInFieldsFragment["oidc"][number];
type Claims = NonNullable<Provider["claims"]>;
/** A provider as the form holds it. */
interface Draft {
  key: number;
  /** the id it was stored under (its secret is kept while the id stays); null for a new one */
  storedId: string | null;
  id: string;
  label: string;
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string;
  clientId: string;
  /** a new secret typed in; "" keeps the stored one */
  clientSecret: string;
  /** as typed, space-separated */
  scopes: string;
  /** carried as stored (the form does not edit the claim mapping) */
  claims: Claims | null;
}

let nextKey = 1;
const draftOf = (p: Provider): Draft => ({
  key: nextKey++,
  storedId: p.id,
  id: p.id,
  label: p.label,
  issuer: p.issuer ?? "",
  authorizationEndpoint: p.authorizationEndpoint ?? "",
  tokenEndpoint: p.tokenEndpoint ?? "",
  userinfoEndpoint: p.userinfoEndpoint ?? "",
  clientId: p.clientId,
  clientSecret: "",
  scopes: (p.scopes ?? []).join(" "),
  claims: p.claims ?? null,
});
const blank = (): Draft => ({
  key: nextKey++,
  storedId: null,
  id: "",
  label: "",
  issuer: "",
  authorizationEndpoint: "",
  tokenEndpoint: "",
  userinfoEndpoint: "",
  clientId: "",
  clientSecret: "",
  scopes: "",
  claims: null,
});

/** Only the claims that are set (the service's defaults stand for the others). */
const claimsInput = (c: Claims | null) => {
  const set = Object.fromEntries(Object.entries(c ?? {}).filter(([k, v]) => k !== "__typename" && typeof v === "string" && v));
  return Object.keys(set).length ? { claims: set } : {};
};

/** A provider in the PATCH's shape; both the server's and the form's go through it, so they compare field by field. */
function inputOf(d: Omit<Draft, "key" | "storedId">): SignInProviderInput {
  const scopes = d.scopes.split(/[\s,]+/).filter(Boolean);
  const opt = (k: "issuer" | "authorizationEndpoint" | "tokenEndpoint" | "userinfoEndpoint") => (d[k].trim() ? { [k]: d[k].trim() } : {});
  return {
    id: d.id.trim(),
    label: d.label.trim(),
    ...opt("issuer"),
    ...opt("authorizationEndpoint"),
    ...opt("tokenEndpoint"),
    ...opt("userinfoEndpoint"),
    clientId: d.clientId.trim(),
    ...(d.clientSecret ? { clientSecret: d.clientSecret } : {}),
    ...(scopes.length ? { scopes } : {}),
    ...claimsInput(d.claims),
  };
}

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

function FieldError({ errors, path }: { errors: Errors; path: string }) {
  const msg = errors[path];
  return msg ? (
    <span class="field-error" id={`err-${path}`}>
      {msg}
    </span>
  ) : null;
}
/** aria-invalid, and aria-describedby naming the field's problem (if any) and its hint. */
const described = (errors: Errors, path: string, hint?: string) => ({
  "aria-invalid": errors[path] ? ("true" as const) : undefined,
  "aria-describedby": [errors[path] ? `err-${path}` : null, hint ?? null].filter(Boolean).join(" ") || undefined,
});

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
  const edit = (key: number, change: (d: Draft) => Draft) => setDrafts((all) => all.map((d) => (d.key === key ? change(d) : d)));

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
        <legend>Methods</legend>
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
          Guests must give an email address
        </label>
        <FieldError errors={errors} path="guest.requireEmail" />
        <label class="check">
          <input type="checkbox" checked={hold} aria-describedby="hold-hint" onChange={(e) => setHold(e.currentTarget.checked)} />
          Hold guests' comments for review
        </label>
        <span class="hint" id="hold-hint">
          Held comments wait in the moderation queue until approved; unticked, guests' comments follow the tenant's moderation setting.
        </span>
        <FieldError errors={errors} path="guest.moderation" />
      </fieldset>
      <div class="days">
        <label>
          Session length (days)
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
          How long a reader stays signed in, 1 to 365 days. Signing out ends a session at once; so does a ban.
        </span>
        <FieldError errors={errors} path="sessionDays" />
      </div>
      <h2 id="sign-in-providers-title">Providers</h2>
      <FieldError errors={errors} path="oidc" />
      {drafts.length === 0 && <p>No provider: "Sign in with a provider" has nothing to offer until you add one.</p>}
      {drafts.map((d, i) => (
        <ProviderFields
          key={d.key}
          d={d}
          n={i + 1}
          errors={errors}
          prefix={`oidc.${i}`}
          tenantId={tenantId}
          onChange={(change) => edit(d.key, change)}
          onRemove={() => setDrafts((all) => all.filter((x) => x.key !== d.key))}
        />
      ))}
      <div class="actions">
        <button
          type="button"
          class="btn-plain"
          disabled={drafts.length >= MAX_SIGN_IN_PROVIDERS}
          aria-describedby="sign-in-providers-count"
          onClick={() => setDrafts((all) => [...all, blank()])}
        >
          Add a provider
        </button>
        <span id="sign-in-providers-count" class="hint">
          {drafts.length} of {MAX_SIGN_IN_PROVIDERS} providers
        </span>
      </div>
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

function ProviderFields({
  d,
  n,
  errors,
  prefix,
  tenantId,
  onChange,
  onRemove,
}: {
  d: Draft;
  n: number;
  errors: Errors;
  prefix: string;
  tenantId: string;
  onChange: (change: (d: Draft) => Draft) => void;
  onRemove: () => void;
}) {
  const p = (field: string) => `${prefix}.${field}`;
  const hintId = (field: string) => `hint-${prefix}.${field}`;
  const stored = d.storedId !== null && d.id.trim() === d.storedId;
  const text = (
    field: "id" | "label" | "issuer" | "authorizationEndpoint" | "tokenEndpoint" | "userinfoEndpoint" | "clientId" | "scopes",
    label: string,
    opts: { placeholder?: string; hint?: string; type?: string } = {},
  ) => (
    <div>
      <label>
        {label}
        <input
          type={opts.type ?? "text"}
          spellcheck={false}
          placeholder={opts.placeholder}
          value={d[field]}
          onInput={(e) => {
            const v = e.currentTarget.value;
            onChange((x) => ({ ...x, [field]: v }));
          }}
          {...described(errors, p(field), opts.hint ? hintId(field) : undefined)}
        />
      </label>
      {opts.hint && (
        <span class="hint" id={hintId(field)}>
          {opts.hint}
        </span>
      )}
      <FieldError errors={errors} path={p(field)} />
    </div>
  );
  const id = d.id.trim();
  return (
    <fieldset aria-label={`Provider ${n}`} class="sign-in-provider">
      <legend>
        Provider {n}
        {d.label.trim() ? `: ${d.label.trim()}` : ""}
      </legend>
      <FieldError errors={errors} path={prefix} />
      <div class="pair">
        {text("id", "Id", {
          placeholder: "github",
          hint: id
            ? `Its readers are ${id}:<their id>.`
            : "Lower-case letters, digits and hyphens; it names the redirect URI and prefixes its readers' ids.",
        })}
        {text("label", "Label", { placeholder: "GitHub", hint: 'The button says "Sign in with <label>".' })}
      </div>
      {id && (
        <p class="hint redirect-uri">
          Redirect URI to register with the provider: <code>{`${location.origin}/auth/v1/${tenantId}/callback/${id}`}</code>
        </p>
      )}
      {text("issuer", "Issuer", {
        type: "url",
        placeholder: "https://accounts.google.com",
        hint: "OpenID Connect: the endpoints come from its discovery document. Leave empty for plain OAuth 2 and give the three endpoints.",
      })}
      <div class="endpoints">
        {ENDPOINTS.map((e) => (
          <div key={e.key}>{text(e.key, e.label, { type: "url", placeholder: e.placeholder })}</div>
        ))}
      </div>
      <div class="pair">
        {text("clientId", "Client id")}
        <div>
          <label>
            Client secret
            <input
              type="password"
              autoComplete="new-password"
              spellcheck={false}
              placeholder={stored ? "stored" : ""}
              value={d.clientSecret}
              onInput={(e) => {
                const v = e.currentTarget.value;
                onChange((x) => ({ ...x, clientSecret: v }));
              }}
              {...described(errors, p("clientSecret"), hintId("clientSecret"))}
            />
          </label>
          <span class="hint" id={hintId("clientSecret")}>
            {stored
              ? "A secret is stored (it is never shown): leave this empty to keep it, or type a new one to replace it."
              : "Required: stored encrypted and never shown again."}
          </span>
          <FieldError errors={errors} path={p("clientSecret")} />
        </div>
      </div>
      {text("scopes", "Scopes (space-separated)", {
        placeholder: "openid email profile",
        hint: "Empty: openid email profile with an issuer, the provider's default without one.",
      })}
      <ProviderTest id={stored ? d.storedId : null} n={n} />
      <div class="actions">
        <button type="button" class="btn-delete" onClick={onRemove}>
          Remove provider {n}
        </button>
      </div>
    </fieldset>
  );
}

type ProviderTestAnswer = TestSignInProviderMutation["testSignInProvider"];

/** "Test": the saved provider's endpoints called from the service (testSignInProvider), each check's outcome. */
function ProviderTest({ id, n }: { id: string | null; n: number }) {
  const action = useAction();
  const [answer, setAnswer] = useState<ProviderTestAnswer | null>(null);
  return (
    <div class="provider-test">
      <div class="actions">
        <button
          type="button"
          class="btn-plain"
          disabled={!id || action.busy}
          aria-describedby={`provider-test-hint-${n}`}
          onClick={() =>
            void action.run(async () => {
              setAnswer(null);
              setAnswer((await gql(TestSignInProviderDocument, { id: id! })).testSignInProvider);
            })
          }
        >
          {action.busy ? "Testing…" : "Test"}
        </button>
        <span class="hint" id={`provider-test-hint-${n}`}>
          {id
            ? "Calls the saved provider's endpoints from the service (unsaved changes are not tested)."
            : "Save the provider first: Test calls the saved one."}
        </span>
      </div>
      <ErrorMessage error={action.error} />
      <div role="status">
        {answer && (
          <div class={`hook-answer ${answer.ok ? "ok" : "failed"}`}>
            <p>
              <strong>{answer.ok ? "Every check passed." : "Some checks failed."}</strong> ({answer.latencyMs} ms)
            </p>
            <ul>
              {answer.checks.map((c) => (
                <li key={c.endpoint}>
                  {c.endpoint}: {c.ok ? "ok" : `failed${c.error ? `: ${c.error}` : ""}`}
                  {c.status !== null ? ` (HTTP ${c.status})` : ""}
                  {c.url ? (
                    <>
                      {" "}
                      <code>{c.url}</code>
                    </>
                  ) : null}
                </li>
              ))}
            </ul>
          </div>
        )}
      </div>
    </div>
  );
}
