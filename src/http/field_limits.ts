/**
 * Size limits on the strings and lists of a catalog registration that the state store indexes or
 * matches (`/v1/catalog/register`; the agent's own endpoints apply the same numbers in
 * src/agent/validate.ts). Consul 1.8 has limits only for metadata (structs.validateMetadata: 64 pairs,
 * keys up to 128 and values up to 512 bytes); the others are Causeway's, set well above real use:
 * - node, service and check names and IDs: 512 bytes;
 * - tags: 512 bytes each (as a metadata value), 256 per service;
 * - checks: 64 per registration.
 * Lengths are UTF-8 bytes, as Go's len(). Messages never echo an oversized value.
 */

export const FIELD_LIMITS = {
  name: 512,
  tag: 512,
  tags: 256,
  checks: 64,
  metaPairs: 64,
  metaKey: 128,
  metaValue: 512,
} as const;

/** UTF-8 length of `s` in bytes, without encoding it when its UTF-16 length already decides. */
export function utf8Bytes(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    // 2 bytes below U+0800, 3 above, 4 for a surrogate pair (two UTF-16 units).
    if (u >= 0x80) n += u < 0x800 || (u >= 0xd800 && u <= 0xdfff) ? 1 : 2;
  }
  return n;
}

/** "<what> is too long (limit: N bytes)" when `value` passes `limit`. */
export function tooLong(what: string, value: string | undefined, limit: number = FIELD_LIMITS.name): string | undefined {
  if (value === undefined || value.length * 3 <= limit) return undefined;
  return utf8Bytes(value) > limit ? `${what} is too long (limit: ${limit} bytes)` : undefined;
}

/** Tags: at most FIELD_LIMITS.tags of them, each at most FIELD_LIMITS.tag bytes. */
export function tagsError(what: string, tags: readonly string[] | null | undefined): string | undefined {
  if (!tags) return undefined;
  if (tags.length > FIELD_LIMITS.tags) return `${what} has too many tags (limit: ${FIELD_LIMITS.tags})`;
  for (const tag of tags) {
    const bad = tooLong(`${what} tag`, tag, FIELD_LIMITS.tag);
    if (bad) return bad;
  }
  return undefined;
}

/** Metadata within Consul's sizes: pairs, key and value lengths (the key named when it is short enough to show). */
export function metaSizeError(what: string, meta: Readonly<Record<string, string | null>> | null | undefined): string | undefined {
  if (!meta) return undefined;
  const keys = Object.keys(meta);
  if (keys.length > FIELD_LIMITS.metaPairs) return `${what} cannot contain more than ${FIELD_LIMITS.metaPairs} key/value pairs`;
  for (const key of keys) {
    const bad = tooLong(`${what} key`, key, FIELD_LIMITS.metaKey) ??
      tooLong(`${what} value for key ${JSON.stringify(key)}`, meta[key] ?? "", FIELD_LIMITS.metaValue);
    if (bad) return bad;
  }
  return undefined;
}
