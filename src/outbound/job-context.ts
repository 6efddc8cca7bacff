/**
 * What a batch of claimed jobs needs, taken from the claim's own rows (jobs.ts claimJobs reads the
 * endpoint, its signing secret, the event and the tenant's settings in the same statement; for an
 * alert, its message and the tenant's settings).
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

/** A claimed job of another kind than webhook (an alert): its stored message and its tenant's settings. */
export interface MessageSnapshot {
  id: string;
  tenantId: string;
  /** the row's own data (an alert's {alertId, trigger, commentId, reason}) */
  message: unknown;
  tenantSettings: unknown;
  createdAt: Date;
}

export interface BatchContext {
  endpoints: Map<string, EndpointSnapshot>;
  events: Map<string, EventSnapshot>;
  /** by job id */
  messages: Map<string, MessageSnapshot>;
}

/**
 * The slots' key of another kind's job (ClaimedJob.endpointId): the tenant's alert it goes to, the
 * remote server an ActivityPub activity goes to (across tenants) or an inbound one came from, a
 * webmention's source host, an email's SMTP server, or the tenant's Akismet.
 */
const alertTarget = (r: ClaimedRow): string => {
  if (r.kind === "activitypub") {
    const inbox = (r.message as { inbox?: unknown } | null)?.inbox;
    return `activitypub:${typeof inbox === "string" ? (URL.parse(inbox)?.host ?? "") : ""}`;
  }
  // a webmention's: its source's host, so one slow site takes one slot whatever the tenants
  if (r.kind === "webmention") {
    const source = (r.message as { source?: unknown } | null)?.source;
    return `webmention:${typeof source === "string" ? (URL.parse(source)?.host ?? "") : ""}`;
  }
  // an inbound activity's: the server that sent it, so one flooding server takes its slots only
  if (r.kind === "activitypub_inbound") {
    const sender = (r.message as { sender?: unknown } | null)?.sender;
    return `activitypub_inbound:${typeof sender === "string" ? sender : ""}`;
  }
  // an email's: the SMTP server it goes through, the tenant's own (email.smtpUrlEnc) or the service's
  if (r.kind === "email") {
    const own = (r.tenantSettings as { email?: { smtpUrlEnc?: unknown } } | null)?.email?.smtpUrlEnc;
    return typeof own === "string" ? `email:${r.tenantId}` : "email:";
  }
  if (r.kind !== "alert") return `${r.kind}:${r.tenantId}`;
  const alertId = (r.message as { alertId?: unknown } | null)?.alertId;
  return `alert:${r.tenantId}:${typeof alertId === "string" ? alertId : ""}`;
};

export function batchContext(rows: readonly ClaimedRow[]): { jobs: ClaimedJob[]; context: BatchContext } {
  const endpoints = new Map<string, EndpointSnapshot>();
  const events = new Map<string, EventSnapshot>();
  const messages = new Map<string, MessageSnapshot>();
  const jobs: ClaimedJob[] = [];
  // a tenant's settings are one object for all its jobs of the batch (one claim reads one row of
  // tenants), so they are resolved once (resolveSettings keeps its answer per object)
  const settingsOf = new Map<string, unknown>();
  const tenantSettings = (r: ClaimedRow) => {
    if (!settingsOf.has(r.tenantId)) settingsOf.set(r.tenantId, r.tenantSettings);
    return settingsOf.get(r.tenantId);
  };
  for (const r of rows) {
    const common = { id: r.id, tenantId: r.tenantId, kind: r.kind, attempts: r.attempts, claimToken: r.claimToken };
    if (r.kind !== "webhook" || r.endpointId === null || r.eventId === null) {
      jobs.push({ ...common, endpointId: r.endpointId ?? alertTarget(r), eventId: null });
      messages.set(r.id, { id: r.id, tenantId: r.tenantId, message: r.message, tenantSettings: tenantSettings(r), createdAt: r.createdAt });
      continue;
    }
    jobs.push({ ...common, endpointId: r.endpointId, eventId: r.eventId });
    // the endpoint was deleted since the claim: no snapshot (deliverJob gives the job back)
    if (r.url !== null && !endpoints.has(r.endpointId)) {
      endpoints.set(r.endpointId, {
        id: r.endpointId,
        url: r.url,
        verified: r.verified,
        breaker: { state: r.state, consecutiveFailures: r.consecutiveFailures, openedUntil: r.circuitOpenUntil },
        secrets: [
          ...(r.kid !== null && r.secretEnc !== null ? [{ kid: r.kid, secretEnc: r.secretEnc, validUntil: null }] : []),
          ...(r.previousSecrets ?? []).map((p) => ({ kid: p.kid, secretEnc: p.secretEnc, validUntil: new Date(p.validUntil) })),
        ],
        tunables: resolveTunables(tenantSettings(r), r.delivery),
      });
    }
    events.set(r.eventId, { id: r.eventId, type: r.eventType, payload: r.envelope === null ? null : JSON.parse(r.envelope) });
  }
  return { jobs, context: { endpoints, events, messages } };
}
