// Redeeming stream tickets (contract section 4, "Stream"); minting is the streams module's
// (src/modules/streams/tickets.ts). Single use, bound to tenant + discussion (+ reader when minted
// with an identity), stored hashed; redeemed by one atomic UPDATE ... RETURNING, so exactly once
// across instances.
import { createHash } from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import { errors } from "../lib/errors.js";

const TICKET_RE = /^st_[0-9a-f]{64}$/;

export interface RedeemedTicket {
  tenantId: string;
  discussionId: string;
  readerId: string | null;
  apiKeyId: string | null;
}

export const hashTicket = (raw: string) => createHash("sha256").update(raw).digest("hex");

/** Marks the ticket used and returns what it is bound to; 401 when unknown, used, expired or for another discussion. */
export async function redeemStreamTicket(
  app: { prisma: PrismaClient; clock: Clock },
  raw: string,
  discussionId: string,
): Promise<RedeemedTicket> {
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
