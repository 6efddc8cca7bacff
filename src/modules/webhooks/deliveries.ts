// The delivery log of an endpoint (every attempt) and redelivery (API.md §4 "Webhooks").
import { db, tenantIdOf, type RequestContext } from "../../context/request.js";
import type { WebhookAttempt } from "../../generated/prisma/client.js";
import { errors, fieldErrorsFromZod, type FieldError } from "../../lib/errors.js";
import { newestFirstPage, type Page, type PageArgs } from "../../lib/pagination.js";
import { countRedeliverable, requeueEvents } from "../../outbound/jobs.js";
import { findEndpoint } from "./endpoints.js";
import { RedeliverSchema } from "./input-rules.js";

export type { WebhookAttempt };

/** Attempts, newest first: event, idempotency key, delivery id, attempt n, status, duration, error, time. */
export async function listAttempts(ctx: RequestContext, endpointId: string, args: PageArgs): Promise<Page<WebhookAttempt>> {
  return newestFirstPage(args, async (q) => {
    await findEndpoint(ctx, endpointId);
    return db(ctx).webhookAttempt.findMany({ ...q, where: { AND: [{ endpointId }, q.where] } });
  });
}

/** Most events one `since` redelivery queues (oldest first). */
export const REDELIVER_MAX = 10_000;

/**
 * Queues events for this endpoint again with their original idempotency keys: `{"since"}` every
 * event it subscribes to from that time on (at most REDELIVER_MAX), or `{"eventIds"}` exactly
 * those (each must be an event of the tenant the endpoint subscribes to; 422 lists the others).
 * Jobs of an unverified or disabled endpoint wait until it is verified / re-enabled.
 */
export async function redeliver(ctx: RequestContext, endpointId: string, input: unknown): Promise<{ queued: number }> {
  const parsed = RedeliverSchema.safeParse(input ?? {});
  if (!parsed.success) throw errors.validation(fieldErrorsFromZod(parsed.error.issues));
  const { since, eventIds } = parsed.data;
  const endpoint = await findEndpoint(ctx, endpointId);
  const types: string[] | "*" = endpoint.events.includes("*") ? "*" : endpoint.events;
  if (eventIds) {
    const found = await db(ctx).event.findMany({
      where: { id: { in: eventIds } },
      select: { id: true, type: true, audience: true },
    });
    const deliverable = new Set(found.filter((e) => e.audience !== "reader" && (types === "*" || types.includes(e.type))).map((e) => e.id));
    const known = new Set(found.map((e) => e.id));
    const problems: FieldError[] = [];
    eventIds.forEach((id, i) => {
      if (!known.has(id)) problems.push({ path: `eventIds[${i}]`, message: "no such event" });
      else if (!deliverable.has(id)) problems.push({ path: `eventIds[${i}]`, message: "this endpoint does not receive this event" });
    });
    if (problems.length) throw errors.validation(problems);
  }
  const selection = {
    tenantId: tenantIdOf(ctx),
    types,
    max: eventIds ? eventIds.length : REDELIVER_MAX,
    ...(eventIds ? { eventIds } : {}),
    ...(since ? { since } : {}),
  };
  // dryRun: how many would go, so a person can see it before they send them
  if (parsed.data.dryRun) return { queued: await countRedeliverable(db(ctx), selection) };
  const queued = await requeueEvents(db(ctx), { ...selection, endpointId, now: ctx.app.clock.now() });
  ctx.app.webhooks.worker.nudge();
  return { queued };
}
