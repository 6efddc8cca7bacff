// Read-your-writes (contract section 26): a write's answer carries `X-Service-Consistency`, an opaque
// token of the primary's position in its write-ahead log after the write committed (an LSN); a read
// that sends it back is served by a replica only once that replica has replayed past it.
// PostgreSQL prints an LSN as two hexadecimal halves, `16/B374D848`; here it is a bigint, and the
// token is `c2.` and the LSN sealed for the writer's tenant (`ConsistencyTokens` below: opaque,
// bounded to parse, refused for another tenant; anything else is not a token).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/** The header on every write's answer, and the one a read sends back. */
export const CONSISTENCY_HEADER = "X-Service-Consistency";

const LSN_TEXT = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

/** `16/B374D848` → 0x16B374D848n; null when the text is not an LSN. */
export function parseLsn(text: string | null | undefined): bigint | null {
  const m = text ? LSN_TEXT.exec(text) : null;
  if (!m) return null;
  return (BigInt(`0x${m[1]!}`) << 32n) | BigInt(`0x${m[2]!}`);
}

export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

const PREFIX = "c2.";
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** "c2." and the base64url of the IV, the sealed 8-byte LSN and the tag (36 bytes: 48 characters); anything longer is refused before decoding */
const TOKEN = /^c2\.[A-Za-z0-9_-]{48}$/;

/**
 * The token of a position no replica reaches: what a write answers without replicas (its reads are
 * the primary's), and where the tenant of a write is not known. The same for everyone: it says nothing.
 */
export const PRIMARY_TOKEN = "c2.primary";
/** The position PRIMARY_TOKEN stands for: past any replica's. */
export const PRIMARY_LSN = 0xffffffffffffffffn;

/**
 * The tokens are sealed (AES-256-GCM under a key of their own, derived from the service's secret,
 * the same on every instance), with the tenant's id as the authenticated data: a token says nothing
 * of the log's position (which every database of the server shares, so it would tell a tenant how
 * much the others write), and one tenant's token is not a token to another.
 */
export interface ConsistencyTokens {
  encode(lsn: bigint, tenantId: string): string;
  /**
   * The LSN a token names for this tenant; `invalid` for a value that is not a token this service
   * wrote for it, and for a request without a tenant (the read then goes to the primary, which has
   * every write: never a stale answer, never a refusal of a browser that kept an old token); null
   * when there is no header.
   */
  decode(value: string | string[] | null | undefined, tenantId: string | null): bigint | "invalid" | null;
}

export function createConsistencyTokens(secret: string): ConsistencyTokens {
  const key = Buffer.from(hkdfSync("sha256", secret, "engagement", "consistency-token/v1", 32));
  return {
    encode(lsn, tenantId) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(tenantId, "utf8"));
      const plain = Buffer.alloc(8);
      plain.writeBigUInt64BE(BigInt.asUintN(64, lsn));
      const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return PREFIX + sealed.toString("base64url");
    },
    decode(value, tenantId) {
      if (value === undefined || value === null) return null;
      const text = Array.isArray(value) ? value[0] : value;
      if (text === undefined || text === "") return null;
      if (text === PRIMARY_TOKEN) return PRIMARY_LSN;
      if (tenantId === null || !TOKEN.test(text)) return "invalid";
      const bytes = Buffer.from(text.slice(PREFIX.length), "base64url");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES)).setAAD(Buffer.from(tenantId, "utf8"));
        decipher.setAuthTag(bytes.subarray(IV_BYTES + 8, IV_BYTES + 8 + TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, IV_BYTES + 8)), decipher.final()]).readBigUInt64BE();
      } catch {
        return "invalid";
      }
    },
  };
}
