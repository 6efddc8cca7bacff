// The migration of reader ids of the plain-hash form to opaque ones (contract section 27's first
// line; section 20 as amended). Before, an email reader's id was `email:` + the first 32 hex of the
// SHA-256 of the lower-cased address, which anyone could compute from a guess; a provider's subject
// that was an address stood in the id as it was. Now both are MACs under a key of the tenant's own
// (src/auth/reader-ids.ts).
//
// Run at start-up, after the schema's migrations and before anything is served, for every tenant
// that has no reader id key yet: in ONE transaction a tenant (its row locked, so two instances
// starting together migrate it once) the key is made, every id of the old form is rewritten in place
// in every table that names a reader (REWRITTEN_COLUMNS) and in the JSON the service keeps (the event
// log's payloads, pending webhook deliveries, the audit log's details, sign-in tokens), and the key's
// row is written last. The new email id is a function of the old one (the MAC is taken of the same
// digest), so even an id whose reader row is gone (an erased reader's, in an old event) is rewritten,
// in SQL with PostgreSQL's own sha256() as HMAC's two passes. The reader keeps every comment,
// reaction, vote, follow, inbox item and session. Cross-tenant engine code: it walks every tenant.
//
// Not rewritten: the answers kept for Idempotency-Key retries (sealed, gone within a day) and emails
// already queued (their unsubscribe link still works: src/modules/email/engine/unsubscribe.ts reads
// an id of the old form through `migratedReaderId`). An identity assertion's `sub` shaped exactly like
// `email:` + 32 hex is taken for one of ours and rewritten too (docs/sign-in.md, "Reader ids").
import type { Logger } from "pino";
import type { PrismaClient } from "../../../generated/prisma/client.js";
import { migratedReaderId, providerReaderId, type ReaderIds } from "../../../auth/reader-ids.js";
import { plausibleAddress } from "../../../auth/identity.js";

/** Every (table, column) that holds a reader's id, each table with its tenant_id. test/reader-ids.test.ts checks none is missing. */
export const REWRITTEN_COLUMNS: ReadonlyArray<readonly [table: string, column: string]> = [
  ["readers", "id"],
  ["comments", "author_id"],
  ["comment_search", "author_id"],
  ["reactions", "reader_id"],
  ["page_reactions", "reader_id"],
  ["votes", "reader_id"],
  ["events", "reader_id"],
  ["stream_tickets", "reader_id"],
  ["comment_reports", "reader_id"],
  ["reader_sanctions", "reader_id"],
  ["reader_sessions", "reader_id"],
  ["reader_passkeys", "reader_id"],
  ["email_items", "reader_id"],
  ["email_messages", "reader_id"],
  ["inbox_items", "reader_id"],
  ["inbox_counters", "reader_id"],
  ["discussion_subscriptions", "reader_id"],
  ["federation_objects", "reader_id"],
  ["bluesky_replies", "reader_id"],
  ["import_staged_comments", "author_id"],
  ["import_staged_readers", "id"],
  ["import_staged_reactions", "reader_id"],
  ["import_staged_votes", "reader_id"],
  ["import_staged_page_reactions", "reader_id"],
  ["audit_log", "resource_id"],
  // an address's email links are counted by the id the address has (src/modules/sign-in/engine/email-link.ts)
  ["sign_in_tokens", "subject"],
];

/** JSON columns (and JSON kept as text) that may carry a reader's id, with what names their rows. */
export const REWRITTEN_JSON: ReadonlyArray<{ table: string; column: string; key: readonly string[] }> = [
  // the log's envelope, and the json payload of rows older than the envelope column (src/events/stored-envelope.ts)
  { table: "events", column: "envelope", key: ["id", "occurred_at"] },
  { table: "events", column: "payload", key: ["id", "occurred_at"] },
  { table: "webhook_deliveries", column: "message", key: ["id"] },
  { table: "audit_log", column: "details", key: ["id"] },
  { table: "sign_in_tokens", column: "data", key: ["kind", "token_hash"] },
];

const EMAIL_IN_TEXT = "email:[0-9a-f]{32}";

/** HMAC's pads of a key, so that PostgreSQL's sha256() computes HMAC-SHA256 in two passes. */
function pads(key: Buffer): { inner: Buffer; outer: Buffer } {
  const k = Buffer.alloc(64);
  key.copy(k); // keys are 32 bytes: shorter than SHA-256's block, so used as they are
  return { inner: Buffer.from(k.map((b) => b ^ 0x36)), outer: Buffer.from(k.map((b) => b ^ 0x5c)) };
}

/** The SQL of the new id of an email id of the old form in `col` ($2 the outer pad, $3 the inner). */
const newEmailIdSql = (col: string) =>
  `'email:' || left(encode(sha256($2::bytea || sha256($3::bytea || convert_to('email' || chr(10) || substr(${col}, 7), 'UTF8'))), 'hex'), 32)`;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

interface Tx {
  $queryRawUnsafe<T>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

async function migrateTenant(tx: Tx, tenantId: string, key: Buffer, providerIds: string[]): Promise<number> {
  const { inner, outer } = pads(key);
  let changed = 0;
  for (const [table, column] of REWRITTEN_COLUMNS) {
    const col = quote(column);
    changed += await tx.$executeRawUnsafe(
      `UPDATE ${quote(table)} SET ${col} = ${newEmailIdSql(col)} WHERE tenant_id = $1 AND ${col} ~ '^${EMAIL_IN_TEXT}$'`,
      tenantId,
      outer,
      inner,
    );
  }
  // a provider's subject that is an address: the readers known by one, mapped in TS (few)
  const map = new Map<string, string>();
  if (providerIds.length) {
    const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
      "SELECT id FROM readers WHERE tenant_id = $1 AND split_part(id, ':', 1) = ANY($2::text[]) AND position('@' in id) > 0",
      tenantId,
      providerIds,
    );
    for (const { id } of rows) {
      const at = id.indexOf(":");
      const subject = id.slice(at + 1);
      if (plausibleAddress(subject)) map.set(id, providerReaderId(key, id.slice(0, at), subject));
    }
  }
  if (map.size) {
    const olds = [...map.keys()];
    const news = olds.map((o) => map.get(o)!);
    for (const [table, column] of REWRITTEN_COLUMNS) {
      const col = quote(column);
      changed += await tx.$executeRawUnsafe(
        `UPDATE ${quote(table)} t SET ${col} = m.new FROM unnest($2::text[], $3::text[]) AS m(old, new) WHERE t.tenant_id = $1 AND t.${col} = m.old`,
        tenantId,
        olds,
        news,
      );
    }
  }
  // the JSON: every string of the old form, in place
  // one alternation, read alike by PostgreSQL's regular expressions (which rows) and JavaScript's (where in them)
  const sqlPattern = [EMAIL_IN_TEXT, ...[...map.keys()].map((o) => o.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))].join("|");
  const pattern = new RegExp(sqlPattern, "g");
  const rewrite = (text: string) => text.replace(pattern, (m) => map.get(m) ?? migratedReaderId(key, m));
  for (const { table, column, key: keyCols } of REWRITTEN_JSON) {
    const keyList = keyCols.map(quote).join(", ");
    const rows = await tx.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT ${keyList}, ${quote(column)}::text AS "__text" FROM ${quote(table)} WHERE tenant_id = $1 AND ${quote(column)}::text ~ $2`,
      tenantId,
      sqlPattern,
    );
    for (const row of rows) {
      const where = keyCols.map((k, i) => `${quote(k)} = $${i + 3}`).join(" AND ");
      changed += await tx.$executeRawUnsafe(
        `UPDATE ${quote(table)} SET ${quote(column)} = $2::jsonb WHERE tenant_id = $1 AND ${where}`,
        tenantId,
        rewrite(String(row.__text)),
        ...keyCols.map((k) => row[k]),
      );
    }
  }
  return changed;
}

/** Migrates every tenant without a reader id key (see the top of this file); returns the tenants migrated. */
export async function migrateReaderIds(deps: { prisma: PrismaClient; readerIds: ReaderIds; log: Logger }): Promise<number> {
  const pending = await deps.prisma.$queryRawUnsafe<{ id: string }[]>(
    "SELECT t.id FROM tenants t WHERE NOT EXISTS (SELECT 1 FROM reader_id_keys k WHERE k.tenant_id = t.id) ORDER BY t.id",
  );
  let migrated = 0;
  for (const { id: tenantId } of pending) {
    const changed = await deps.prisma.$transaction(
      async (tx) => {
        const [tenant] = await tx.$queryRawUnsafe<{ settings: unknown }[]>(
          "SELECT settings FROM tenants WHERE id = $1 FOR UPDATE",
          tenantId,
        );
        if (!tenant) return null;
        const [done] = await tx.$queryRawUnsafe<unknown[]>("SELECT 1 FROM reader_id_keys WHERE tenant_id = $1", tenantId);
        if (done) return null; // another instance was first
        const { key, keyEnc } = deps.readerIds.newKey();
        const changedRows = await migrateTenant(tx, tenantId, key, providerIdsOf(tenant.settings));
        await tx.$executeRawUnsafe("INSERT INTO reader_id_keys (tenant_id, key_enc) VALUES ($1, $2)", tenantId, keyEnc);
        return changedRows;
      },
      { maxWait: 30_000, timeout: 30 * 60_000 },
    );
    if (changed === null) continue;
    migrated++;
    if (changed > 0) deps.log.info({ tenantId, rows: changed }, "reader ids of the plain-hash form made opaque");
  }
  return migrated;
}

/** The ids of the tenant's sign-in providers (settings signIn.oidc[].id), read from the stored settings. */
function providerIdsOf(settings: unknown): string[] {
  const oidc = (settings as { signIn?: { oidc?: unknown } } | null)?.signIn?.oidc;
  if (!Array.isArray(oidc)) return [];
  return oidc.flatMap((p: unknown) => {
    const id = (p as { id?: unknown } | null)?.id;
    return typeof id === "string" && id !== "" ? [id] : [];
  });
}
