// Read-your-writes (contract section 26): a write's answer carries `X-Service-Consistency`, an opaque
// token of the primary's position in its write-ahead log after the write committed (an LSN); a read
// that sends it back is served by a replica only once that replica has replayed past it.
// PostgreSQL prints an LSN as two hexadecimal halves, `16/B374D848`; here it is a bigint, and the
// token is `c1.` and the LSN's 8 bytes in base64url (no meaning promised to the caller, bounded to
// parse: anything else is not a token).

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

const PREFIX = "c1.";
/** "c1." and 11 base64url characters (8 bytes); longer values are refused before decoding */
const TOKEN_LENGTH = PREFIX.length + 11;
const TOKEN = /^c1\.[A-Za-z0-9_-]{11}$/;

export function encodeConsistencyToken(lsn: bigint): string {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt.asUintN(64, lsn));
  return PREFIX + bytes.toString("base64url");
}

/** The token of a position no replica reaches: what a write answers without replicas (its reads are the primary's). */
export const PRIMARY_TOKEN = encodeConsistencyToken(0xffffffffffffffffn);

/**
 * The LSN a token names; `invalid` for a value that is not a token this service wrote (the read then
 * goes to the primary, which has every write: never a stale answer, never a refusal of a browser that
 * kept an old token), null when there is no header.
 */
export function decodeConsistencyToken(value: string | string[] | null | undefined): bigint | "invalid" | null {
  if (value === undefined || value === null) return null;
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text === "") return null;
  if (text.length !== TOKEN_LENGTH || !TOKEN.test(text)) return "invalid";
  return Buffer.from(text.slice(PREFIX.length), "base64url").readBigUInt64BE();
}
