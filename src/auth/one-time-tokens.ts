// Single-use tokens kept in sign_in_tokens (only their SHA-256, with a kind, an expiry and when they
// were used): the hosted sign-in's email links and a chat alert's Approve / Reject links. Spending
// one is one UPDATE: the first request on any instance wins, a used or expired token is never spent.
import type { TenantStore } from "../db/tenant-store.js";
import { sha256 } from "../lib/sha256.js";

const SPEND = `UPDATE sign_in_tokens SET used_at = $3 WHERE tenant_id = $1 AND kind = $2 AND token_hash = $4
  AND used_at IS NULL AND expires_at > $3 RETURNING data`;

/** Spends the token of this kind: its stored data, or null when there is none unused and unexpired. */
export async function spendOneTimeToken<T>(store: TenantStore, kind: string, token: string, now: Date, name: string): Promise<T | null> {
  const [row] = await store.sql.query<{ data: T }>(SPEND, [kind, now, sha256(token, "hex")], name);
  return row ? row.data : null;
}
