// Settings › Identity providers (#/settings/identity, owners): the tenant's `identity` settings
// (contract section 13; README "Readers from your identity provider") — up to 5 providers, each named
// by an OIDC issuer or a bare key set URL, with its audience, allowed algorithms and claim mapping —
// and how long the identity secret before a rotation keeps verifying. Saving sends only what changed
// (form-diff.ts): the whole `providers` list when any provider was added, edited or removed (the
// PATCH replaces the list), `secretOverlapHours` when it changed, nothing else. Each problem of the
// answer is shown beside the field it names. "Test token" verifies a reader token as a request would
// (testIdentityToken) and shows the reader it stands for with its header and claims, or why it is refused.
import { useState } from "preact/hooks";
import { ApiError, gql } from "../api";
import {
  IdentitySettingsDocument,
  TestIdentityTokenDocument,
  UpdateIdentityDocument,
  type IdentityFieldsFragment,
  type IdentityProviderInput,
  type IdentitySettingsPatch,
  type TestIdentityTokenMutation,
} from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useAction, useLoad } from "../ui";
import { changedFields } from "../form-diff";
import { httpHref } from "../safe-url";

export const MAX_PROVIDERS = 5;
const ALGORITHMS = ["RS256", "PS256", "ES256", "EdDSA"] as const;
const CLAIMS = [
  { key: "name", label: "Name claim", hint: "the reader's display name" },
  { key: "picture", label: "Picture claim", hint: "their avatar URL" },
  { key: "email", label: "Email claim", hint: "their email" },
] as const;

type Errors = Record<string, string>;
type Provider = IdentityFieldsFragment["providers"][number];
/** A provider as the form holds it (audience as typed, one a line). */
interface Draft {
  key: number;
  issuer: string;
  jwksUri: string;
  audience: string;
  algorithms: string[];
  claims: { name: string; picture: string; email: string };
}

let nextKey = 1;
const draftOf = (p: Provider): Draft => ({
  key: nextKey++,
  issuer: p.issuer ?? "",
  jwksUri: p.jwksUri ?? "",
  audience: p.audience.join("\n"),
  algorithms: [...p.algorithms],
  claims: { ...p.claims },
});
const blank = (): Draft => ({
  key: nextKey++,
  issuer: "",
  jwksUri: "",
  audience: "",
  algorithms: [...ALGORITHMS],
  claims: { name: "name", picture: "picture", email: "email" },
});

/** A provider in the PATCH's shape; both the server's and the form's go through it, so they compare field by field. */
function inputOf(p: {
  issuer: string;
  jwksUri: string;
  audience: string[];
  algorithms: string[];
  claims: Draft["claims"];
}): IdentityProviderInput {
  return {
    ...(p.issuer ? { issuer: p.issuer } : {}),
    ...(p.jwksUri ? { jwksUri: p.jwksUri } : {}),
    audience: p.audience,
    // in the order the service lists them, whatever order they were ticked in
    algorithms: ALGORITHMS.filter((a) => p.algorithms.includes(a)),
    claims: { name: p.claims.name, picture: p.claims.picture, email: p.claims.email },
  };
}
const serverInput = (p: Provider) =>
  inputOf({ issuer: p.issuer ?? "", jwksUri: p.jwksUri ?? "", audience: p.audience, algorithms: p.algorithms, claims: p.claims });
const draftInput = (d: Draft) =>
  inputOf({
    issuer: d.issuer.trim(),
    jwksUri: d.jwksUri.trim(),
    audience: d.audience
      .split("\n")
      .map((a) => a.trim())
      .filter(Boolean),
    algorithms: d.algorithms,
    claims: { name: d.claims.name.trim(), picture: d.claims.picture.trim(), email: d.claims.email.trim() },
  });

/**
 * The answer's problems by the field they name: `identity.providers[1].audience[0]` → `providers.1.audience`,
 * `identity.providers[0]` (neither issuer nor jwksUri) → `providers.0`; several for one field are joined.
 */
export function errorsByField(fields: { path: string; message: string }[]): Errors {
  const out: Errors = {};
  for (const f of fields) {
    const key = f.path
      .replace(/^identity\./, "")
      .replace(/\[(\d+)\]/g, ".$1")
      .replace(/^(providers\.\d+\.(?:audience|algorithms))\.\d+$/, "$1");
    out[key] = out[key] ? `${out[key]}; ${f.message}` : f.message;
  }
  return out;
}

function FieldError({ errors, path }: { errors: Errors; path: string }) {
  const msg = errors[path];
  return msg ? (
    <span class="field-error" id={`err-${path}`}>
      {msg}
    </span>
  ) : null;
}
const invalid = (errors: Errors, path: string) => ({
  "aria-invalid": errors[path] ? ("true" as const) : undefined,
  "aria-describedby": errors[path] ? `err-${path}` : undefined,
});

/** The settings views: General, Delivery & limits (settings-delivery.tsx), Identity providers, Sign-in (settings-sign-in.tsx), Email (settings-email.tsx), Chat alerts (settings-alerts.tsx), Import and export (settings-portability.tsx). */
export function SettingsViews({
  current,
}: {
  current: "general" | "delivery" | "identity" | "sign-in" | "email" | "alerts" | "portability";
}) {
  return (
    <nav class="views" aria-label="Settings views">
      <a href="#/settings" aria-current={current === "general" ? "page" : undefined}>
        General
      </a>
      <a href="#/settings/delivery" aria-current={current === "delivery" ? "page" : undefined}>
        Delivery &amp; limits
      </a>
      <a href="#/settings/identity" aria-current={current === "identity" ? "page" : undefined}>
        Identity providers
      </a>
      <a href="#/settings/sign-in" aria-current={current === "sign-in" ? "page" : undefined}>
        Sign-in
      </a>
      <a href="#/settings/email" aria-current={current === "email" ? "page" : undefined}>
        Email
      </a>
      <a href="#/settings/alerts" aria-current={current === "alerts" ? "page" : undefined}>
        Chat alerts
      </a>
      <a href="#/settings/portability" aria-current={current === "portability" ? "page" : undefined}>
        Import and export
      </a>
    </nav>
  );
}

export function IdentityScreen() {
  const loaded = useLoad(() => gql(IdentitySettingsDocument));
  const identity = loaded.data?.settings.identity;
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <section aria-labelledby="identity-title">
      <SettingsViews current="identity" />
      <h1 id="identity-title">Identity providers</h1>
      <p class="hint">
        Readers signed in at your site's own identity provider (Auth0, Okta, Keycloak, Cognito, Firebase, any OpenID Connect server): a
        token it signed is accepted in X-Service-Identity, from your backend or from a page with a publishable key. Its reader is{" "}
        <code>&lt;issuer&gt;#&lt;sub&gt;</code>. Tokens signed with HS256 keep using the tenant's identity secret.
      </p>
      <ErrorMessage error={loaded.error} />
      {notice && <Notice>{notice}</Notice>}
      {identity && (
        <IdentityForm
          key={JSON.stringify(identity)}
          current={identity}
          onSaved={(saved, msg) => {
            loaded.setData({ settings: { identity: saved } });
            setNotice(msg);
          }}
          onNotice={setNotice}
        />
      )}
      <TokenTest />
    </section>
  );
}

function IdentityForm({
  current,
  onSaved,
  onNotice,
}: {
  current: IdentityFieldsFragment;
  onSaved: (s: IdentityFieldsFragment, notice: string) => void;
  onNotice: (n: string | null) => void;
}) {
  const [drafts, setDrafts] = useState<Draft[]>(() => current.providers.map(draftOf));
  const [overlap, setOverlap] = useState(String(current.secretOverlapHours));
  const [errors, setErrors] = useState<Errors>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const edit = (key: number, change: (d: Draft) => Draft) => setDrafts((all) => all.map((d) => (d.key === key ? change(d) : d)));

  const save = () => {
    setErrors({});
    setError(null);
    onNotice(null);
    const hours = overlap.trim();
    if (!/^\d+$/.test(hours)) {
      setErrors({ secretOverlapHours: "must be a whole number of hours, 0 to 720" });
      setError("Some settings are not valid; see the messages beside them.");
      return;
    }
    // only what the operator changed: the providers list as a whole (the PATCH replaces it), the overlap on its own
    const patch = changedFields(
      { providers: current.providers.map(serverInput), secretOverlapHours: current.secretOverlapHours },
      { providers: drafts.map(draftInput), secretOverlapHours: Number(hours) },
    ) as IdentitySettingsPatch;
    if (Object.keys(patch).length === 0) {
      onNotice("Nothing changed: no setting was saved.");
      return;
    }
    setBusy(true);
    gql(UpdateIdentityDocument, { input: { identity: patch } })
      .then(
        (d) => onSaved(d.updateSettings.identity, `Identity settings saved: ${Object.keys(patch).join(", ")}.`),
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
      class="settings safety identity"
      aria-labelledby="providers-title"
      // the service checks every field and its answer is shown beside each (a browser's own bubble would name one at a time)
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <h2 id="providers-title">Providers</h2>
      <ErrorMessage error={error} />
      <FieldError errors={errors} path="providers" />
      {drafts.length === 0 && <p>No identity provider: only HS256 assertions signed with the tenant's identity secret are accepted.</p>}
      {drafts.map((d, i) => (
        <ProviderFields
          key={d.key}
          d={d}
          n={i + 1}
          errors={errors}
          prefix={`providers.${i}`}
          onChange={(change) => edit(d.key, change)}
          onRemove={() => setDrafts((all) => all.filter((x) => x.key !== d.key))}
        />
      ))}
      <div class="actions">
        <button
          type="button"
          class="btn-plain"
          disabled={drafts.length >= MAX_PROVIDERS}
          aria-describedby="providers-count"
          onClick={() => setDrafts((all) => [...all, blank()])}
        >
          Add a provider
        </button>
        <span id="providers-count" class="hint">
          {drafts.length} of {MAX_PROVIDERS} providers
        </span>
      </div>
      <h2>Identity secret rotation</h2>
      <div>
        <label>
          Secret overlap (hours)
          <input
            name="secretOverlapHours"
            type="number"
            min={0}
            max={720}
            value={overlap}
            onInput={(e) => setOverlap(e.currentTarget.value)}
            {...invalid(errors, "secretOverlapHours")}
            aria-describedby={["overlap-hint", ...(errors.secretOverlapHours ? ["err-secretOverlapHours"] : [])].join(" ")}
          />
        </label>
        <span id="overlap-hint" class="hint">
          After a rotation (Settings › General), the secret before keeps verifying this long. 0 to 720; 0: it stops at once.
        </span>
        <FieldError errors={errors} path="secretOverlapHours" />
      </div>
      <button type="submit" disabled={busy}>
        Save identity settings
      </button>
    </form>
  );
}

function ProviderFields({
  d,
  n,
  errors,
  prefix,
  onChange,
  onRemove,
}: {
  d: Draft;
  n: number;
  errors: Errors;
  prefix: string;
  onChange: (change: (d: Draft) => Draft) => void;
  onRemove: () => void;
}) {
  const p = (field: string) => `${prefix}.${field}`;
  const text = (field: "issuer" | "jwksUri", label: string, placeholder: string, hint: string) => (
    <div>
      <label>
        {label}
        <input
          type="url"
          placeholder={placeholder}
          value={d[field]}
          onInput={(e) => {
            const v = e.currentTarget.value;
            onChange((x) => ({ ...x, [field]: v }));
          }}
          {...invalid(errors, p(field))}
        />
      </label>
      <span class="hint">{hint}</span>
      <FieldError errors={errors} path={p(field)} />
    </div>
  );
  return (
    <fieldset aria-label={`Provider ${n}`}>
      <legend>
        Provider {n}
        {d.issuer || d.jwksUri ? `: ${d.issuer || d.jwksUri}` : ""}
      </legend>
      <FieldError errors={errors} path={prefix} />
      {text("issuer", "Issuer", "https://login.example.com", "OpenID Connect: its discovery document names the key set.")}
      {text(
        "jwksUri",
        "Key set URL (jwksUri)",
        "https://example.com/.well-known/jwks.json",
        "Only when the provider has no discovery; with it, any issuer its keys sign for is accepted unless Issuer is given too.",
      )}
      <div>
        <label>
          Audience (one per line)
          <textarea
            rows={2}
            spellcheck={false}
            value={d.audience}
            onInput={(e) => {
              const v = e.currentTarget.value;
              onChange((x) => ({ ...x, audience: v }));
            }}
            {...invalid(errors, p("audience"))}
          />
        </label>
        <span class="hint">A token's aud must be one of these: your client_id for ID tokens, your API's audience for access tokens.</span>
        <FieldError errors={errors} path={p("audience")} />
      </div>
      <fieldset class="algorithms" aria-describedby={errors[p("algorithms")] ? `err-${p("algorithms")}` : undefined}>
        <legend>Algorithms</legend>
        {ALGORITHMS.map((a) => (
          <label class="check" key={a}>
            <input
              type="checkbox"
              checked={d.algorithms.includes(a)}
              onChange={(e) => {
                const on = e.currentTarget.checked;
                onChange((x) => ({ ...x, algorithms: on ? [...x.algorithms, a] : x.algorithms.filter((y) => y !== a) }));
              }}
            />
            {a}
          </label>
        ))}
        <FieldError errors={errors} path={p("algorithms")} />
      </fieldset>
      <div class="claims">
        {CLAIMS.map((c) => (
          <div key={c.key}>
            <label>
              {c.label}
              <input
                value={d.claims[c.key]}
                spellcheck={false}
                onInput={(e) => {
                  const v = e.currentTarget.value;
                  onChange((x) => ({ ...x, claims: { ...x.claims, [c.key]: v } }));
                }}
                {...invalid(errors, p(`claims.${c.key}`))}
              />
            </label>
            <span class="hint">{c.hint}</span>
            <FieldError errors={errors} path={p(`claims.${c.key}`)} />
          </div>
        ))}
      </div>
      <div class="actions">
        <button type="button" class="btn-delete" onClick={onRemove}>
          Remove provider {n}
        </button>
      </div>
    </fieldset>
  );
}

type TokenAnswer = TestIdentityTokenMutation["testIdentityToken"];

/** "Test token": whom a reader token stands for, or why a request carrying it would get 401 invalid_identity. */
function TokenTest() {
  const action = useAction();
  const [token, setToken] = useState("");
  const [answer, setAnswer] = useState<TokenAnswer | null>(null);
  return (
    <form
      class="token-test"
      aria-labelledby="token-test-title"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          setAnswer(null);
          setAnswer((await gql(TestIdentityTokenDocument, { token: token.trim() })).testIdentityToken);
        });
      }}
    >
      <h2 id="token-test-title">Test a token</h2>
      <label>
        Test token
        <textarea
          rows={4}
          spellcheck={false}
          required
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          aria-describedby="token-test-hint"
        />
      </label>
      <span id="token-test-hint" class="hint">
        Paste an ID token from your provider (or an HS256 assertion): it is verified against the saved settings as a request's
        X-Service-Identity would be. Nothing is stored.
      </span>
      <div class="actions">
        <button type="submit" disabled={action.busy || !token.trim()}>
          {action.busy ? "Verifying…" : "Verify token"}
        </button>
      </div>
      <ErrorMessage error={action.error} />
      <div role="status">{answer && <TokenAnswerView a={answer} />}</div>
    </form>
  );
}

function TokenAnswerView({ a }: { a: TokenAnswer }) {
  const avatar = httpHref(a.reader?.avatarUrl);
  return (
    <div class={`token-answer hook-answer ${a.ok ? "ok" : "failed"}`}>
      {a.ok && a.reader ? (
        <>
          <p>
            <strong>Accepted.</strong> A request carrying this token acts as this reader:
          </p>
          <dl class="token-reader">
            <dt>Reader id</dt>
            <dd>
              <code>{a.reader.id}</code>
            </dd>
            <dt>Name</dt>
            <dd>{a.reader.name}</dd>
            <dt>Avatar</dt>
            <dd>
              {avatar ? (
                <>
                  <img src={avatar} alt="" width={32} height={32} referrerpolicy="no-referrer" /> <code>{a.reader.avatarUrl}</code>
                </>
              ) : (
                (a.reader.avatarUrl ?? "none")
              )}
            </dd>
            <dt>Email</dt>
            <dd>{a.reader.email ?? "none"}</dd>
            <dt>Email verified</dt>
            <dd>{a.reader.emailVerified ? "yes" : "no"}</dd>
          </dl>
        </>
      ) : (
        <p>
          <strong>Refused.</strong> A request carrying it gets 401 invalid_identity: {a.error ?? "the token is not accepted"}
        </p>
      )}
      <h3>Header</h3>
      {a.header ? <pre class="json">{JSON.stringify(a.header, null, 2)}</pre> : <p>None: it is not a JWT.</p>}
      <h3>Claims (decoded, not trusted)</h3>
      {a.claims ? <pre class="json">{JSON.stringify(a.claims, null, 2)}</pre> : <p>None: it is not a JWT.</p>}
    </div>
  );
}
