// The Approve and Reject links of a chat alert (contract section 21): `/moderate/v1/{token}`. Made as
// the sign-in's email links are (src/modules/email/engine/links.ts): the token is an HMAC under the
// service's secret — of the alert job's id and the action, so a job's links are the same at each
// retry and only a process holding ADMIN_JWT_SECRET can make one — and only its SHA-256 is stored,
// in sign_in_tokens (kind `alert_link`, data {jobId, alertId, chat, commentId, action, revision,
// queuedAt}), with its expiry (7 days after the message is first sent) and the time it was used. The
// token starts with the tenant's id (base64url) so the link finds the tenant's row; the rest cannot be
// made or altered without the secret: a changed token matches no row.
// An alert's two links are one decision: the job's id pairs them (each one's hash is made from it),
// and using either spends both (eng_decide_by_alert_link, in the statement that acts). Each carries
// the comment's revision when its alert was queued: a link acts only on that revision of the comment.
import { createHmac } from "node:crypto";
import type { TenantStore } from "../../../db/tenant-store.js";
import { errors } from "../../../lib/errors.js";
import { sha256 } from "../../../lib/sha256.js";
import type { AlertKind } from "../../../tenancy/settings/alerts.js";

export const ALERT_LINK_TTL_MS = 7 * 86_400_000;
export const ALERT_ACTIONS = ["approve", "reject"] as const;
export type AlertAction = (typeof ALERT_ACTIONS)[number];

/** What a link is bound to. */
export interface AlertLinkData {
  /** the alert job (webhook_deliveries row) whose message carried it: the audit entry's actor id, and its decision */
  jobId: string;
  alertId: string;
  chat: AlertKind;
  commentId: string;
  action: AlertAction;
  /** the comment's revision when the alert was queued (comments.revision); absent in links made before it was kept: 0 */
  revision?: number;
  /** when the alert was queued (ISO 8601): what decided the comment since is looked for from then */
  queuedAt?: string;
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

/** The hashes of a job's two links: one decision. */
export function alertLinkHashes(secret: string, tenantId: string, jobId: string): Record<AlertAction, string> {
  return {
    approve: sha256(alertLinkToken(secret, tenantId, jobId, "approve"), "hex"),
    reject: sha256(alertLinkToken(secret, tenantId, jobId, "reject"), "hex"),
  };
}

/** A link as it is stored, with its alert's decision: when either of its two links was used (both at once). */
export interface StoredAlertLink {
  data: AlertLinkData;
  hash: string;
  /** the hashes of both of its alert's links */
  hashes: Record<AlertAction, string>;
  createdAt: Date;
  expiresAt: Date;
  /** when its alert's decision was spent (by this link or the other); null: not yet */
  usedAt: Date | null;
}

const FIND = `SELECT data, created_at AS "createdAt", expires_at AS "expiresAt", used_at AS "usedAt" FROM sign_in_tokens
  WHERE tenant_id = $1 AND kind = 'alert_link' AND token_hash = $2`;
const FIND_USED = `SELECT max(used_at) AS "usedAt" FROM sign_in_tokens
  WHERE tenant_id = $1 AND kind = 'alert_link' AND token_hash = ANY($2::text[])`;

/** The link a token names, with when its alert's decision was spent; 404 alert_link_unknown for one never made or altered. Reads only. */
export async function readAlertLink(store: TenantStore, secret: string, tenantId: string, token: string): Promise<StoredAlertLink> {
  const hash = sha256(token, "hex");
  const [row] = await store.sql.query<{ data: AlertLinkData; createdAt: Date; expiresAt: Date; usedAt: Date | null }>(
    FIND,
    [hash],
    "alert_link_find",
  );
  if (!row) throw errors.alertLinkUnknown();
  const hashes = alertLinkHashes(secret, tenantId, row.data.jobId);
  const [pair] = await store.sql.query<{ usedAt: Date | null }>(FIND_USED, [[hashes.approve, hashes.reject]], "alert_link_pair");
  return { data: row.data, hash, hashes, createdAt: row.createdAt, expiresAt: row.expiresAt, usedAt: pair?.usedAt ?? row.usedAt };
}
