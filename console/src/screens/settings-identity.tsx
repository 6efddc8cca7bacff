// Settings › Identity providers (#/settings/identity, owners): the tenant's `identity` settings
// (contract section 13; README "Readers from your identity provider") — up to 5 providers, each named
// by an OIDC issuer or a bare key set URL, with its audience, allowed algorithms and claim mapping —
// and how long the identity secret before a rotation keeps verifying. Saving sends only what changed
// (form-diff.ts): the whole `providers` list when any provider was added, edited or removed (the
// PATCH replaces the list), `secretOverlapHours` when it changed, nothing else. Each problem of the
// answer is shown beside the field it names. "Test token" verifies a reader token as a request would
// (testIdentityToken) and shows the reader it stands for with its header and claims, or why it is refused.
// The settings' labels and help are the settings' description's (src/tenancy/settings/identity.ts,
// through console/src/settings-text.ts).
import { useState } from "preact/hooks";
import { ApiError, gql } from "../api";
import {
  IdentitySettingsDocument,
  TestIdentityTokenDocument,
  UpdateIdentityDocument,
  type IdentityFieldsFragment,
  type IdentitySettingsPatch,
  type TestIdentityTokenMutation,
} from "../gql/graphql";
import { ErrorMessage, Notice, messageOf, useAction, useLoad } from "../ui";
import { changedFields } from "../form-diff";
import { httpHref } from "../safe-url";
import { FieldError, ProviderList, type Errors } from "../components/fields";
import { SettingsViews } from "./settings-views";
import { textOf } from "./settings-fields";
import {
  MAX_PROVIDERS,
  ProviderFields,
  blank,
  draftInput,
  draftOf,
  errorsByField,
  invalid,
  serverInput,
  type Draft,
} from "./settings-identity-provider";

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
      <ProviderList
        title={textOf("identity.providers").label}
        titleId="providers-title"
        countId="providers-count"
        path="providers"
        errors={errors}
        drafts={drafts}
        setDrafts={setDrafts}
        blank={blank}
        max={MAX_PROVIDERS}
        message={<ErrorMessage error={error} />}
        empty="No identity provider: only HS256 assertions signed with the tenant's identity secret are accepted."
      >
        {(props) => <ProviderFields {...props} />}
      </ProviderList>
      <h2>Identity secret rotation</h2>
      <div>
        <label>
          {textOf("identity.secretOverlapHours").label}
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
          {textOf("identity.secretOverlapHours").help}
        </span>
        <FieldError errors={errors} path="secretOverlapHours" />
      </div>
      <button type="submit" disabled={busy}>
        Save identity settings
      </button>
    </form>
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
