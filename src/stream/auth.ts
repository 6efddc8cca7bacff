// Who is opening a stream, and what it may see: an API key (X-API-Key, or the deprecated
// ?token=) optionally with X-Service-Identity, or a ticket minted by POST /api/v1/stream/ticket.
import { currentReader, type AppServices, type RequestContext } from "../context.js";
import { keyState } from "../auth/api-keys.js";
import { hasCapability } from "../auth/principal.js";
import { resolveSettings, type Settings } from "../domain/settings-model.js";
import { errors } from "../lib/errors.js";
import { redeemStreamTicket } from "./tickets.js";
import type { Viewer } from "./visibility.js";

export interface StreamCaller {
  tenantId: string;
  viewer: Viewer;
}

/** The caller of a stream: the request's principal when it has one, else the ticket (redeemed now). */
export async function streamCaller(
  ctx: RequestContext,
  opts: { discussionId: string; ticket?: string | null | undefined },
): Promise<StreamCaller> {
  if (ctx.principal) {
    const reader = await currentReader(ctx);
    return {
      tenantId: ctx.principal.tenantId,
      viewer: { moderator: hasCapability(ctx.principal, "moderate_content"), readerId: reader?.id ?? null },
    };
  }
  if (opts.ticket) {
    const t = await redeemStreamTicket(ctx.app, opts.ticket, opts.discussionId);
    const moderator = t.apiKeyId ? await keyMayModerate(ctx.app, t.tenantId, t.apiKeyId) : false;
    return { tenantId: t.tenantId, viewer: { moderator, readerId: t.readerId } };
  }
  throw errors.unauthenticated(
    "A stream needs X-API-Key, ?ticket= (from POST /api/v1/stream/ticket) or the deprecated ?token=.",
  );
}

/** A ticket sees what the key that minted it sees, as of now: a revoked or expired key's tickets fail. */
async function keyMayModerate(app: AppServices, tenantId: string, apiKeyId: string): Promise<boolean> {
  const key = await app.prisma.apiKey.findFirst({ where: { id: apiKeyId, tenantId } });
  if (!key) throw errors.unauthenticated("The key that minted this ticket no longer exists.");
  const state = keyState(key, app.clock.now());
  if (state === "revoked") throw errors.keyRevoked();
  if (state === "expired") throw errors.keyExpired();
  return key.capabilities.includes("moderate_content");
}

export async function tenantSettings(app: AppServices, tenantId: string): Promise<Settings> {
  const t = await app.prisma.tenant.findUnique({ where: { id: tenantId }, select: { settings: true } });
  if (!t) throw errors.unauthenticated();
  return resolveSettings(t.settings);
}
