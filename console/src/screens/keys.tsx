// Keys: API keys (label, prefix, capabilities, state, expiry, last use), "Create key" with the raw
// key shown exactly once, "Revoke" with a confirmation; publishable keys beside them.
import { useState } from "preact/hooks";
import { gql, when } from "../api";
import {
  CreateKeyDocument,
  CreatePublishableKeyDocument,
  KeysDocument,
  RevokeKeyDocument,
  RevokePublishableKeyDocument,
  type Capability,
} from "../gql/graphql";
import { Copy, ErrorMessage, useAction, useLoad } from "../ui";

// every capability of the schema's enum, in the order shown: a capability added to the service and
// missing here fails the console's type check
const CAPABILITY_ORDER: Record<Capability, number> = {
  moderate_content: 0,
  manage_settings: 1,
  manage_api_keys: 2,
  manage_webhooks: 3,
  view_analytics: 4,
  manage_readers: 5,
};
const CAPABILITIES = (Object.keys(CAPABILITY_ORDER) as Capability[]).sort((a, b) => CAPABILITY_ORDER[a] - CAPABILITY_ORDER[b]);

function Secret({ title, value, onDone }: { title: string; value: string; onDone: () => void }) {
  return (
    <div class="secret" role="region" aria-label={title}>
      <h2>{title}</h2>
      <p class="warning">Copy it now: it is shown only this once and cannot be recovered.</p>
      <p>
        <code class="raw">{value}</code> <Copy value={value} />
      </p>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

function RevokeButton({ onConfirm, name }: { onConfirm: () => Promise<void>; name: string }) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" onClick={() => setAsking(true)}>
        Revoke
      </button>
    );
  return (
    <span role="group" aria-label={`Confirm revoking ${name}`}>
      Revoke {name}?{" "}
      <button type="button" class="danger" onClick={() => void onConfirm().finally(() => setAsking(false))}>
        Confirm revoke
      </button>{" "}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function KeysScreen() {
  const keys = useLoad(() => gql(KeysDocument));
  const [creating, setCreating] = useState<"secret" | "publishable" | null>(null);
  const [shown, setShown] = useState<{ title: string; value: string } | null>(null);
  const action = useAction();
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});

  const create = (form: HTMLFormElement) => {
    const f = new FormData(form);
    const label = String(f.get("label") ?? "");
    setFieldErrors({});
    void action.run(async () => {
      try {
        if (creating === "publishable") {
          const r = await gql(CreatePublishableKeyDocument, { label });
          setShown({ title: "Your new publishable key", value: r.createPublishableKey.key });
        } else {
          const expires = String(f.get("expiresAt") ?? "");
          const r = await gql(CreateKeyDocument, {
            input: {
              label,
              capabilities: CAPABILITIES.filter((c) => f.get(c) === "on"),
              expiresAt: expires ? new Date(expires).toISOString() : null,
            },
          });
          setShown({ title: "Your new API key", value: r.createApiKey.key });
        }
        setCreating(null);
        keys.reload();
      } catch (e) {
        const fields = (e as { fields?: { path: string; message: string }[] }).fields ?? [];
        setFieldErrors(Object.fromEntries(fields.map((x) => [x.path.split(/[.[]/)[0]!, x.message])));
        throw e;
      }
    });
  };

  const apiKeys = keys.data?.apiKeys.edges.map((e) => e.node) ?? [];
  const publishable = keys.data?.publishableKeys.edges.map((e) => e.node) ?? [];
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">Keys</h1>
      <ErrorMessage error={keys.error ?? action.error} />
      {shown && <Secret title={shown.title} value={shown.value} onDone={() => setShown(null)} />}
      <div class="toolbar">
        <button type="button" onClick={() => setCreating("secret")}>
          Create key
        </button>
        <button type="button" onClick={() => setCreating("publishable")}>
          Create publishable key
        </button>
      </div>
      {creating && (
        <form
          class="panel"
          aria-label={creating === "secret" ? "New API key" : "New publishable key"}
          onSubmit={(e) => {
            e.preventDefault();
            create(e.currentTarget);
          }}
        >
          <label>
            Label
            <input name="label" required maxLength={100} aria-invalid={fieldErrors.label ? "true" : undefined} />
          </label>
          {fieldErrors.label && <span class="field-error">{fieldErrors.label}</span>}
          {creating === "secret" && (
            <>
              <fieldset>
                <legend>Capabilities</legend>
                {CAPABILITIES.map((c) => (
                  <label key={c} class="check">
                    <input type="checkbox" name={c} /> {c}
                  </label>
                ))}
              </fieldset>
              <label>
                Expires at (optional)
                <input name="expiresAt" type="datetime-local" aria-invalid={fieldErrors.expiresAt ? "true" : undefined} />
              </label>
              {fieldErrors.expiresAt && <span class="field-error">{fieldErrors.expiresAt}</span>}
            </>
          )}
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              Create
            </button>
            <button type="button" onClick={() => setCreating(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <h2>API keys</h2>
      <KeyTable
        rows={apiKeys}
        capabilities
        onRevoke={(id) => action.run(async () => void (await gql(RevokeKeyDocument, { id }), keys.reload())).then(() => undefined)}
      />
      <h2>Publishable keys</h2>
      <KeyTable
        rows={publishable}
        onRevoke={(id) =>
          action.run(async () => void (await gql(RevokePublishableKeyDocument, { id }), keys.reload())).then(() => undefined)
        }
      />
    </section>
  );
}

interface KeyRow {
  id: string;
  label: string;
  prefix: string;
  state: string;
  lastUsedAt?: string | null;
  capabilities?: string[];
  expiresAt?: string | null;
}

/** One table for both kinds of key; API keys add their capabilities and expiry. */
function KeyTable({
  rows,
  capabilities = false,
  onRevoke,
}: {
  rows: KeyRow[];
  capabilities?: boolean;
  onRevoke: (id: string) => Promise<void>;
}) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Scrollable table">
      <table>
        <thead>
          <tr>
            <th scope="col">Label</th>
            <th scope="col">Prefix</th>
            {capabilities && <th scope="col">Capabilities</th>}
            <th scope="col">State</th>
            {capabilities && <th scope="col">Expires</th>}
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((k) => (
            <tr key={k.id}>
              <td>{k.label}</td>
              <td>
                <code>{k.prefix}</code>
              </td>
              {capabilities && <td>{k.capabilities?.join(", ") || "none"}</td>}
              <td>{k.state}</td>
              {capabilities && <td>{when(k.expiresAt)}</td>}
              <td>{when(k.lastUsedAt)}</td>
              <td>{k.state === "active" && <RevokeButton name={k.label} onConfirm={() => onRevoke(k.id)} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
