// Webhooks: the endpoint list with "Add endpoint" (webhooks-list.tsx), or one endpoint's page
// (webhooks-endpoint.tsx: its actions, its edit form and its delivery log).
import { gql } from "../api";
import { WebhooksDocument } from "../gql/graphql";
import { useLoad } from "../ui";
import { EndpointList } from "./webhooks-list";
import { EndpointPage } from "./webhooks-endpoint";

export function WebhooksScreen({ id }: { id?: string | undefined }) {
  const list = useLoad(() => gql(WebhooksDocument));
  const endpoints = list.data?.webhooks.edges.map((e) => e.node) ?? [];
  const selected = id ? endpoints.find((e) => e.webhookId === id) : undefined;
  if (id && selected) return <EndpointPage endpoint={selected} onChange={list.reload} />;
  return <EndpointList endpoints={endpoints} error={list.error} reload={list.reload} />;
}
