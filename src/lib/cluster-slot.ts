// Redis Cluster hash slots: CRC16 (XMODEM) of the key, or of its hash tag — the part between the
// first `{` and the next `}` when that part is not empty — modulo 16384. Keys that share a tag share
// a slot, so one Lua script or MULTI may touch them all on a cluster.

const TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    t[i] = crc;
  }
  return t;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

/** The part of the key that decides its slot: the hash tag when there is a non-empty one. */
export function hashTagOf(key: string): string {
  const open = key.indexOf("{");
  if (open < 0) return key;
  const close = key.indexOf("}", open + 1);
  if (close <= open + 1) return key;
  return key.slice(open + 1, close);
}

/** The cluster slot (0–16383) of a key or channel, as Redis computes it. */
export function keySlot(key: string): number {
  return crc16(Buffer.from(hashTagOf(key), "utf8")) % 16384;
}
