/**
 * Decodes a create/update body (POST /v1/connect/intentions, PUT /v1/connect/intentions/:id) the way
 * Consul 1.8's decodeBody does: lib.DecodeJSON is encoding/json with DisallowUnknownFields (the 1.7
 * "stricter JSON decoding" upgrade note), so
 * - field names match case-insensitively, an exact match first; there is no snake_case translation;
 * - a field the Intention struct does not have fails with `json: unknown field "Foo"`;
 * - `null` leaves a field unset (Meta becomes nil);
 * - a type mismatch fails with `json: cannot unmarshal string into Go struct field Intention.DefaultPort of type int`;
 * - the first error in document order wins (encoding/json's saveError).
 * Read-only fields the api client echoes back (Precedence, CreatedAt, UpdatedAt, Hash, CreateIndex,
 * ModifyIndex) are accepted, type-checked and dropped: the server recomputes all of them.
 */
import { IntentionError } from "./errors.ts";
import type { IntentionBody } from "./types.ts";

type FieldType = "string" | "int" | "uint64" | "meta";

/** Field name -> [decoded type, Go type name for messages, kept in the body?]. */
const FIELDS: Readonly<Record<string, readonly [FieldType, string, boolean]>> = {
  ID: ["string", "string", true],
  Description: ["string", "string", true],
  SourceNS: ["string", "string", true],
  SourceName: ["string", "string", true],
  DestinationNS: ["string", "string", true],
  DestinationName: ["string", "string", true],
  SourceType: ["string", "structs.IntentionSourceType", true],
  Action: ["string", "structs.IntentionAction", true],
  DefaultAddr: ["string", "string", true],
  DefaultPort: ["int", "int", true],
  Meta: ["meta", "map[string]string", true],
  Precedence: ["int", "int", false],
  // Intention.UnmarshalJSON decodes these three as plain strings and ignores CreatedAt / UpdatedAt.
  CreatedAt: ["string", "string", false],
  UpdatedAt: ["string", "string", false],
  Hash: ["string", "string", false],
  CreateIndex: ["uint64", "uint64", false],
  ModifyIndex: ["uint64", "uint64", false],
};
const NAMES = Object.keys(FIELDS);

function jsonKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v === "object" ? "object" : typeof v === "boolean" ? "bool" : typeof v;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function fail(message: string): never {
  throw new IntentionError("decode", message);
}

/** encoding/json names the number ("number 1.5") only when a number does not fit a numeric field. */
function mismatch(v: unknown, field: string, goType: string, what = jsonKind(v)): never {
  return fail(`json: cannot unmarshal ${what} into Go struct field Intention.${field} of type ${goType}`);
}

function decodeField(v: unknown, field: string, type: FieldType, goType: string): unknown {
  switch (type) {
    case "string":
      return typeof v === "string" ? v : mismatch(v, field, goType);
    case "int":
    case "uint64":
      if (typeof v !== "number") return mismatch(v, field, goType);
      return Number.isSafeInteger(v) && (type === "int" || v >= 0) ? v : mismatch(v, field, goType, `number ${v}`);
    case "meta": {
      if (!isObject(v)) return mismatch(v, field, goType);
      const out: Record<string, string> = {};
      for (const [k, e] of Object.entries(v)) {
        // A null element still creates the key, with the zero value "" (encoding/json's map decoding).
        if (e !== null && typeof e !== "string") return mismatch(e, field, "string");
        Object.defineProperty(out, k, { value: e ?? "", enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
  }
}

/**
 * Decodes a parsed JSON body (the HTTP layer parses it with Go's syntax rules first). A top-level `null`
 * decodes to an empty body, as Go leaves the *Intention nil and Intention.Apply substitutes an empty one.
 * Throws IntentionError("decode") with encoding/json's wording.
 */
export function decodeIntentionBody(value: unknown): IntentionBody {
  if (value === null) return {};
  if (!isObject(value)) return fail(`json: cannot unmarshal ${jsonKind(value)} into Go value of type structs.Intention`);
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(value)) {
    const field = NAMES.find((n) => n === key) ?? NAMES.find((n) => n.toLowerCase() === key.toLowerCase());
    if (field === undefined) return fail(`json: unknown field ${JSON.stringify(key)}`);
    const [type, goType, keep] = FIELDS[field]!;
    if (raw === null) {
      if (type === "meta") out[field] = null;
      continue;
    }
    const decoded = decodeField(raw, field, type, goType);
    if (keep) out[field] = decoded;
  }
  return out as IntentionBody;
}
