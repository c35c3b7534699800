/**
 * How the State service's reads, results and other values travel between agents and servers: JSON in
 * which byte arrays (KV values) become `{"$bytes": "<base64>"}`, so a result decodes to exactly the
 * value the serving server produced; integers past 2^53 (uint64 KV flags) stay exact as bigints.
 */
import { Buffer } from "node:buffer";
import { bigintReplacer, parseExact } from "../lib/index.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const BYTES = "$bytes";
/** Wraps a value's own object that looks like a marker (its only key is BYTES or ESCAPED), so it stays an object. */
const ESCAPED = "$escaped";

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array);
const soleKey = (v: Record<string, unknown>): string | undefined => {
  const keys = Object.keys(v);
  return keys.length === 1 ? keys[0] : undefined;
};

/**
 * Encodes `value`; bigints (uint64 values past 2^53) are written as exact number literals. Byte arrays
 * become `{"$bytes": base64}`; an object of the value's own whose only key is "$bytes" or "$escaped"
 * (a service's Meta, say) is written as `{"$escaped": [[key, value]]}` so that it decodes as itself.
 */
export function encodeWire(value: unknown): Uint8Array {
  return enc.encode(JSON.stringify(value, (key, v: unknown) => {
    if (v instanceof Uint8Array) return { [BYTES]: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64") };
    if (isPlainObject(v)) {
      const k = soleKey(v);
      if (k === BYTES || k === ESCAPED) return { [ESCAPED]: [[k, v[k]]] };
    }
    return bigintReplacer(key, v);
  }));
}

/** Parses what encodeWire wrote; throws SyntaxError on anything else. */
export function decodeWire<T>(bytes: Uint8Array): T {
  return parseExact(dec.decode(bytes), (_key, v: unknown) => {
    if (!isPlainObject(v)) return v;
    const k = soleKey(v);
    if (k === BYTES && typeof v[BYTES] === "string") return new Uint8Array(Buffer.from(v[BYTES], "base64"));
    const pair = k === ESCAPED && Array.isArray(v[ESCAPED]) ? (v[ESCAPED] as unknown[])[0] : undefined;
    if (Array.isArray(pair) && typeof pair[0] === "string") {
      const out: Record<string, unknown> = {};
      Object.defineProperty(out, pair[0], { value: pair[1], enumerable: true, writable: true, configurable: true });
      return out;
    }
    return v;
  }) as T;
}
