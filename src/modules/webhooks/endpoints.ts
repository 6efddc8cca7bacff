// Webhook endpoints (API.md §4 "Webhooks"): register, list, read, change, delete, re-enable.
// Verification: verify.ts; secrets: secret-rotation.ts; attempt log and redelivery: deliveries.ts;
// delivery itself: src/outbound/.
import { db, tenantIdOf, type RequestContext } from "../../context/request.js";
import type { Prisma, WebhookEndpoint } from "../../generated/prisma/client.js";
import { errors, fieldErrorsFromZod } from "../../lib/errors.js";
import { newId } from "../../lib/ids.js";
import { newestFirstPage, type Page, type PageArgs } from "../../lib/pagination.js";
import { writeTx } from "../../events/write-tx.js";
import { generateKid, generateSecret } from "../../outbound/signature.js";
import { enable } from "../../outbound/breaker.js";
import { checkWebhookUrl } from "../../outbound/url-guard.js";
import { CreateWebhookSchema, mergeOverrides, UpdateWebhookSchema } from "./input-rules.js";
import { newChallenge, startHandshake } from "./engine/verify.js";
import { recordAudit } from "../audit/audit.js";

export type { WebhookEndpoint };

function parse<T>(
  schema: {
    safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  input: unknown,
): T {
  const r = schema.safeParse(input ?? {});
  if (!r.success) throw errors.validation(fieldErrorsFromZod(r.error.issues));
  return r.data;
}

/** The SSRF guard (src/outbound/url-guard.ts) with the operator's policy; refusals are 422 on `url`. */
async function checkUrl(ctx: RequestContext, url: string): Promise<string> {
  const verdict = await checkWebhookUrl(url, ctx.app.webhooks.policy);
  if (!verdict.ok) throw errors.validation([{ path: "url", message: verdict.message }]);
  return url; // kept as given (it parsed and passed)
}

export async function findEndpoint(ctx: RequestContext, id: string): Promise<WebhookEndpoint> {
  const e = await db(ctx).webhookEndpoint.findUnique({ where: { id } });
  if (!e) throw errors.notFound("Webhook");
  return e;
}

export interface CreatedWebhook {
  endpoint: WebhookEndpoint;
  /** shown once */
  secret: string;
}

export async function createWebhook(ctx: RequestContext, input: unknown): Promise<CreatedWebhook> {
  const data = parse(CreateWebhookSchema, input);
  const url = await checkUrl(ctx, data.url);
  const tenantId = tenantIdOf(ctx);
  const secret = generateSecret();
  const challenge = newChallenge();
  const now = ctx.app.clock.now();
  const id = newId("wh");
  const endpoint = await writeTx(ctx, async (tx) => {
    const created = await tx.webhookEndpoint.create({
      data: {
        id,
        tenantId,
        url,
        events: data.events,
        description: data.description ?? null,
        delivery: mergeOverrides({}, data.delivery) as Prisma.InputJsonValue,
        handshakeChallenge: challenge,
        createdAt: now,
      },
    });
    await tx.webhookSecret.create({
      data: { id: newId("whs"), endpointId: id, kid: generateKid(), secretEnc: ctx.app.secretBox.seal(secret), createdAt: now },
    });
    return created;
  });
  startHandshake(ctx.app, tenantId, id, challenge);
  await recordAudit(ctx, "webhook.create", { type: "webhook", id }, { url, events: data.events });
  return { endpoint, secret };
}

export async function listWebhooks(ctx: RequestContext, args: PageArgs): Promise<Page<WebhookEndpoint>> {
  return newestFirstPage(args, (q) => db(ctx).webhookEndpoint.findMany(q));
}

/**
 * PATCH: url (→ unverified and a new handshake, when it changes), events, description, delivery
 * overrides (merged; a null field removes that override, `delivery: null` removes them all).
 */
export async function updateWebhook(ctx: RequestContext, id: string, input: unknown): Promise<WebhookEndpoint> {
  const data = parse(UpdateWebhookSchema, input);
  const url = data.url === undefined ? undefined : await checkUrl(ctx, data.url);
  const tenantId = tenantIdOf(ctx);
  const challenge = newChallenge();
  const { endpoint, urlChanged } = await writeTx(ctx, async (tx) => {
    await tx.$queryRaw`SELECT id FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE`;
    const current = await tx.webhookEndpoint.findUnique({ where: { id } });
    if (!current) throw errors.notFound("Webhook");
    const urlChanged = url !== undefined && url !== current.url;
    const updated = await tx.webhookEndpoint.update({
      where: { id },
      data: {
        ...(urlChanged ? { url, verified: false, handshakeChallenge: challenge } : {}),
        ...(data.events !== undefined ? { events: data.events } : {}),
        ...(data.description !== undefined ? { description: data.description } : {}),
        ...(data.delivery !== undefined
          ? { delivery: mergeOverrides(current.delivery as Record<string, unknown>, data.delivery) as Prisma.InputJsonValue }
          : {}),
      },
    });
    return { endpoint: updated, urlChanged };
  });
  if (urlChanged) startHandshake(ctx.app, tenantId, id, challenge);
  await recordAudit(ctx, "webhook.update", { type: "webhook", id }, { fields: Object.keys(data) });
  return endpoint;
}

/** Deletes the endpoint with its secrets, queued jobs and attempt log. */
export async function deleteWebhook(ctx: RequestContext, id: string): Promise<boolean> {
  // a transaction of its own so that, under an Idempotency-Key, a retry after a lost answer is 204 again
  await writeTx(ctx, async (tx) => {
    const { count } = await tx.webhookEndpoint.deleteMany({ where: { id } });
    if (count === 0) throw errors.notFound("Webhook");
  });
  await recordAudit(ctx, "webhook.delete", { type: "webhook", id });
  return true;
}

const enabledState = () => {
  const s = enable();
  return { state: s.state, consecutiveFailures: s.consecutiveFailures, circuitOpenUntil: s.openedUntil };
};

/** Console (admin JWT) re-enable: active again (breaker.enable), failure count and circuit reset; held jobs resume. */
export async function enableWebhook(ctx: RequestContext, id: string): Promise<WebhookEndpoint> {
  await writeTx(ctx, async (tx) => {
    const { count } = await tx.webhookEndpoint.updateMany({ where: { id }, data: { ...enabledState(), disabledAt: null } });
    if (count === 0) throw errors.notFound("Webhook");
  });
  ctx.app.webhooks.worker.nudge();
  await recordAudit(ctx, "webhook.enable", { type: "webhook", id });
  return findEndpoint(ctx, id);
}
