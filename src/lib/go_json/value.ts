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
