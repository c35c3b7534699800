/**
 * Decodes parsed JSON into a shape described by a Go-like schema, with encoding/json's rules as Consul's
 * decoders apply them: struct field names match case-insensitively (an exact match first), unknown
 * fields are ignored, later duplicates win, `null` leaves a scalar or struct field unset and sets a
 * slice, map or interface field to nil (kept as `null`), and a type mismatch fails with Go's text
 * ("json: cannot unmarshal string into Go struct field RegisterRequest.Service.Port of type int").
 *
 * The result is a plain object keyed by the schema's field names holding only the fields present.
 */
import { decodeGoBase64 } from "./go_compat.ts";
import { goIntOf, goUint64Of, isJsonObject, jsonKind, numberText, setOwn, unmarshalTypeError, type JsonObject, type JsonValue } from "./value.ts";

/** A field type whose decoding is custom (Go types with their own UnmarshalJSON, e.g. durations). */
export interface GoCustom {
  readonly goName: string;
  /** Decodes a non-null value; returns undefined for a JSON type the Go type does not accept. */
  decode(value: JsonValue): unknown;
}

export interface GoStruct {
  readonly name: string;
  readonly fields: Readonly<Record<string, GoType>>;
}

export type GoType =
  | "string" | "bool" | "int" | "uint64" | "float64" | "bytes" | "any"
  | { readonly slice: GoType }
  | { readonly map: GoType }
  | { readonly struct: GoStruct }
  | { readonly custom: GoCustom };

export const slice = (of: GoType): GoType => ({ slice: of });
export const map = (of: GoType): GoType => ({ map: of });
export const struct = (name: string, fields: Record<string, GoType>): { readonly struct: GoStruct } => ({ struct: { name, fields } });

function goName(t: GoType): string {
  if (typeof t === "string") return t === "bytes" ? "[]uint8" : t === "any" ? "interface {}" : t;
  if ("slice" in t) return `[]${goName(t.slice)}`;
  if ("map" in t) return `map[string]${goName(t.map)}`;
  if ("struct" in t) return t.struct.name;
  return t.custom.goName;
}

/** A value's literal text: a number's as the parser read it, anything else as String() gives it. */
const textOf = (container: object, key: string | number, v: JsonValue) => (typeof v === "number" ? numberText(container, key, v) : String(v));

class Decoder {
  constructor(private readonly top: string) {}

  private mismatch(what: string, path: string, t: GoType): never {
    throw unmarshalTypeError(what, path ? `${this.top}.${path}` : "", goName(t));
  }

  /** Decodes a non-null value. */
  /**
   * Decodes a non-null value; `text` is a number's literal text (integer fields are read from it, as
   * strconv does: "1.0", "1e3" and out-of-range values are refused, uint64 values stay exact).
   */
  value(v: JsonValue, t: GoType, path: string, text = String(v)): unknown {
    if (t === "any") return v;
    if (t === "string" || t === "bool") return typeof v === (t === "string" ? "string" : "boolean") ? v : this.mismatch(jsonKind(v), path, t);
    if (t === "int" || t === "uint64" || t === "float64") {
      if (typeof v !== "number") return this.mismatch(jsonKind(v), path, t);
      if (t === "float64") return v;
      const n = t === "int" ? goIntOf(text) : goUint64Of(text);
      return n ?? this.mismatch(`number ${text}`, path, t);
    }
    if (t === "bytes") return typeof v === "string" ? decodeGoBase64(v) : this.mismatch(jsonKind(v), path, t);
    if ("custom" in t) {
      const out = t.custom.decode(v);
      return out === undefined ? this.mismatch(jsonKind(v), path, t) : out;
    }
    if ("slice" in t) {
      if (!Array.isArray(v)) return this.mismatch(jsonKind(v), path, t);
      return v.map((e, i) => (e === null ? this.nullOf(t.slice) : this.value(e, t.slice, path, textOf(v, i, e))));
    }
    if (!isJsonObject(v)) return this.mismatch(jsonKind(v), path, t);
    if ("map" in t) {
      const out: Record<string, unknown> = {};
      for (const [k, e] of Object.entries(v)) setOwn(out, k, e === null ? this.nullOf(t.map) : this.value(e, t.map, path, textOf(v, k, e)));
      return out;
    }
    return this.struct(v, t.struct, path);
  }

  /** What a JSON null becomes inside a slice or map: nil for reference types, the zero value otherwise. */
  private nullOf(t: GoType): unknown {
    if (t === "string") return "";
    if (t === "bool") return false;
    if (t === "int" || t === "uint64" || t === "float64") return 0;
    if (typeof t === "object" && "struct" in t) return {};
    return null;
  }

  struct(v: JsonObject, s: GoStruct, path: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const names = Object.keys(s.fields);
    for (const [key, raw] of Object.entries(v)) {
      const field = names.find((n) => n === key) ?? names.find((n) => n.toLowerCase() === key.toLowerCase());
      if (field === undefined) continue;
      const t = s.fields[field]!;
      if (raw === null) {
        const nils = t === "any" || t === "bytes" || (typeof t === "object" && ("slice" in t || "map" in t));
        if (nils) out[field] = null;
        continue;
      }
      out[field] = this.value(raw, t, path ? `${path}.${field}` : field, textOf(v, key, raw));
    }
    return out;
  }
}

/**
 * Decodes a parsed body into struct `s` (a top-level null decodes to an empty struct, as Go leaves the
 * target untouched). Throws GoError with encoding/json's message on a type mismatch.
 */
export function decodeGoStruct<T>(v: JsonValue, s: GoStruct): T {
  const d = new Decoder(s.name.replace(/^.*\./, ""));
  if (v === null) return {} as T;
  if (!isJsonObject(v)) throw unmarshalTypeError(jsonKind(v), "", s.name);
  return d.struct(v, s, "") as T;
}

/** Decodes a parsed body as a Go slice of struct `of` (Consul's api.TxnOps); null decodes to an empty list. */
export function decodeGoSlice<T>(v: JsonValue, of: { readonly struct: GoStruct }, goTypeName: string): T[] {
  if (v === null) return [];
  if (!Array.isArray(v)) throw unmarshalTypeError(jsonKind(v), "", goTypeName);
  const d = new Decoder(of.struct.name.replace(/^.*\./, ""));
  return v.map((e, i) => (e === null ? {} : d.value(e, of, "", textOf(v, i, e)))) as T[];
}
