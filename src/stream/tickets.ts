// Stream tickets (contract section 4, "Stream"): a browser cannot send X-API-Key on an EventSource,
// so the tenant's backend mints a short-lived ticket and hands it to the page (`?ticket=`).
// Single use, valid 60 s, bound to tenant + discussion (+ reader when minted with an identity),
// stored hashed; redeemed by one atomic UPDATE ... RETURNING, so exactly once across instances.
import { createHash, randomBytes } from "node:crypto";
import { currentReader, db, requirePrincipal, tenantIdOf, type AppServices, type RequestContext } from "../context/request.js";
import { checkDiscussionId, getDiscussion } from "../modules/discussions/discussions.js";
import { errors } from "../lib/errors.js";

export const TICKET_TTL_SECONDS = 60;
const TICKET_RE = /^st_[0-9a-f]{64}$/;
/** Used and expired tickets are kept this long (for support questions), then deleted. */
const KEEP_MS = 60 * 60_000;

export interface MintedTicket {
  ticket: string;
  expiresAt: Date;
}

export interface RedeemedTicket {
  tenantId: string;
  discussionId: string;
  readerId: string | null;
  apiKeyId: string | null;
}

const hashTicket = (raw: string) => createHash("sha256").update(raw).digest("hex");

export async function mintStreamTicket(ctx: RequestContext, discussionId: string): Promise<MintedTicket> {
  checkDiscussionId(discussionId, "discussionId");
  const principal = requirePrincipal(ctx);
  await getDiscussion(ctx, discussionId); // 404 for an unknown (or another tenant's) discussion
  const reader = await currentReader(ctx); // optional; an invalid assertion is 401
  const raw = `st_${randomBytes(32).toString("hex")}`;
  const expiresAt = new Date(ctx.app.clock.now().getTime() + TICKET_TTL_SECONDS * 1000);
  await db(ctx).streamTicket.create({
    data: {
      id: hashTicket(raw),
      tenantId: tenantIdOf(ctx),
      discussionId,
      readerId: reader?.id ?? null,
      apiKeyId: principal.kind === "key" ? principal.keyId : null,
      expiresAt,
    },
  });
  return { ticket: raw, expiresAt };
}

/** Marks the ticket used and returns what it is bound to; 401 when unknown, used, expired or for another discussion. */
export async function redeemStreamTicket(app: AppServices, raw: string, discussionId: string): Promise<RedeemedTicket> {
  const invalid = () => errors.unauthenticated("The stream ticket is unknown, expired, already used or for another discussion.");
  if (!TICKET_RE.test(raw)) throw invalid();
  const now = app.clock.now();
  const rows = await app.prisma.$queryRaw<RedeemedTicket[]>`
    UPDATE stream_tickets SET used_at = ${now}
    WHERE id = ${hashTicket(raw)} AND discussion_id = ${discussionId} AND used_at IS NULL AND expires_at > ${now}
    RETURNING tenant_id AS "tenantId", discussion_id AS "discussionId", reader_id AS "readerId", api_key_id AS "apiKeyId"`;
  const row = rows[0];
  if (!row) throw invalid();
  return row;
}

export async function deleteStaleTickets(app: Pick<AppServices, "prisma" | "clock">): Promise<number> {
  const before = new Date(app.clock.now().getTime() - KEEP_MS);
  const { count } = await app.prisma.streamTicket.deleteMany({ where: { expiresAt: { lt: before } } });
  return count;
}
