// An endpoint's delivery log (paged): every attempt, "Redeliver" for the selected events, and
// "Redeliver since" a time, which first counts the events (a dry run) and asks to confirm.
import { useState } from "preact/hooks";
import { gql, when } from "../api";
import { RedeliverWebhookDocument, type DeliveriesQuery } from "../gql/graphql";
import type { useAction, usePages } from "../ui";

type Attempt = DeliveriesQuery["webhookDeliveries"]["edges"][number]["node"];

export function DeliveryLog({
  webhookId,
  log,
  pager,
  action,
  run,
}: {
  webhookId: string;
  log: DeliveriesQuery | null | undefined;
  pager: ReturnType<typeof usePages>["pager"];
  action: ReturnType<typeof useAction>;
  run: (fn: () => Promise<string | void>) => void;
}) {
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [pendingRedelivery, setPending] = useState<{ since: string; count: number } | null>(null);
  const attempts: Attempt[] = log?.webhookDeliveries.edges.map((x) => x.node) ?? [];
  return (
    <>
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
      {pager(log?.webhookDeliveries.pageInfo)}
      <div class="actions">
        <button
          type="button"
          disabled={picked.size === 0}
          onClick={() =>
            run(async () => {
              const r = await gql(RedeliverWebhookDocument, { id: webhookId, input: { eventIds: [...picked] } });
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
            const count = (await gql(RedeliverWebhookDocument, { id: webhookId, input: { since: iso, dryRun: true } })).redeliverWebhook
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
                  `Queued ${(await gql(RedeliverWebhookDocument, { id: webhookId, input: { since } })).redeliverWebhook.queued} events again.`,
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
    </>
  );
}
