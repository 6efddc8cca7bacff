// Redeeming stream tickets (contract section 4, "Stream"); minting is the streams module's
// (src/modules/streams/tickets.ts). Bound to tenant + discussion (+ reader when minted with an
// identity), stored hashed. The first redemption must come within the ticket's TTL (60 s); after
// that the browser's own EventSource may reconnect with the same URL and a Last-Event-ID for the
// resume lifetime (STREAM_TICKET_RESUME_SECONDS after its latest connect). Each redemption is one
// atomic UPDATE ... RETURNING (with the minting key's state) that names the connection now holding
// the ticket: a reconnect supersedes the connection before it (the hub closes that one, on
// whichever instance it is), so a ticket never serves two connections at once.
import { createHash, randomUUID } from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Clock } from "../lib/clock.js";
import { errors } from "../lib/errors.js";

const TICKET_RE = /^st_[0-9a-f]{64}$/;

export interface RedeemedTicket {
  tenantId: string;
  discussionId: string;
  readerId: string | null;
  apiKeyId: string | null;
  /** sha256 of the ticket: what a superseding connection names */
  hash: string;
  /** this connection's id; a later redemption supersedes it */
  connectionId: string;
  /** true when this redemption is a reconnect (the ticket had served a connection before) */
  resumed: boolean;
  /** the minting key as it is now (null: minted by a key that no longer exists, or by no key) */
  minter: { revokedAt: Date | null; expiresAt: Date | null } | null;
}

interface MinterRow {
  minterId: string | null;
  minterRevokedAt: Date | null;
  minterExpiresAt: Date | null;
}

export const hashTicket = (raw: string) => createHash("sha256").update(raw).digest("hex");

/**
 * Redeems the ticket for one connection; 401 when unknown, expired, for another discussion, or
 * already redeemed and either past its resume lifetime or presented without a Last-Event-ID
 * (only an EventSource resuming its own stream reconnects with one).
 */
export async function redeemStreamTicket(
  app: { prisma: PrismaClient; clock: Clock },
  raw: string,
  opts: { discussionId: string; resuming: boolean; resumeSeconds: number },
): Promise<RedeemedTicket> {
  const invalid = () => errors.unauthenticated("The stream ticket is unknown, expired, already used or for another discussion.");
  if (!TICKET_RE.test(raw)) throw invalid();
  const now = app.clock.now();
  const hash = hashTicket(raw);
  const connectionId = randomUUID();
  const resumeUntil = new Date(now.getTime() + opts.resumeSeconds * 1000);
  // the key that minted it comes back with it: its state as of now decides (src/modules/streams/access.ts)
  const rows = await app.prisma.$queryRaw<(Omit<RedeemedTicket, "hash" | "connectionId" | "minter"> & MinterRow)[]>`
    WITH redeemed AS (
      UPDATE stream_tickets t
         SET used_at = COALESCE(t.used_at, ${now}), connection_id = ${connectionId}, resume_until = ${resumeUntil}
        FROM (SELECT id, used_at FROM stream_tickets WHERE id = ${hash} FOR UPDATE) before
       WHERE t.id = before.id AND t.discussion_id = ${opts.discussionId}
         AND ((before.used_at IS NULL AND t.expires_at > ${now})
           OR (${opts.resuming} AND before.used_at IS NOT NULL AND t.resume_until > ${now}))
      RETURNING t.tenant_id, t.discussion_id, t.reader_id, t.api_key_id, before.used_at IS NOT NULL AS resumed)
    SELECT r.tenant_id AS "tenantId", r.discussion_id AS "discussionId", r.reader_id AS "readerId", r.api_key_id AS "apiKeyId",
           r.resumed, k.id AS "minterId", k.revoked_at AS "minterRevokedAt", k.expires_at AS "minterExpiresAt"
      FROM redeemed r LEFT JOIN api_keys k ON k.id = r.api_key_id AND k.tenant_id = r.tenant_id`;
  const row = rows[0];
  if (!row) throw invalid();
  const { minterId, minterRevokedAt, minterExpiresAt, ...ticket } = row;
  const minter = minterId === null ? null : { revokedAt: minterRevokedAt, expiresAt: minterExpiresAt };
  return { ...ticket, minter, hash, connectionId };
}
