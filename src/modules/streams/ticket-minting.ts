// Minting stream tickets (contract sections 4 "Stream" and 19): a browser cannot send X-API-Key on an
// EventSource, so the tenant's backend mints a short-lived ticket and hands it to the page
// (`?ticket=`). `{"discussionId"}` → a ticket for that discussion's stream (+ the reader, with an
// identity); `{"scope": "me"}` + identity → a ticket for the reader's own stream, GET
// /api/v1/stream/me. Redemption is the stream's own (src/stream-engine/ticket-redemption.ts).
import { currentReader, db, requirePrincipal, requireReader, tenantIdOf, type RequestContext } from "../../context/request.js";
import { checkDiscussionId } from "../../lib/ids.js";
import { errors } from "../../lib/errors.js";
import { generateTicket, hashTicket, READER_SCOPE } from "../../stream-engine/ticket-redemption.js";
import { getDiscussion } from "../discussions/discussions.js";

export interface MintedTicket {
  ticket: string;
  expiresAt: Date;
}

/** What a ticket is for: a discussion's stream, or (`scope: "me"`) the reader's own. */
export interface TicketTarget {
  discussionId?: string | null | undefined;
  scope?: string | null | undefined;
}

export async function mintStreamTicket(ctx: RequestContext, target: TicketTarget): Promise<MintedTicket> {
  const { discussionId, scope } = target;
  if (discussionId != null && scope != null) {
    throw errors.validation([{ path: "scope", message: 'give "discussionId" or "scope", not both' }]);
  }
  if (scope != null && scope !== "me") throw errors.validation([{ path: "scope", message: 'must be "me"' }]);
  if (discussionId == null && scope == null) {
    throw errors.validation([{ path: "discussionId", message: 'give "discussionId", or "scope": "me" for the reader\'s own stream' }]);
  }
  const principal = requirePrincipal(ctx);
  let bound: string;
  let readerId: string | null;
  if (discussionId == null) {
    // the reader's own stream: their identity is required
    readerId = (await requireReader(ctx)).id;
    bound = READER_SCOPE;
  } else {
    checkDiscussionId(discussionId, "discussionId");
    await getDiscussion(ctx, discussionId); // 404 for an unknown (or another tenant's) discussion
    readerId = (await currentReader(ctx))?.id ?? null; // optional; an invalid assertion is 401
    bound = discussionId;
  }
  const raw = generateTicket(tenantIdOf(ctx));
  const expiresAt = new Date(ctx.app.clock.now().getTime() + ctx.app.config.STREAM_TICKET_TTL_SECONDS * 1000);
  await db(ctx).streamTicket.create({
    data: {
      id: hashTicket(raw),
      tenantId: tenantIdOf(ctx),
      discussionId: bound,
      readerId,
      apiKeyId: principal.kind === "key" || principal.kind === "publishable" ? principal.keyId : null,
      expiresAt,
    },
  });
  return { ticket: raw, expiresAt };
}
