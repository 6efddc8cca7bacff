// Readers' email addresses (contract section 15) come only from their identity: an assertion's
// `email` claim, or a provider token's when `email_verified` is true. The address is written to the
// reader's row when an instance first sees it with a reader's action (requireReader), so a reply
// later finds where to write; the same address again costs a map lookup. A different address
// replaces the old one and lifts a suppression (a 5xx for the old address says nothing of the new).
import type { ReaderIdentity } from "../auth/identity.js";
import { plausibleAddress } from "../auth/identity.js";
import type { Sql } from "../db/sql.js";
import type { Clock } from "../lib/clock.js";

export interface ReaderAddresses {
  /** Records the identity's address on the reader's row unless this instance already did. */
  note(tenantId: string, reader: ReaderIdentity): Promise<void>;
  /** Forgets what this instance recorded for a reader (their erasure). */
  forget(tenantId: string, readerId: string): void;
}

const MAX_REMEMBERED = 50_000;

/** The address an identity gives for mail, or null (a provider's unverified address is not one). */
export function readerAddress(reader: ReaderIdentity): string | null {
  if ("emailVerified" in reader && reader.emailVerified !== true) return null;
  return plausibleAddress(reader.email) ? reader.email : null;
}

// a reader seen for the first time is written with the name and avatar their identity gives
const RECORD = `INSERT INTO readers (tenant_id, id, name, avatar_url, email, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $6)
  ON CONFLICT (tenant_id, id) DO UPDATE SET email = EXCLUDED.email, email_suppressed_at = NULL, updated_at = EXCLUDED.updated_at
  WHERE readers.email IS DISTINCT FROM EXCLUDED.email`;

export function createReaderAddresses(deps: { sql: Sql; clock: Clock }): ReaderAddresses {
  const recorded = new Map<string, string>();
  const keyOf = (tenantId: string, readerId: string) => `${tenantId}\n${readerId}`;
  return {
    async note(tenantId, reader) {
      const address = readerAddress(reader);
      if (!address) return;
      const key = keyOf(tenantId, reader.id);
      if (recorded.get(key) === address) return;
      await deps.sql.query(RECORD, [tenantId, reader.id, reader.name, reader.avatarUrl, address, deps.clock.now()], "reader_address");
      if (recorded.size >= MAX_REMEMBERED) recorded.delete(recorded.keys().next().value!);
      recorded.set(key, address);
    },
    forget(tenantId, readerId) {
      recorded.delete(keyOf(tenantId, readerId));
    },
  };
}
