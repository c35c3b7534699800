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

/** Encodes `value`; bigints (uint64 values past 2^53) are written as exact number literals. */
export function encodeWire(value: unknown): Uint8Array {
  return enc.encode(JSON.stringify(value, (key, v: unknown) =>
    v instanceof Uint8Array ? { [BYTES]: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64") } : bigintReplacer(key, v)));
}

/** Parses what encodeWire wrote; throws SyntaxError on anything else. */
export function decodeWire<T>(bytes: Uint8Array): T {
  return parseExact(dec.decode(bytes), (_key, v: unknown) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const b = (v as Record<string, unknown>)[BYTES];
      if (typeof b === "string" && Object.keys(v).length === 1) return new Uint8Array(Buffer.from(b, "base64"));
    }
    return v;
  }) as T;
}
