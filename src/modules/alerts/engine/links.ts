// The Approve and Reject links of a chat alert (contract section 21): `/moderate/v1/{token}`. Made as
// the sign-in's email links are (src/modules/email/engine/links.ts): the token is an HMAC under the
// service's secret — of the alert job's id and the action, so a job's links are the same at each
// retry and only a process holding ADMIN_JWT_SECRET can make one — and only its SHA-256 is stored,
// in sign_in_tokens (kind `alert_link`, data {jobId, alertId, chat, commentId, action}), with its
// expiry (7 days after the message is first sent) and the time it was used. The token starts with
// the tenant's id (base64url) so the link finds the tenant's row; the rest cannot be made or altered
// without the secret: a changed token matches no row. One token is one action on one comment, once.
import { createHmac } from "node:crypto";
import type { TenantStore } from "../../../db/tenant-store.js";
import { errors } from "../../../lib/errors.js";
import { sha256 } from "../../../lib/sha256.js";
import { spendOneTimeToken } from "../../../auth/one-time-tokens.js";
import type { AlertKind } from "../../../tenancy/settings-model.js";

export const ALERT_LINK_TTL_MS = 7 * 86_400_000;
export const ALERT_ACTIONS = ["approve", "reject"] as const;
export type AlertAction = (typeof ALERT_ACTIONS)[number];

/** What a link is bound to. */
export interface AlertLinkData {
  /** the alert job (webhook_deliveries row) whose message carried it: the audit entry's actor id */
  jobId: string;
  alertId: string;
  chat: AlertKind;
  commentId: string;
  action: AlertAction;
}

/** A link's token: the tenant's id (base64url), a dot, 43 characters of HMAC. */
export function alertLinkToken(secret: string, tenantId: string, jobId: string, action: AlertAction): string {
  const mac = createHmac("sha256", secret).update(`engagement alert link v1\n${tenantId}\n${jobId}\n${action}`).digest("base64url");
  return `${Buffer.from(tenantId, "utf8").toString("base64url")}.${mac}`;
}

const TOKEN = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{43})$/;

/** The tenant a token names, or null for a string that is no token. */
export function tenantOfToken(token: string): string | null {
  const m = TOKEN.exec(token);
  if (!m) return null;
  const tenantId = Buffer.from(m[1]!, "base64url").toString("utf8");
  return tenantId.length > 0 && tenantId.length <= 128 ? tenantId : null;
}

const RECORD = `INSERT INTO sign_in_tokens (tenant_id, kind, token_hash, subject, data, created_at, expires_at)
  SELECT $1, 'alert_link', x.token_hash, $2, x.data, $3, $4
    FROM unnest($5::text[], $6::jsonb[]) AS x(token_hash, data)
  ON CONFLICT (tenant_id, kind, token_hash) DO NOTHING`;

/**
 * Records a job's links (once: a retry's are the same tokens, their first expiry kept) and answers
 * their tokens by action.
 */
export async function recordAlertLinks(
  store: TenantStore,
  secret: string,
  link: Omit<AlertLinkData, "action"> & { tenantId: string },
  now: Date,
): Promise<Record<AlertAction, string>> {
  const { tenantId, ...bound } = link;
  const tokens = {
    approve: alertLinkToken(secret, tenantId, link.jobId, "approve"),
    reject: alertLinkToken(secret, tenantId, link.jobId, "reject"),
  };
  await store.sql.query(
    RECORD,
    [
      link.jobId,
      now,
      new Date(now.getTime() + ALERT_LINK_TTL_MS),
      ALERT_ACTIONS.map((a) => sha256(tokens[a], "hex")),
      ALERT_ACTIONS.map((action) => JSON.stringify({ ...bound, action })),
    ],
    "alert_links_record",
  );
  return tokens;
}

const FIND = `SELECT data, expires_at AS "expiresAt", used_at AS "usedAt" FROM sign_in_tokens
  WHERE tenant_id = $1 AND kind = 'alert_link' AND token_hash = $2`;

/** A link that can still be used, and until when; 404 alert_link_unknown for one never made, 410 for one used or expired. Reads only. */
export async function openAlertLink(store: TenantStore, token: string, now: Date): Promise<{ data: AlertLinkData; expiresAt: Date }> {
  const [row] = await store.sql.query<{ data: AlertLinkData; expiresAt: Date; usedAt: Date | null }>(
    FIND,
    [sha256(token, "hex")],
    "alert_link_find",
  );
  if (!row) throw errors.alertLinkUnknown();
  if (row.usedAt !== null) throw errors.alertLinkUsed(row.usedAt);
  if (row.expiresAt.getTime() <= now.getTime()) throw errors.alertLinkExpired(row.expiresAt);
  return { data: row.data, expiresAt: row.expiresAt };
}

/** Spends the link (once, on every instance: the first UPDATE wins); the problem of openAlertLink when it cannot be. */
export async function spendAlertLink(store: TenantStore, token: string, now: Date): Promise<AlertLinkData> {
  const data = await spendOneTimeToken<AlertLinkData>(store, "alert_link", token, now, "alert_link_spend");
  if (data) return data;
  await openAlertLink(store, token, now); // throws: why it cannot be spent
  throw errors.alertLinkUsed(now); // spent meanwhile by another request
}

const RESTORE = `UPDATE sign_in_tokens SET used_at = NULL WHERE tenant_id = $1 AND kind = 'alert_link' AND token_hash = $2 AND used_at = $3`;

/** Gives a spent link back (its action failed: nothing changed, so it may be used again). */
export async function restoreAlertLink(store: TenantStore, token: string, spentAt: Date): Promise<void> {
  await store.sql.query(RESTORE, [sha256(token, "hex"), spentAt], "alert_link_restore");
}
