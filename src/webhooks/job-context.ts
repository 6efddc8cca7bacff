/**
 * What a batch of claimed jobs needs, loaded with three queries per batch (not per job): the
 * endpoints with their secrets and resolved tunables, and the events' stored envelopes.
 */
import type { PrismaClient } from "../generated/prisma/client.js";
import type { EndpointState } from "./breaker.js";
import type { ClaimedJob } from "./jobs.js";
import type { SealedSecret } from "./secrets.js";
import { resolveTunables, type DeliveryTunables } from "./tunables.js";

export interface EndpointSnapshot {
  id: string;
  url: string;
  verified: boolean;
  state: EndpointState;
  consecutiveFailures: number;
  secrets: SealedSecret[];
  tunables: DeliveryTunables;
}

export interface EventSnapshot {
  id: string;
  type: string;
  /** the envelope of API.md §5 exactly as stored with the event */
  payload: unknown;
}

export interface BatchContext {
  endpoints: Map<string, EndpointSnapshot>;
  events: Map<string, EventSnapshot>;
}

export async function loadBatchContext(prisma: PrismaClient, jobs: readonly ClaimedJob[]): Promise<BatchContext> {
  const endpointIds = [...new Set(jobs.map((j) => j.endpointId))];
  const eventIds = [...new Set(jobs.map((j) => j.eventId))];
  const tenantIds = [...new Set(jobs.map((j) => j.tenantId))];
  const [endpoints, events, tenants] = await Promise.all([
    prisma.webhookEndpoint.findMany({
      where: { id: { in: endpointIds } },
      select: {
        id: true,
        tenantId: true,
        url: true,
        verified: true,
        state: true,
        consecutiveFailures: true,
        delivery: true,
        secrets: { where: { validUntil: null }, select: { kid: true, secretEnc: true, validUntil: true } },
      },
    }),
    prisma.event.findMany({ where: { id: { in: eventIds } }, select: { id: true, type: true, payload: true } }),
    prisma.tenant.findMany({ where: { id: { in: tenantIds } }, select: { id: true, settings: true } }),
  ]);
  const settings = new Map(tenants.map((t) => [t.id, t.settings]));
  return {
    endpoints: new Map(
      endpoints.map((e) => [
        e.id,
        {
          id: e.id,
          url: e.url,
          verified: e.verified,
          state: e.state,
          consecutiveFailures: e.consecutiveFailures,
          secrets: e.secrets,
          tunables: resolveTunables(settings.get(e.tenantId), e.delivery),
        },
      ]),
    ),
    events: new Map(events.map((e) => [e.id, e])),
  };
}
