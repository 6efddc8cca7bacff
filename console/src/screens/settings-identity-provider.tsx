// A provider of Settings › Identity providers (settings-identity.tsx): the form's draft of it, the
// PATCH's shape both the server's and the form's go through, the answer's problems by field, and its fields
// (their labels and help: the settings' description's, src/tenancy/settings/identity.ts; the examples are the form's own).
import type { IdentityFieldsFragment, IdentityProviderInput } from "../gql/graphql";
import { FieldError, type Errors, type ProviderFieldsProps } from "../components/fields";
import { textOf } from "./settings-fields";
export const MAX_PROVIDERS = 5;
const ALGORITHMS = ["RS256", "PS256", "ES256", "EdDSA"] as const;
const CLAIMS = (["name", "picture", "email"] as const).map((key) => ({ key, ...textOf(`identity.providers.claims.${key}`) }));

type Provider = IdentityFieldsFragment["providers"][number];
/** A provider as the form holds it (audience as typed, one a line). */
export interface Draft {
  key: number;
  issuer: string;
  jwksUri: string;
  audience: string;
  algorithms: string[];
  claims: { name: string; picture: string; email: string };
}

let nextKey = 1;
export const draftOf = (p: Provider): Draft => ({
  key: nextKey++,
  issuer: p.issuer ?? "",
  jwksUri: p.jwksUri ?? "",
  audience: p.audience.join("\n"),
  algorithms: [...p.algorithms],
  claims: { ...p.claims },
});
export const blank = (): Draft => ({
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
export const serverInput = (p: Provider) =>
  inputOf({ issuer: p.issuer ?? "", jwksUri: p.jwksUri ?? "", audience: p.audience, algorithms: p.algorithms, claims: p.claims });
export const draftInput = (d: Draft) =>
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

export const invalid = (errors: Errors, path: string) => ({
  "aria-invalid": errors[path] ? ("true" as const) : undefined,
  "aria-describedby": errors[path] ? `err-${path}` : undefined,
});

export function ProviderFields({ d, n, errors, prefix, onChange, onRemove }: ProviderFieldsProps<Draft>) {
  const p = (field: string) => `${prefix}.${field}`;
  const text = (field: "issuer" | "jwksUri", placeholder: string) => (
    <div>
      <label>
        {textOf(`identity.providers.${field}`).label}
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
      <span class="hint">{textOf(`identity.providers.${field}`).help}</span>
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
      {text("issuer", "https://login.example.com")}
      {text("jwksUri", "https://example.com/.well-known/jwks.json")}
      <div>
        <label>
          {textOf("identity.providers.audience").label}
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
        <span class="hint">{textOf("identity.providers.audience").help}</span>
        <FieldError errors={errors} path={p("audience")} />
      </div>
      <fieldset class="algorithms" aria-describedby={errors[p("algorithms")] ? `err-${p("algorithms")}` : undefined}>
        <legend>{textOf("identity.providers.algorithms").label}</legend>
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
            <span class="hint">{c.help}</span>
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
