// Minting stream tickets (contract section 4, "Stream"): a browser cannot send X-API-Key on an
// EventSource, so the tenant's backend mints a short-lived ticket and hands it to the page
// (`?ticket=`). Redemption is the stream's own (src/stream-engine/ticket-redemption.ts).
import { currentReader, db, requirePrincipal, tenantIdOf, type RequestContext } from "../../context/request.js";
import { checkDiscussionId } from "../../lib/ids.js";
import { generateTicket, hashTicket } from "../../stream-engine/ticket-redemption.js";
import { getDiscussion } from "../discussions/discussions.js";

export interface MintedTicket {
  ticket: string;
  expiresAt: Date;
}

export async function mintStreamTicket(ctx: RequestContext, discussionId: string): Promise<MintedTicket> {
  checkDiscussionId(discussionId, "discussionId");
  const principal = requirePrincipal(ctx);
  await getDiscussion(ctx, discussionId); // 404 for an unknown (or another tenant's) discussion
  const reader = await currentReader(ctx); // optional; an invalid assertion is 401
  const raw = generateTicket(tenantIdOf(ctx));
  const expiresAt = new Date(ctx.app.clock.now().getTime() + ctx.app.config.STREAM_TICKET_TTL_SECONDS * 1000);
  await db(ctx).streamTicket.create({
    data: {
      id: hashTicket(raw),
      tenantId: tenantIdOf(ctx),
      discussionId,
      readerId: reader?.id ?? null,
      apiKeyId: principal.kind === "key" || principal.kind === "publishable" ? principal.keyId : null,
      expiresAt,
    },
  });
  return { ticket: raw, expiresAt };
}
