// One-click unsubscribe (contract section 15, RFC 8058): every email names
// `https://<service>/api/v1/unsubscribe/<token>` in List-Unsubscribe. The token says which reader of
// which tenant stops which email, and is signed (HMAC-SHA256 with a key derived from the server's
// ADMIN_JWT_SECRET), so it needs no sign-in, works from any mail client, and a forged or altered one
// changes nothing. Using it turns the reader's reply emails off, or their emails of new comments in
// followed discussions (`subscriptions`, contract section 19), or an operator's moderation digest.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { AppServices } from "../../../context/services.js";
import { errors } from "../../../lib/errors.js";
import { migratedReaderId } from "../../../auth/reader-ids.js";

/** what a link stops: a reader's reply emails, their emails of followed discussions, or an operator's moderation digest */
export type UnsubscribeKind = "replies" | "subscriptions" | "moderation";
const KINDS: readonly string[] = ["replies", "subscriptions", "moderation"] satisfies UnsubscribeKind[];

/** `subjectId`: the reader's id (replies) or the operator's (moderation) */
interface Claims {
  tenantId: string;
  subjectId: string;
  kind: UnsubscribeKind;
}

const VERSION = 1;

function keyOf(app: Pick<AppServices, "adminJwtSecret">): Buffer {
  return createHmac("sha256", app.adminJwtSecret).update("engagement unsubscribe links v1").digest();
}

const mac = (app: Pick<AppServices, "adminJwtSecret">, payload: string) => createHmac("sha256", keyOf(app)).update(payload).digest();

export function signUnsubscribeToken(app: Pick<AppServices, "adminJwtSecret">, claims: Claims): string {
  const payload = Buffer.from(JSON.stringify([VERSION, claims.tenantId, claims.subjectId, claims.kind])).toString("base64url");
  return `${payload}.${mac(app, payload).toString("base64url")}`;
}

/** The link's claims; a token that is not one we signed → 400 invalid_parameter (and nothing changes). */
export function verifyUnsubscribeToken(app: AppServices, token: string): Claims {
  const bad = () => errors.invalidParameter([{ path: "token", message: "is not an unsubscribe link this service made" }]);
  const [payload, signature, ...rest] = token.split(".");
  if (!payload || !signature || rest.length) throw bad();
  const given = Buffer.from(signature, "base64url");
  const expected = mac(app, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  if (
    !Array.isArray(parsed) ||
    parsed[0] !== VERSION ||
    typeof parsed[1] !== "string" ||
    typeof parsed[2] !== "string" ||
    typeof parsed[3] !== "string" ||
    !KINDS.includes(parsed[3])
  ) {
    throw bad();
  }
  return { tenantId: parsed[1], subjectId: parsed[2], kind: parsed[3] as UnsubscribeKind };
}

/** Turns the reader's reply emails off, or the operator's digest (someone the service no longer knows: nothing to do). */
export async function unsubscribe(app: AppServices, claims: Claims): Promise<void> {
  // the link names its tenant: from here on, that tenant's store ($1 is its id)
  const sql = app.stores(claims.tenantId).sql;
  if (claims.kind === "moderation") {
    await sql.query(
      `UPDATE operators SET moderation_digest = 'off', moderation_digest_due_at = NULL WHERE tenant_id = $1 AND id = $2`,
      [claims.subjectId],
      "operator_unsubscribe",
    );
    return;
  }
  // a link mailed before the reader ids were made opaque names the reader's old id: its new one too
  // (an id of the new form gives an id no reader has)
  const readerIds = [claims.subjectId, migratedReaderId(await app.readerIds.keyOf(claims.tenantId), claims.subjectId)];
  if (claims.kind === "subscriptions") {
    await sql.query(
      `UPDATE readers SET subscription_emails = 'off', updated_at = $3 WHERE tenant_id = $1 AND id = ANY($2::text[])`,
      [readerIds, app.clock.now()],
      "reader_unsubscribe_subscriptions",
    );
    return;
  }
  await sql.query(
    `UPDATE readers SET reply_emails = 'off', updated_at = $3 WHERE tenant_id = $1 AND id = ANY($2::text[])`,
    [readerIds, app.clock.now()],
    "reader_unsubscribe",
  );
}
