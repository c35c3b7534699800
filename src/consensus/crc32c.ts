/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of iSCSI, ext4 metadata and
 * etcd's WAL. Pure TypeScript, slicing-by-8 tables: about 1 GB/s on Bun.
 */

const POLY = 0x82f63b78;

/** 8 tables of 256 entries: T[k][b] is the CRC of byte b followed by k zero bytes. */
const TABLES: Uint32Array = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]!;
    for (let k = 1; k < 8; k++) {
      c = t[c & 0xff]! ^ (c >>> 8);
      t[k * 256 + n] = c >>> 0;
    }
  }
  return t;
})();

/**
 * Extends a running CRC-32C with `data[start, end)`. Start from 0 (`crc32cUpdate(0, a)`); chaining
 * `crc32cUpdate(crc32cUpdate(0, a), b)` equals the CRC of `a` followed by `b`. Returns an unsigned 32-bit value.
 */
export function crc32cUpdate(crc: number, data: Uint8Array, start = 0, end = data.length): number {
  const t = TABLES;
  let c = ~crc >>> 0;
  let i = start;
  const end8 = end - ((end - i) & 7);
  while (i < end8) {
    const lo = (c ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))) >>> 0;
    c = t[1792 + (lo & 0xff)]! ^ t[1536 + ((lo >>> 8) & 0xff)]! ^ t[1280 + ((lo >>> 16) & 0xff)]! ^ t[1024 + (lo >>> 24)]! ^
      t[768 + data[i + 4]!]! ^ t[512 + data[i + 5]!]! ^ t[256 + data[i + 6]!]! ^ t[data[i + 7]!]!;
    i += 8;
  }
  while (i < end) c = t[(c ^ data[i++]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** CRC-32C of `data[start, end)` (whole buffer by default), as an unsigned 32-bit number. */
export function crc32c(data: Uint8Array, start = 0, end = data.length): number {
  return crc32cUpdate(0, data, start, end);
}
