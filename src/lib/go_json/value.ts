/**
 * JSON values as Go's encoding/json sees them, and the pieces of its error texts that both decoders
 * (schema.ts and reader.ts) share.
 */
import { GoError } from "./go_compat.ts";

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** True for a JSON object (not null, not an array). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The JSON kind named in a type error: "object", "array", "string", "number", "null", or "boolean" (Go says "bool"). */
export function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (v === null) return "null";
  return typeof v === "object" ? "object" : typeof v;
}

/** Sets an own, enumerable property even for keys like "__proto__" (keys come from the client). */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * encoding/json's UnmarshalTypeError: "json: cannot unmarshal <what> into Go struct field <field> of
 * type <goType>", or "... into Go value of type <goType>" when `field` is "" (the top-level value).
 * `what` is a JSON kind ("string") or, for a number out of the target's range, "number 1.5".
 */
export function unmarshalTypeError(what: string, field: string, goType: string): GoError {
  const where = field ? `Go struct field ${field}` : "Go value";
  return new GoError(`json: cannot unmarshal ${what} into ${where} of type ${goType}`);
}

/**
 * The source text of each number the parser read, by container (object or array) and key or index:
 * encoding/json decodes an integer field from the literal's text (strconv.ParseInt/ParseUint), so
 * "1.0", "1e3" and 2^63 fail there even though a JS number would hold some of them.
 */
const NUMBER_TEXT = new WeakMap<object, Map<string | number, string>>();

/** Records the literal text of the number at `container[key]` (the parser's side table). */
export function recordNumberText(container: object, key: string | number, text: string): void {
  let m = NUMBER_TEXT.get(container);
  if (!m) NUMBER_TEXT.set(container, (m = new Map()));
  m.set(key, text);
}

/** The literal text of the number at `container[key]`, if the parser read it; else the number's own text. */
export function numberText(container: object, key: string | number, value: number): string {
  return NUMBER_TEXT.get(container)?.get(key) ?? String(value);
}

const INT_LITERAL = /^-?(?:0|[1-9][0-9]*)$/;
const UINT_LITERAL = /^(?:0|[1-9][0-9]*)$/;
const INT64_MIN = -(2n ** 63n), INT64_MAX = 2n ** 63n - 1n, UINT64_MAX = 2n ** 64n - 1n;

/**
 * A Go `int` (int64) from a JSON number literal, as strconv.ParseInt reads it: no fraction, no exponent,
 * within int64. Undefined when Go would refuse it, and also beyond ±(2^53 - 1), which a JS number cannot
 * hold exactly (refused rather than rounded).
 */
export function goIntOf(text: string): number | undefined {
  if (!INT_LITERAL.test(text)) return undefined;
  const n = BigInt(text);
  if (n < INT64_MIN || n > INT64_MAX) return undefined;
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : undefined;
}

/**
 * A Go `uint64` from a JSON number literal or a query parameter, as strconv.ParseUint reads it: digits
 * only, at most 2^64 - 1. A number when it is a safe integer, else the exact bigint; undefined when Go
 * would refuse it.
 */
export function goUint64Of(text: string): number | bigint | undefined {
  if (!UINT_LITERAL.test(text)) return undefined;
  const n = BigInt(text);
  if (n > UINT64_MAX) return undefined;
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}
