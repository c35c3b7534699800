/**
 * Serf tags <-> member metadata bytes (the `meta` of alive messages). Pure functions.
 *
 * Serf encodes tags as a magic byte plus a msgpack map (serf/serf.go encodeTags); Causeway's gossip is
 * not wire-compatible with Consul's, so it uses its own compact, canonical form instead:
 *
 *   empty tag set   -> zero bytes (what the core uses as "no metadata")
 *   otherwise       -> magic 0xC7, then per tag in ascending key order: uvarint key length, key UTF-8,
 *                      uvarint value length, value UTF-8
 *
 * Keys are sorted by UTF-16 code units (`Array.prototype.sort` default), so equal tag sets always give
 * equal bytes on every runtime, and decoding rejects anything that is not in that canonical form
 * (unsorted or duplicate keys, empty keys, truncation, trailing bytes, bad UTF-8) with `CodecError`.
 */
import { MAX_META_BYTES } from "./config.ts";
import { CodecError } from "./wire.ts";

/** A member's tags: string keys to string values, like serf's `map[string]string`. */
export type Tags = Readonly<Record<string, string>>;

/** First byte of a non-empty encoded tag set. */
export const TAGS_MAGIC = 0xc7;

/** Thrown by `encodeTags` when the encoded tags do not fit in the metadata limit. */
export class TagsTooLargeError extends RangeError {
  constructor(readonly size: number, readonly limit: number, readonly largest: readonly string[]) {
    super(`serf tags encode to ${size} bytes, over the ${limit}-byte metadata limit (largest tags: ${largest.join(", ")})`);
    this.name = "TagsTooLargeError";
  }
}

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder("utf-8", { fatal: true });

function uvarintLen(n: number): number {
  let len = 1;
  while (n >= 0x80) { n = Math.floor(n / 128); len++; }
  return len;
}

function putUvarint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) { out[at++] = (n & 0x7f) | 0x80; n = Math.floor(n / 128); }
  out[at++] = n;
  return at;
}

/** Canonical key order (UTF-16 code units). */
function sortedKeys(tags: Tags): string[] {
  return Object.keys(tags).sort();
}

/**
 * Encodes `tags` canonically. Throws `TypeError` for an empty key or a non-string value, and
 * `TagsTooLargeError` (a RangeError naming the largest tags) when the result exceeds `limit`
 * (default `MAX_META_BYTES`, memberlist's MetaMaxSize). Strings must be well-formed UTF-16: a lone
 * surrogate would not survive the UTF-8 round trip.
 */
export function encodeTags(tags: Tags, limit: number = MAX_META_BYTES): Uint8Array {
  const keys = sortedKeys(tags);
  if (keys.length === 0) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  let size = 1;
  for (const k of keys) {
    const v = tags[k];
    if (k === "") throw new TypeError("serf tags: empty tag key");
    if (typeof v !== "string") throw new TypeError(`serf tags: value of ${JSON.stringify(k)} is not a string`);
    const kb = utf8.encode(k), vb = utf8.encode(v);
    parts.push(kb, vb);
    size += uvarintLen(kb.length) + kb.length + uvarintLen(vb.length) + vb.length;
  }
  if (size > limit) {
    const bySize = keys.map((k, i) => ({ k, n: parts[2 * i]!.length + parts[2 * i + 1]!.length }));
    bySize.sort((a, b) => b.n - a.n || (a.k < b.k ? -1 : 1));
    throw new TagsTooLargeError(size, limit, bySize.slice(0, 3).map((e) => `${e.k}=${e.n}B`));
  }
  const out = new Uint8Array(size);
  out[0] = TAGS_MAGIC;
  let at = 1;
  for (const p of parts) {
    at = putUvarint(out, at, p.length);
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Decodes canonical tag bytes; throws `CodecError` (only) on anything else. Empty bytes are `{}`. */
export function decodeTags(bytes: Uint8Array): Tags {
  const tags: Record<string, string> = {};
  if (bytes.length === 0) return tags;
  if (bytes[0] !== TAGS_MAGIC) throw new CodecError(`serf tags: bad magic byte ${bytes[0]}`);
  let at = 1;
  const uvarint = (): number => {
    let n = 0, mul = 1;
    for (let i = 0; i < 4; i++) {
      if (at >= bytes.length) throw new CodecError(`serf tags: truncated length at byte ${at}`);
      const b = bytes[at++]!;
      n += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) {
        if (b === 0 && i > 0) throw new CodecError(`serf tags: non-minimal length at byte ${at - 1}`);
        return n;
      }
      mul *= 128;
    }
    throw new CodecError(`serf tags: length too long at byte ${at}`);
  };
  const str = (): string => {
    const n = uvarint();
    if (at + n > bytes.length) throw new CodecError(`serf tags: truncated string at byte ${at}`);
    const start = at;
    at += n;
    try {
      return utf8Strict.decode(bytes.subarray(start, at));
    } catch {
      throw new CodecError(`serf tags: invalid UTF-8 at byte ${start}`);
    }
  };
  let prev: string | undefined;
  while (at < bytes.length) {
    const k = str();
    if (k === "") throw new CodecError("serf tags: empty key");
    if (prev !== undefined && !(prev < k)) throw new CodecError(`serf tags: key ${JSON.stringify(k)} out of order or duplicated`);
    // defineProperty, not assignment: a "__proto__" key must stay an ordinary own property.
    Object.defineProperty(tags, k, { value: str(), enumerable: true, writable: true, configurable: true });
    prev = k;
  }
  if (prev === undefined) throw new CodecError("serf tags: magic byte without tags");
  return tags;
}

/** Decodes, or returns undefined for malformed bytes (for callers that count instead of throwing). */
export function tryDecodeTags(bytes: Uint8Array): Tags | undefined {
  try {
    return decodeTags(bytes);
  } catch (e) {
    if (e instanceof CodecError) return undefined;
    throw e;
  }
}

/** True when both tag sets have the same keys with the same values. */
export function tagsEqual(a: Tags, b: Tags): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}
