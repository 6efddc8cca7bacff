// Opaque reader ids of the hosted sign-in (contract section 20 as amended, section 27's first line).
// An email reader's id is `email:` + 32 hex of HMAC-SHA256, under a key of the tenant's own, of the
// SHA-256 digest of the lower-cased address (the digest the ids of the plain-hash form were made of,
// so the migration of those needs no address: src/modules/sign-in/engine/opaque-reader-ids.ts). No
// one without the key can confirm an address by hashing a guess, and one address has unrelated ids on
// two tenants. A provider's subject that is an address is made opaque the same way (`<provider>:` +
// 32 hex); any other subject is kept as the provider gives it (contract: `<id>:<sub or user id>`).
//
// The key: 32 random bytes a tenant, sealed by the secret box in reader_id_keys, made on first use
// (a tenant created after the migration has no id of the old form to migrate). Keys never change in
// place: each is cached in process once read.
import { createHmac, randomBytes } from "node:crypto";
import type { Sql } from "../db/sql.js";
import type { SecretBox } from "../lib/secret-box.js";
import { sha256 } from "../lib/sha256.js";
import { errors } from "../lib/errors.js";
import { plausibleAddress } from "./identity.js";

/** An id of the plain-hash form (and of the opaque form: the two look alike, which is the point). */
export const EMAIL_READER_ID = /^email:[0-9a-f]{32}$/;

/** The first 32 hex of the SHA-256 of the lower-cased address: what the MAC is taken of. */
export const addressDigest = (address: string): string => sha256(address.toLowerCase(), "hex").slice(0, 32);

const mac = (key: Buffer, message: string): string => createHmac("sha256", key).update(message).digest("hex").slice(0, 32);

/** The email reader's id from the address's digest (addressDigest, or the body of an id of the old form). */
export const emailIdFromDigest = (key: Buffer, digest: string): string => `email:${mac(key, `email\n${digest}`)}`;

/** A provider's reader id: the subject as given, or its MAC when the subject is an address. */
export const providerReaderId = (key: Buffer, providerId: string, subject: string): string =>
  plausibleAddress(subject) ? `${providerId}:${mac(key, `oidc\n${providerId}\n${subject}`)}` : `${providerId}:${subject}`;

/**
 * What an email id of the plain-hash form became under the tenant's key (any other id as it is). For
 * what still names a reader the old way after the migration: an unsubscribe link mailed before it.
 */
export function migratedReaderId(key: Buffer, id: string): string {
  return EMAIL_READER_ID.test(id) ? emailIdFromDigest(key, id.slice("email:".length)) : id;
}

export interface ReaderIds {
  /** `email:` + 32 hex for the address, on this tenant */
  email(tenantId: string, address: string): Promise<string>;
  /** `<providerId>:<subject>`, the subject made opaque when it is an address */
  provider(tenantId: string, providerId: string, subject: string): Promise<string>;
  /** the tenant's key (made on first use) */
  keyOf(tenantId: string): Promise<Buffer>;
  /** a new key and its sealed form (the migration writes it with the ids it rewrote) */
  newKey(): { key: Buffer; keyEnc: string };
}

/** A new key and its sealed form, as reader_id_keys keeps it. */
export function newReaderIdKey(box: SecretBox): { key: Buffer; keyEnc: string } {
  const key = randomBytes(32);
  return { key, keyEnc: box.seal(key.toString("base64url")) };
}

const SELECT = 'SELECT key_enc AS "keyEnc" FROM reader_id_keys WHERE tenant_id = $1';

export function createReaderIds(deps: { sql: Sql; secretBox: SecretBox }): ReaderIds {
  const cache = new Map<string, Promise<Buffer>>();
  const newKey = () => newReaderIdKey(deps.secretBox);
  const read = async (tenantId: string): Promise<Buffer> => {
    let [row] = await deps.sql.query<{ keyEnc: string }>(SELECT, [tenantId], "eng_reader_id_key");
    if (!row) {
      // two instances racing keep the first row written
      await deps.sql.query(
        `INSERT INTO reader_id_keys (tenant_id, key_enc) SELECT id, $2 FROM tenants WHERE id = $1
         ON CONFLICT (tenant_id) DO NOTHING`,
        [tenantId, newKey().keyEnc],
      );
      [row] = await deps.sql.query<{ keyEnc: string }>(SELECT, [tenantId], "eng_reader_id_key");
      if (!row) throw errors.notFound("Tenant"); // a tenant deleted meanwhile
    }
    return Buffer.from(deps.secretBox.open(row.keyEnc), "base64url");
  };
  const keyOf = (tenantId: string): Promise<Buffer> => {
    let key = cache.get(tenantId);
    if (!key) {
      key = read(tenantId);
      key.catch(() => cache.delete(tenantId));
      if (cache.size >= 10_000) cache.clear();
      cache.set(tenantId, key);
    }
    return key;
  };
  return {
    keyOf,
    newKey,
    email: async (tenantId, address) => emailIdFromDigest(await keyOf(tenantId), addressDigest(address)),
    provider: async (tenantId, providerId, subject) => providerReaderId(await keyOf(tenantId), providerId, subject),
  };
}
