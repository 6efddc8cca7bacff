// "Add endpoint": the new endpoint's form, and its signing secret shown once after it is created.
import { gql } from "../api";
import { CreateWebhookDocument } from "../gql/graphql";
import { Copy, type useAction } from "../ui";
import { events } from "./webhooks-common";

export interface NewSecret {
  secret: string;
  standard: string;
}

export function NewEndpointForm({
  action,
  onCreated,
  onCancel,
}: {
  action: ReturnType<typeof useAction>;
  onCreated: (secret: NewSecret) => void;
  onCancel: () => void;
}) {
  return (
    <form
      class="panel"
      aria-label="New endpoint"
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        void action.run(async () => {
          const r = await gql(CreateWebhookDocument, {
            input: {
              url: String(f.get("url")),
              events: events(String(f.get("events"))),
              description: String(f.get("description") || "") || null,
            },
          });
          onCreated({ secret: r.createWebhook.secret, standard: r.createWebhook.standardWebhooksSecret });
        });
      }}
    >
      <label>
        URL
        <input name="url" type="url" required placeholder="https://hooks.example.com/engagement" />
      </label>
      <label>
        Events (comma-separated, or *)
        <input name="events" required defaultValue="*" />
      </label>
      <label>
        Description
        <input name="description" />
      </label>
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          Add
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function SigningSecret({ secret, onDone }: { secret: NewSecret; onDone: () => void }) {
  return (
    <div class="secret" role="region" aria-label="The endpoint's signing secret">
      <h2>Signing secret</h2>
      <p class="warning">Copy it now: it is shown only this once.</p>
      <p>
        <code class="raw">{secret.secret}</code> <Copy value={secret.secret} />
      </p>
      <p>
        Standard Webhooks form: <code class="raw">{secret.standard}</code>{" "}
        <Copy value={secret.standard} label="Copy Standard Webhooks secret" />
      </p>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}
