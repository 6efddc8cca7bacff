// Redeeming stream tickets (contract section 4, "Stream"); minting is the streams module's
// (src/modules/streams/ticket-minting.ts). Bound to tenant + discussion (+ reader when minted with an
// identity), stored hashed. The first redemption must come within the ticket's TTL (60 s); after
// that the browser's own EventSource may reconnect with the same URL and a Last-Event-ID for the
// resume lifetime (STREAM_TICKET_RESUME_SECONDS after its latest connect). Each redemption is one
// atomic UPDATE ... RETURNING (with the minting key's state), in the same statement as the connect's
// read of the log, that names the connection now holding the ticket: a reconnect supersedes the
// connection before it (the hub closes that one, on whichever instance it is), so a ticket never
// serves two connections at once.
import { randomBytes, randomUUID } from "node:crypto";
import { sha256 } from "../lib/sha256.js";
import type { Sql } from "../db/sql.js";
import { isRead, runRead, type LogRead } from "../events/replay.js";
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

export const hashTicket = (raw: string) => sha256(raw, "hex");

/**
 * The discussion_id a ticket for a reader's own stream (`{"scope": "me"}`, GET /api/v1/stream/me)
 * is stored with: no discussion id has this shape, so such a ticket opens no discussion's stream and
 * a discussion's ticket does not open a reader's stream (the redemption matches discussion_id).
 */
export const READER_SCOPE = "@me";

export const invalidTicket = () => errors.unauthenticated("The stream ticket is unknown, expired, already used or for another discussion.");

/** Tenant ids as src/lib/ids.ts makes them: 12 bytes, base64url. */
const TENANT_ID_RE = /^ten_[A-Za-z0-9_-]{16}$/;

/**
 * A new ticket: `st_` + 64 hex. The first 24 name the tenant (its id's 12 bytes) and the other 40
 * are random (160 bits), so the instance a ticket reaches knows which channel to join before the
 * redemption's statement, which then also reads the log (one round trip per connect). A tenant id
 * of another shape gets 64 random hex digits; its tickets are redeemed before the read.
 */
export function generateTicket(tenantId: string): string {
  if (!TENANT_ID_RE.test(tenantId)) return `st_${randomBytes(32).toString("hex")}`;
  return `st_${Buffer.from(tenantId.slice(4), "base64url").toString("hex")}${randomBytes(20).toString("hex")}`;
}

/** The tenant a ticket names: a guess only, which the redemption confirms or refutes. */
export function ticketTenant(raw: string): string | null {
  if (!TICKET_RE.test(raw)) return null;
  return `ten_${Buffer.from(raw.slice(3, 27), "hex").toString("base64url")}`;
}

export interface TicketRedemption {
  raw: string;
  discussionId: string;
  /** presented with a Last-Event-ID (only an EventSource resuming its own stream reconnects) */
  resuming: boolean;
  resumeSeconds: number;
  now: Date;
}

/**
 * The redemption as the CTE `ticket` (at most one row: t_* columns), its parameters numbered from
 * $offset+1. The row lock serialises two redemptions of one ticket: the second sees the first's
 * connection and supersedes it.
 */
function redemptionCte(offset: number): string {
  const p = (i: number) => `$${offset + i}`;
  return `redeemed AS (
      UPDATE stream_tickets t
         SET used_at = COALESCE(t.used_at, ${p(2)}::timestamptz), connection_id = ${p(3)}, resume_until = ${p(4)}::timestamptz
        FROM (SELECT id, used_at FROM stream_tickets WHERE id = ${p(1)} FOR UPDATE) before
       WHERE t.id = before.id AND t.discussion_id = ${p(5)}
         AND ((before.used_at IS NULL AND t.expires_at > ${p(2)}::timestamptz)
           OR (${p(6)}::boolean AND before.used_at IS NOT NULL AND t.resume_until > ${p(2)}::timestamptz))
      RETURNING t.tenant_id, t.discussion_id, t.reader_id, t.api_key_id, before.used_at IS NOT NULL AS resumed),
    ticket AS (
      SELECT r.tenant_id AS t_tenant, r.discussion_id AS t_discussion, r.reader_id AS t_reader, r.api_key_id AS t_key,
             r.resumed AS t_resumed, k.id AS t_minter, k.revoked_at AS t_minter_revoked, k.expires_at AS t_minter_expires
        FROM redeemed r LEFT JOIN api_keys k ON k.id = r.api_key_id AND k.tenant_id = r.tenant_id)`;
}

interface TicketRow {
  t_tenant: string | null;
  t_discussion: string;
  t_reader: string | null;
  t_key: string | null;
  t_resumed: boolean;
  t_minter: string | null;
  t_minter_revoked: Date | null;
  t_minter_expires: Date | null;
}

const REDEEM = `WITH ${redemptionCte(0)} SELECT * FROM ticket`;

/**
 * Redeems the ticket for one connection and, in the same statement, runs `read` (a read of the log,
 * src/events/replay.ts) when there is one. The ticket is null when it is unknown, expired, for another
 * discussion, or already redeemed and either past its resume lifetime or presented without a
 * Last-Event-ID. The read does not depend on the redemption: the caller uses it only for the
 * ticket's own tenant.
 */
export async function redeemWith<T>(
  sql: Sql,
  r: TicketRedemption,
  read: LogRead<T> | T,
): Promise<{ ticket: RedeemedTicket | null; read: T }> {
  if (!TICKET_RE.test(r.raw)) return { ticket: null, read: await runRead(sql, read) };
  const hash = hashTicket(r.raw);
  const connectionId = randomUUID();
  const resumeUntil = new Date(r.now.getTime() + r.resumeSeconds * 1000);
  const params = [hash, r.now, connectionId, resumeUntil, r.discussionId, r.resuming];
  let rows: (TicketRow & Record<string, unknown>)[];
  let result: T;
  if (isRead(read)) {
    const n = read.values.length;
    rows = await sql.query(
      `WITH ${redemptionCte(n)}
       SELECT t.*, o.* FROM (VALUES (1)) AS one (x) LEFT JOIN ticket t ON true LEFT JOIN LATERAL (${read.text}) o ON true ORDER BY o.seq`,
      [...read.values, ...params],
      `${read.name}_ticket`,
    );
    result = read.result(rows);
  } else {
    rows = await sql.query(REDEEM, params, "stream_ticket_redeem");
    result = read;
  }
  const row = rows[0];
  if (!row || row.t_tenant === null) return { ticket: null, read: result };
  return {
    ticket: {
      tenantId: row.t_tenant,
      discussionId: row.t_discussion,
      readerId: row.t_reader,
      apiKeyId: row.t_key,
      resumed: row.t_resumed,
      minter: row.t_minter === null ? null : { revokedAt: row.t_minter_revoked, expiresAt: row.t_minter_expires },
      hash,
      connectionId,
    },
    read: result,
  };
}

/** Redeems the ticket alone (a tenant this instance does not know yet): 401 when it is not valid. */
export async function redeemStreamTicket(sql: Sql, r: TicketRedemption): Promise<RedeemedTicket> {
  const { ticket } = await redeemWith(sql, r, null);
  if (!ticket) throw invalidTicket();
  return ticket;
}
