// Webhook secret rotation (API.md §0 "Webhooks", §4): the new secret signs from now on; the
// previous one stays valid (listed with its end) for 24 h so receivers can switch over.
import { tenantIdOf, type RequestContext } from "../../context/request.js";
import { errors } from "../../lib/errors.js";
import { newId } from "../../lib/ids.js";
import { writeTx } from "../../events/write-tx.js";
import { generateKid, generateSecret } from "../../outbound/signature.js";
import { ROTATION_OVERLAP_MS } from "../../outbound/secrets.js";
import { recordAudit } from "../audit/audit.js";

export interface RotatedSecret {
  secret: string;
  kid: string;
  previousKidValidUntil: Date;
}

export async function rotateWebhookSecret(ctx: RequestContext, id: string): Promise<RotatedSecret> {
  const tenantId = tenantIdOf(ctx);
  const now = ctx.app.clock.now();
  const previousKidValidUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  const secret = generateSecret();
  const kid = await writeTx(ctx, async (tx) => {
    // One rotation at a time per endpoint.
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE`;
    if (locked.length === 0) throw errors.notFound("Webhook");
    await tx.webhookSecret.deleteMany({ where: { endpointId: id, validUntil: { lte: now } } });
    await tx.webhookSecret.updateMany({ where: { endpointId: id, validUntil: null }, data: { validUntil: previousKidValidUntil } });
    const taken = new Set((await tx.webhookSecret.findMany({ where: { endpointId: id }, select: { kid: true } })).map((s) => s.kid));
    let next = generateKid();
    while (taken.has(next)) next = generateKid();
    await tx.webhookSecret.create({
      data: { id: newId("whs"), endpointId: id, kid: next, secretEnc: ctx.app.secretBox.seal(secret), createdAt: now },
    });
    return next;
  });
  await recordAudit(ctx, "webhook.rotate_secret", { type: "webhook", id }, { kid });
  return { secret, kid, previousKidValidUntil };
}
