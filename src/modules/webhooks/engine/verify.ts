/**
 * Endpoint verification (API.md §0 "Handshake"). Every handshake first stores a fresh challenge on
 * the endpoint (and, for /verify and url changes, marks it unverified); only the success of the
 * handshake holding the endpoint's CURRENT challenge may mark it verified, so a slow answer from
 * an old url or an older handshake can never verify the endpoint.
 *
 * Registration and url changes run the handshake in the background, right after the write commits:
 * POST /webhooks answers 201 with `verified: false` at once (as the contract shows) and the endpoint
 * turns verified when the receiver has echoed the challenge (within the 30 s timeout).
 * POST /webhooks/{id}/verify runs it inline and answers with the outcome. While a handshake is under
 * way the endpoint holds its challenge (GraphQL `verifying`); its end, success or failure, clears it.
 */
import { db, tenantIdOf, type RequestContext } from "../../../context/request.js";
import type { AppServices } from "../../../context/request.js";
import { errors } from "../../../lib/errors.js";
import { newChallenge, performHandshake, type HandshakeResult } from "../../../outbound/handshake.js";
import { currentSigningKey, validSecrets } from "../../../outbound/secrets.js";
import { recordAudit } from "../../audit/audit.js";

export { newChallenge };

async function runEndpointHandshake(
  app: AppServices,
  tenantId: string,
  endpointId: string,
  challenge: string,
  signal?: AbortSignal,
): Promise<HandshakeResult> {
  const rt = app.webhooks;
  const scoped = app.stores(tenantId).prisma;
  const endpoint = await scoped.webhookEndpoint.findUnique({
    where: { id: endpointId },
    select: {
      url: true,
      handshakeChallenge: true,
      secrets: { select: { kid: true, secretEnc: true, validUntil: true } },
    },
  });
  if (!endpoint) return { verified: false, error: "the endpoint was deleted" };
  if (endpoint.handshakeChallenge !== challenge) return { verified: false, error: "a newer handshake replaced this one" };
  const key = currentSigningKey(app.secretBox, endpoint.secrets);
  if (!key) return { verified: false, error: "the endpoint has no signing secret" };
  const now = app.clock.now();
  const result = await performHandshake(rt.http, {
    url: endpoint.url,
    challenge,
    key,
    secrets: validSecrets(app.secretBox, endpoint.secrets, now),
    now,
    timeoutMs: rt.options.handshakeTimeoutMs,
    ...(signal ? { signal } : {}),
  });
  if (!result.verified) {
    // the handshake is over: no longer under way (`verifying`), unless a newer one replaced it
    await scoped.webhookEndpoint.updateMany({
      where: { id: endpointId, handshakeChallenge: challenge },
      data: { handshakeChallenge: null },
    });
    return result;
  }
  const { count } = await scoped.webhookEndpoint.updateMany({
    where: { id: endpointId, handshakeChallenge: challenge },
    data: { verified: true, handshakeChallenge: null },
  });
  return count === 1 ? result : { verified: false, error: "a newer handshake replaced this one" };
}

/** Runs the handshake for `challenge` after the current request, without holding it up. */
export function startHandshake(app: AppServices, tenantId: string, endpointId: string, challenge: string): void {
  const rt = app.webhooks;
  rt.background(async () => {
    const result = await runEndpointHandshake(app, tenantId, endpointId, challenge, rt.closing);
    app.log.info({ tenantId, webhookId: endpointId, ...result }, "webhook handshake finished");
  });
}

/** POST /webhooks/{id}/verify: unverified first, then the handshake, inline. */
export async function verifyEndpoint(ctx: RequestContext, endpointId: string): Promise<HandshakeResult> {
  const challenge = newChallenge();
  const { count } = await db(ctx).webhookEndpoint.updateMany({
    where: { id: endpointId },
    data: { verified: false, handshakeChallenge: challenge },
  });
  if (count === 0) throw errors.notFound("Webhook");
  const result = await runEndpointHandshake(ctx.app, tenantIdOf(ctx), endpointId, challenge);
  await recordAudit(ctx, "webhook.verify", { type: "webhook", id: endpointId }, { verified: result.verified });
  return result;
}
