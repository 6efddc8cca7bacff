// Webhooks: endpoints (url, events, verified, state, recent failures), "Add endpoint" (secret shown
// once), and per endpoint: edit url / events / tunables, "Verify", "Rotate secret", the delivery log
// (paged) with "Redeliver" for selected events or since a time, and "Enable" when disabled. The edit
// form shows the endpoint's current values and sends only what the operator changed (form-diff.ts).
import { useState } from "preact/hooks";
import { gql, when } from "../api";
import {
  CreateWebhookDocument,
  DeliveriesDocument,
  EnableWebhookDocument,
  RedeliverWebhookDocument,
  RotateWebhookSecretDocument,
  UpdateWebhookDocument,
  VerifyWebhookDocument,
  WebhooksDocument,
  type DeliveriesQuery,
  type EndpointFragment,
} from "../gql/graphql";
import { Copy, ErrorMessage, Notice, useAction, useLoad, usePages } from "../ui";
import { changedFields } from "../form-diff";

const TUNABLES = ["maxAttempts", "backoffBaseMs", "attemptTimeoutMs", "breakerThreshold", "breakerCooldownMs", "disableThreshold"] as const;
const stateLabel = (s: string) => (s === "circuit_open" ? "circuit open" : s);
const events = (v: string) =>
  v
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

export function WebhooksScreen({ id }: { id?: string | undefined }) {
  const list = useLoad(() => gql(WebhooksDocument));
  const endpoints = list.data?.webhooks.edges.map((e) => e.node) ?? [];
  const selected = id ? endpoints.find((e) => e.webhookId === id) : undefined;
  if (id && selected) return <EndpointPage endpoint={selected} onChange={list.reload} />;
  return <EndpointList endpoints={endpoints} error={list.error} reload={list.reload} />;
}

function EndpointList({ endpoints, error, reload }: { endpoints: EndpointFragment[]; error: string | null; reload: () => void }) {
  const [adding, setAdding] = useState(false);
  const [secret, setSecret] = useState<{ secret: string; standard: string } | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <ErrorMessage error={error ?? action.error} />
      {secret && (
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
          <button type="button" onClick={() => setSecret(null)}>
            Done
          </button>
        </div>
      )}
      <div class="toolbar">
        <button type="button" onClick={() => setAdding(true)}>
          Add endpoint
        </button>
      </div>
      {adding && (
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
              setSecret({ secret: r.createWebhook.secret, standard: r.createWebhook.standardWebhooksSecret });
              setAdding(false);
              reload();
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
            <button type="button" onClick={() => setAdding(false)}>
              Cancel
            </button>
          </div>
        </form>
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
                <td>{e.verified ? "yes" : "no"}</td>
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

type Attempt = DeliveriesQuery["webhookDeliveries"]["edges"][number]["node"];

function EndpointPage({ endpoint: e, onChange }: { endpoint: EndpointFragment; onChange: () => void }) {
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const [rotated, setRotated] = useState<{ secret: string; standard: string; until: string } | null>(null);
  const pages = usePages();
  const cursor = pages.cursor;
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [pendingRedelivery, setPending] = useState<{ since: string; count: number } | null>(null);
  const log = useLoad(() => gql(DeliveriesDocument, { id: e.webhookId, after: cursor }), [e.webhookId, cursor]);
  const attempts: Attempt[] = log.data?.webhookDeliveries.edges.map((x) => x.node) ?? [];
  const delivery = (e.delivery ?? {}) as Record<string, number>;

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
        {e.verified ? "Verified" : "Not verified"} · state <strong>{stateLabel(e.state)}</strong> · {e.consecutiveFailures} failures in a
        row · signing kid <code>{e.kid}</code>
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
            setNotice("Nothing changed: the endpoint was not saved.");
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

      <h2>Delivery log</h2>
      <div class="table-wrap" tabIndex={0} role="region" aria-label="Scrollable table">
        <table>
          <thead>
            <tr>
              <th scope="col">
                <span class="sr-only">Select</span>
              </th>
              <th scope="col">Event</th>
              <th scope="col">Attempt</th>
              <th scope="col">Status</th>
              <th scope="col">Duration</th>
              <th scope="col">Error</th>
              <th scope="col">Time</th>
            </tr>
          </thead>
          <tbody>
            {attempts.map((a) => (
              <tr key={a.id}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${a.eventType} ${a.eventId}`}
                    checked={picked.has(a.eventId)}
                    onChange={(ev) => {
                      const next = new Set(picked);
                      if (ev.currentTarget.checked) next.add(a.eventId);
                      else next.delete(a.eventId);
                      setPicked(next);
                    }}
                  />
                </td>
                <td>{a.eventType}</td>
                <td>{a.attempt}</td>
                <td>{a.statusCode ?? "—"}</td>
                <td>{a.durationMs} ms</td>
                <td>{a.error ?? ""}</td>
                <td>{when(a.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {attempts.length === 0 && <p>No deliveries yet.</p>}
      {pages.pager(log.data?.webhookDeliveries.pageInfo)}
      <div class="actions">
        <button
          type="button"
          disabled={picked.size === 0}
          onClick={() =>
            run(async () => {
              const r = await gql(RedeliverWebhookDocument, { id: e.webhookId, input: { eventIds: [...picked] } });
              setPicked(new Set());
              return `Queued ${r.redeliverWebhook.queued} events again.`;
            })
          }
        >
          Redeliver {picked.size} selected
        </button>
      </div>
      <form
        class="inline"
        aria-label="Redeliver since a time"
        onSubmit={(ev) => {
          ev.preventDefault();
          const since = String(new FormData(ev.currentTarget).get("since"));
          if (!since) return;
          const iso = new Date(since).toISOString();
          void action.run(async () => {
            const count = (await gql(RedeliverWebhookDocument, { id: e.webhookId, input: { since: iso, dryRun: true } })).redeliverWebhook
              .queued;
            setPending({ since: iso, count });
          });
        }}
      >
        <label>
          Redeliver since
          <input name="since" type="datetime-local" required />
        </label>
        <button type="submit">Redeliver</button>
      </form>
      {pendingRedelivery && (
        <p role="group" aria-label="Confirm the redelivery">
          {pendingRedelivery.count} events since {when(pendingRedelivery.since)} will be sent again.{" "}
          <button
            type="button"
            disabled={pendingRedelivery.count === 0}
            onClick={() => {
              const since = pendingRedelivery.since;
              setPending(null);
              run(
                async () =>
                  `Queued ${(await gql(RedeliverWebhookDocument, { id: e.webhookId, input: { since } })).redeliverWebhook.queued} events again.`,
              );
            }}
          >
            Send {pendingRedelivery.count} again
          </button>{" "}
          <button type="button" onClick={() => setPending(null)}>
            Cancel
          </button>
        </p>
      )}
    </section>
  );
}
