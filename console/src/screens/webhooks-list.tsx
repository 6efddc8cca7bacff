// The endpoints (url, events, verified, state, recent failures), each linking to its page, and
// "Add endpoint" (webhooks-new.tsx).
import { useState } from "preact/hooks";
import type { EndpointFragment } from "../gql/graphql";
import { ErrorMessage, useAction } from "../ui";
import { stateLabel } from "./webhooks-common";
import { NewEndpointForm, SigningSecret, type NewSecret } from "./webhooks-new";

export function EndpointList({ endpoints, error, reload }: { endpoints: EndpointFragment[]; error: string | null; reload: () => void }) {
  const [adding, setAdding] = useState(false);
  const [secret, setSecret] = useState<NewSecret | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <ErrorMessage error={error ?? action.error} />
      {secret && <SigningSecret secret={secret} onDone={() => setSecret(null)} />}
      <div class="toolbar">
        <button type="button" onClick={() => setAdding(true)}>
          Add endpoint
        </button>
      </div>
      {adding && (
        <NewEndpointForm
          action={action}
          onCreated={(s) => {
            setSecret(s);
            setAdding(false);
            reload();
          }}
          onCancel={() => setAdding(false)}
        />
      )}
      <div class="table-wrap" tabIndex={0} role="region" aria-label="Scrollable table">
        <table>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Verified</th>
              <th scope="col">State</th>
              <th scope="col">Recent failures</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((e) => (
              <tr key={e.webhookId}>
                <td>
                  <a href={`#/webhooks/${e.webhookId}`}>{e.url}</a>
                </td>
                <td>{e.events.join(", ")}</td>
                <td>{e.verified ? "yes" : e.verifying ? "verifying…" : "no"}</td>
                <td>{stateLabel(e.state)}</td>
                <td>{e.consecutiveFailures}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {endpoints.length === 0 && <p>No endpoints yet.</p>}
    </section>
  );
}
