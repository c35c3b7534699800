/**
 * JSON with exact 64-bit integers. Consul's Go API types carry uint64 fields (KV Flags, indexes) that
 * can exceed 2^53; a JS number would round them. Here such values are bigints (a number when it is a
 * safe integer, so most values stay plain numbers), written as bare JSON number literals (JSON.rawJSON,
 * on Bun and Deno) and read back exactly (JSON.parse's source text access).
 */

/** A Go uint64 value: a number when it is a safe integer, else the exact bigint. */
export type Uint64 = number | bigint;

interface RawJsonApi {
  rawJSON(text: string): unknown;
}

const rawJson = (text: string): unknown => (JSON as unknown as RawJsonApi).rawJSON(text);

/** JSON.stringify's replacer that writes a bigint as a bare number literal. */
export function bigintReplacer(_key: string, v: unknown): unknown {
  return typeof v === "bigint" ? rawJson(v.toString()) : v;
}

/**
 * JSON.stringify that writes bigints as bare number literals (exact), with an optional indent. A
 * replacer makes JSON.stringify about 4x slower (0.42 vs 1.87 ms for 2,000 catalog nodes on Bun) and
 * bigints are rare, so the plain call goes first and the replacer only when it meets a bigint.
 */
export function stringifyExact(value: unknown, space?: number): string {
  try {
    return JSON.stringify(value, null, space);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
  return JSON.stringify(value, bigintReplacer, space);
}

/** Every integer literal beyond 2^53 (9007199254740992) has at least 16 digits in a row. */
const LONG_DIGITS = /\d{16}/;

/**
 * JSON.parse that keeps integer literals beyond 2^53 exact (as bigints); every other value is what
 * JSON.parse gives. `reviver` (optional) runs after that, as JSON.parse's would. Text without 16
 * digits in a row cannot hold such a literal and goes to plain JSON.parse, which is 6-7x faster
 * than the per-value reviver (measured on a 64-operation transaction: 19 against 131 us).
 */
export function parseExact(text: string, reviver?: (key: string, value: unknown) => unknown): unknown {
  if (!LONG_DIGITS.test(text)) return reviver ? JSON.parse(text, reviver) : JSON.parse(text);
  return JSON.parse(text, function (this: unknown, key: string, value: unknown, context?: { source?: string }) {
    let v = value;
    if (typeof v === "number" && !Number.isSafeInteger(v) && context?.source !== undefined && /^-?(?:0|[1-9][0-9]*)$/.test(context.source)) v = BigInt(context.source);
    return reviver ? reviver.call(this, key, v) : v;
  } as (key: string, value: unknown) => unknown);
}
