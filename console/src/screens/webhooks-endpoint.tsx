// One endpoint's page: its state, "Verify", "Rotate secret" (the new secret shown once) and "Enable"
// when disabled, its edit form (webhooks-edit.tsx) and its delivery log (webhooks-deliveries.tsx).
// Every action's message shows at the top; after one the endpoint and the log are read again.
import { useState } from "preact/hooks";
import { gql, when } from "../api";
import {
  DeliveriesDocument,
  EnableWebhookDocument,
  RotateWebhookSecretDocument,
  VerifyWebhookDocument,
  type EndpointFragment,
} from "../gql/graphql";
import { Copy, ErrorMessage, Notice, useAction, useLoad, usePages } from "../ui";
import { stateLabel } from "./webhooks-common";
import { EndpointEditForm } from "./webhooks-edit";
import { DeliveryLog } from "./webhooks-deliveries";

export function EndpointPage({ endpoint: e, onChange }: { endpoint: EndpointFragment; onChange: () => void }) {
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const [rotated, setRotated] = useState<{ secret: string; standard: string; until: string } | null>(null);
  const pages = usePages();
  const cursor = pages.cursor;
  const log = useLoad(() => gql(DeliveriesDocument, { id: e.webhookId, after: cursor }), [e.webhookId, cursor]);

  const run = (fn: () => Promise<string | void>) =>
    void action.run(async () => {
      const msg = await fn();
      if (msg) setNotice(msg);
      onChange();
      log.reload();
    });

  return (
    <section aria-labelledby="endpoint-title">
      <p>
        <a href="#/webhooks">← All endpoints</a>
      </p>
      <h1 id="endpoint-title">{e.url}</h1>
      <p>
        {e.verified ? "Verified" : e.verifying ? "Verifying…" : "Not verified"} · state <strong>{stateLabel(e.state)}</strong> ·{" "}
        {e.consecutiveFailures} failures in a row · signing kid <code>{e.kid}</code>
      </p>
      <ErrorMessage error={action.error ?? log.error} />
      {notice && <Notice>{notice}</Notice>}
      {rotated && (
        <div class="secret" role="region" aria-label="The new signing secret">
          <p class="warning">The new secret is shown only this once. The old one stays valid until {when(rotated.until)}.</p>
          <p>
            <code class="raw">{rotated.secret}</code> <Copy value={rotated.secret} />
          </p>
          <p>
            Standard Webhooks form: <code class="raw">{rotated.standard}</code>
          </p>
        </div>
      )}
      <div class="actions">
        <button
          type="button"
          onClick={() =>
            run(async () => {
              const r = await gql(VerifyWebhookDocument, { id: e.webhookId });
              return r.verifyWebhookEndpoint.verified
                ? "The endpoint answered the handshake: verified."
                : `Not verified: ${r.verifyWebhookEndpoint.error ?? "no answer"}.`;
            })
          }
        >
          Verify
        </button>
        <button
          type="button"
          onClick={() =>
            run(async () => {
              const r = await gql(RotateWebhookSecretDocument, { id: e.webhookId });
              setRotated({
                secret: r.rotateWebhookSecret.secret,
                standard: r.rotateWebhookSecret.standardWebhooksSecret,
                until: r.rotateWebhookSecret.previousKidValidUntil,
              });
            })
          }
        >
          Rotate secret
        </button>
        {e.state === "disabled" && (
          <button
            type="button"
            onClick={() =>
              run(async () => {
                await gql(EnableWebhookDocument, { id: e.webhookId });
                return "Enabled again: deliveries resume.";
              })
            }
          >
            Enable
          </button>
        )}
      </div>

      <EndpointEditForm endpoint={e} run={run} onNotice={setNotice} />
      <DeliveryLog webhookId={e.webhookId} log={log.data} pager={pages.pager} action={action} run={run} />
    </section>
  );
}
