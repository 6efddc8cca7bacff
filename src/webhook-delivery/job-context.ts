/**
 * What a batch of claimed jobs needs, taken from the claim's own rows (jobs.ts claimJobs reads the
 * endpoint, its signing secret, the event and the tenant's settings in the same statement).
 */
import type { BreakerState } from "./breaker.js";
import type { ClaimedJob, ClaimedRow } from "./jobs.js";
import type { SealedSecret } from "./secrets.js";
import { resolveTunables, type DeliveryTunables } from "./tunables.js";

export interface EndpointSnapshot {
  id: string;
  url: string;
  verified: boolean;
  /** the circuit breaker's state as claimed */
  breaker: BreakerState;
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

export function batchContext(rows: readonly ClaimedRow[]): { jobs: ClaimedJob[]; context: BatchContext } {
  const endpoints = new Map<string, EndpointSnapshot>();
  const events = new Map<string, EventSnapshot>();
  const jobs: ClaimedJob[] = [];
  for (const r of rows) {
    jobs.push({
      id: r.id,
      tenantId: r.tenantId,
      endpointId: r.endpointId,
      eventId: r.eventId,
      attempts: r.attempts,
      claimToken: r.claimToken,
    });
    if (!endpoints.has(r.endpointId)) {
      endpoints.set(r.endpointId, {
        id: r.endpointId,
        url: r.url,
        verified: r.verified,
        breaker: { state: r.state, consecutiveFailures: r.consecutiveFailures, openedUntil: r.circuitOpenUntil },
        secrets: [
          ...(r.kid !== null && r.secretEnc !== null ? [{ kid: r.kid, secretEnc: r.secretEnc, validUntil: null }] : []),
          ...(r.previousSecrets ?? []).map((p) => ({ kid: p.kid, secretEnc: p.secretEnc, validUntil: new Date(p.validUntil) })),
        ],
        tunables: resolveTunables(r.tenantSettings, r.delivery),
      });
    }
    events.set(r.eventId, { id: r.eventId, type: r.eventType, payload: r.payload });
  }
  return { jobs, context: { endpoints, events } };
}
