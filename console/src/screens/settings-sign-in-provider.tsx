// A provider of Settings › Sign-in (settings-sign-in.tsx): the form's draft of it, the PATCH's shape
// both the server's and the form's go through, its fields and its Test (the service calls the saved
// provider's endpoints: GraphQL testSignInProvider). Its fields' labels and help are the settings'
// description's (src/tenancy/settings/sign-in.ts); the examples (placeholders) are the form's own.
import { useState } from "preact/hooks";
import { gql } from "../api";
import {
  TestSignInProviderDocument,
  type SignInFieldsFragment,
  type SignInProviderInput,
  type TestSignInProviderMutation,
} from "../gql/graphql";
import { ErrorMessage, useAction } from "../ui";
import { FieldError, type Errors, type ProviderFieldsProps } from "../components/fields";
import { secretHelp, textOf } from "./settings-fields";

export const MAX_SIGN_IN_PROVIDERS = 5;
const ENDPOINTS = [
  { key: "authorizationEndpoint", placeholder: "https://github.com/login/oauth/authorize" },
  { key: "tokenEndpoint", placeholder: "https://github.com/login/oauth/access_token" },
  { key: "userinfoEndpoint", placeholder: "https://api.github.com/user" },
] as const;

type Provider = SignInFieldsFragment["oidc"][number];
type Claims = NonNullable<Provider["claims"]>;
/** A provider as the form holds it. */
export interface Draft {
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
export const draftOf = (p: Provider): Draft => ({
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
export const blank = (): Draft => ({
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
export function inputOf(d: Omit<Draft, "key" | "storedId">): SignInProviderInput {
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

/** aria-invalid, and aria-describedby naming the field's problem (if any) and its hint. */
export const described = (errors: Errors, path: string, hint?: string) => ({
  "aria-invalid": errors[path] ? ("true" as const) : undefined,
  "aria-describedby": [errors[path] ? `err-${path}` : null, hint ?? null].filter(Boolean).join(" ") || undefined,
});

export function ProviderFields({ d, n, errors, prefix, tenantId, onChange, onRemove }: ProviderFieldsProps<Draft> & { tenantId: string }) {
  const p = (field: string) => `${prefix}.${field}`;
  const hintId = (field: string) => `hint-${prefix}.${field}`;
  const stored = d.storedId !== null && d.id.trim() === d.storedId;
  /** a text field with its setting's label (signIn.oidc.<field>) */
  const text = (
    field: "id" | "label" | "issuer" | "authorizationEndpoint" | "tokenEndpoint" | "userinfoEndpoint" | "clientId" | "scopes",
    opts: { placeholder?: string; hint?: string; type?: string } = {},
  ) => (
    <div>
      <label>
        {textOf(`signIn.oidc.${field}`).label}
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
        {text("id", {
          placeholder: "github",
          // once typed, what it makes of the provider's readers' ids
          hint: id ? `Its readers are ${id}:<their id>.` : textOf("signIn.oidc.id").help,
        })}
        {text("label", { placeholder: "GitHub", hint: textOf("signIn.oidc.label").help })}
      </div>
      {id && (
        <p class="hint redirect-uri">
          Redirect URI to register with the provider: <code>{`${location.origin}/auth/v1/${tenantId}/callback/${id}`}</code>
        </p>
      )}
      {text("issuer", { type: "url", placeholder: "https://accounts.google.com", hint: textOf("signIn.oidc.issuer").help })}
      <div class="endpoints">
        {ENDPOINTS.map((e) => (
          <div key={e.key}>{text(e.key, { type: "url", placeholder: e.placeholder })}</div>
        ))}
      </div>
      <div class="pair">
        {text("clientId")}
        <div>
          <label>
            {textOf("signIn.oidc.clientSecret").label}
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
            {secretHelp("signIn.oidc.clientSecret", stored)}
          </span>
          <FieldError errors={errors} path={p("clientSecret")} />
        </div>
      </div>
      {text("scopes", { placeholder: "openid email profile", hint: textOf("signIn.oidc.scopes").help })}
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
