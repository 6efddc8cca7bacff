// Single-use tokens kept in sign_in_tokens (only their SHA-256, with a kind, an expiry and when they
// were used): the hosted sign-in's email links. Spending one is one UPDATE: the first request on any
// instance wins, a used or expired token is never spent. A chat alert's Approve and Reject links are
// kept there too but spent two at once, in the statement that acts on their comment
// (eng_decide_by_alert_link, src/modules/alerts/engine/link-actions.ts).
import type { TenantStore } from "../db/tenant-store.js";
import { sha256 } from "../lib/sha256.js";

const SPEND = `UPDATE sign_in_tokens SET used_at = $3 WHERE tenant_id = $1 AND kind = $2 AND token_hash = $4
  AND used_at IS NULL AND expires_at > $3 RETURNING data`;

/** Spends the token of this kind: its stored data, or null when there is none unused and unexpired. */
export async function spendOneTimeToken<T>(store: TenantStore, kind: string, token: string, now: Date, name: string): Promise<T | null> {
  const [row] = await store.sql.query<{ data: T }>(SPEND, [kind, now, sha256(token, "hex")], name);
  return row ? row.data : null;
}
