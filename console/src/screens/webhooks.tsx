// Webhooks: the endpoint list with "Add endpoint" (webhooks-list.tsx), or one endpoint's page
// (webhooks-endpoint.tsx: its actions, its edit form and its delivery log). While an endpoint's
// handshake is under way (after it is added or its url changes), the endpoints are read again every
// second, for at most a minute, so that "verified" shows when it happens.
import { useEffect, useRef } from "preact/hooks";
import { gql } from "../api";
import { WebhooksDocument } from "../gql/graphql";
import { useLoad } from "../ui";
import { EndpointList } from "./webhooks-list";
import { EndpointPage } from "./webhooks-endpoint";

const POLL_MS = 1_000;
const POLL_LIMIT = 60;

export function WebhooksScreen({ id }: { id?: string | undefined }) {
  const list = useLoad(() => gql(WebhooksDocument));
  const endpoints = list.data?.webhooks.edges.map((e) => e.node) ?? [];
  const verifying = endpoints.some((e) => e.verifying);
  const polls = useRef(0);
  useEffect(() => {
    if (!verifying) {
      polls.current = 0;
      return;
    }
    if (polls.current >= POLL_LIMIT) return;
    const timer = setTimeout(() => {
      polls.current++;
      list.reload();
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [verifying, list.data]);
  const selected = id ? endpoints.find((e) => e.webhookId === id) : undefined;
  if (id && selected) return <EndpointPage endpoint={selected} onChange={list.reload} />;
  return <EndpointList endpoints={endpoints} error={list.error} reload={list.reload} />;
}
