// An endpoint's edit form: url, events, description and the delivery tunables, showing the current
// values and sending only what the operator changed (form-diff.ts).
import { gql } from "../api";
import { UpdateWebhookDocument, type EndpointFragment } from "../gql/graphql";
import { changedFields } from "../form-diff";
import { TUNABLES, events } from "./webhooks-common";

export function EndpointEditForm({
  endpoint: e,
  run,
  onNotice,
}: {
  endpoint: EndpointFragment;
  run: (fn: () => Promise<string | void>) => void;
  onNotice: (message: string) => void;
}) {
  const delivery = (e.delivery ?? {}) as Record<string, number>;
  return (
    <form
      class="panel"
      aria-label="Edit endpoint"
      key={JSON.stringify(e)}
      onSubmit={(ev) => {
        ev.preventDefault();
        const f = new FormData(ev.currentTarget);
        // an emptied tunable removes the override (null): the tenant's value applies again
        const tunables = Object.fromEntries(
          TUNABLES.map((t) => {
            const v = String(f.get(t) ?? "").trim();
            return [t, v === "" ? null : Number(v)];
          }),
        );
        const input = changedFields(
          { url: e.url, events: e.events, description: e.description ?? null, delivery },
          {
            url: String(f.get("url")),
            events: events(String(f.get("events"))),
            description: String(f.get("description") ?? "").trim() || null,
            delivery: tunables,
          },
        );
        if (Object.keys(input).length === 0) {
          onNotice("Nothing changed: the endpoint was not saved.");
          return;
        }
        run(async () => {
          await gql(UpdateWebhookDocument, { id: e.webhookId, input });
          return "Saved.";
        });
      }}
    >
      <h2>Edit</h2>
      <label>
        URL
        <input name="url" type="url" required defaultValue={e.url} />
      </label>
      <label>
        Events (comma-separated, or *)
        <input name="events" required defaultValue={e.events.join(", ")} />
      </label>
      <label>
        Description
        <input name="description" defaultValue={e.description ?? ""} />
      </label>
      <fieldset>
        <legend>Delivery tunables (empty = the tenant's)</legend>
        {TUNABLES.map((t) => (
          <label key={t}>
            {t}
            <input name={t} type="number" min={1} defaultValue={delivery[t] === undefined ? "" : String(delivery[t])} />
          </label>
        ))}
      </fieldset>
      <button type="submit">Save endpoint</button>
    </form>
  );
}
