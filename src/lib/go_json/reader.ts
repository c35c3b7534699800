/**
 * Reads Consul-style JSON bodies field by field the way Consul's mapstructure-based decoders accept
 * them (an alternative to schema.ts for bodies with aliases and per-field rules): field names match
 * case-insensitively (Go's encoding/json and mapstructure) and snake_case aliases match their
 * PascalCase field (Consul's TranslateKeys: "enable_tag_override" == "EnableTagOverride"). Values of
 * opaque maps (Meta, Proxy.Config, Header) keep their keys exactly. Type mismatches throw a GoError
 * with Go's text ("json: cannot unmarshal string into Go struct field ServiceDefinition.Port of type
 * int"); callers add their endpoint's prefix ("Request decode failed: ").
 */
import { parseDuration } from "../duration.ts";
import { GoError } from "./go_compat.ts";
import { goIntOf, isJsonObject, jsonKind, numberText, unmarshalTypeError, type JsonObject, type JsonValue } from "./value.ts";

const normalize = (key: string): string => key.replace(/_/g, "").toLowerCase();

/** A mismatch as this reader words it: any number is named with its value ("number 1"). */
function mismatch(v: unknown, path: string, goType: string): never {
  throw unmarshalTypeError(typeof v === "number" ? `number ${v}` : jsonKind(v), path, goType);
}

/** A view of one JSON object; `path` names it in error messages ("ServiceDefinition.Check"). */
export class JsonReader {
  private readonly byKey = new Map<string, string>();

  constructor(readonly obj: Readonly<JsonObject>, readonly path: string) {
    for (const key of Object.keys(obj)) {
      const n = normalize(key);
      if (!this.byKey.has(n)) this.byKey.set(n, key);
    }
  }

  /** Reads an object value as a reader; throws if `v` is not an object. */
  static of(v: unknown, path: string): JsonReader {
    if (!isJsonObject(v)) mismatch(v, path, "struct");
    return new JsonReader(v, path);
  }

  /** The raw value of the first of `names` present (null counts as absent), or undefined. */
  raw(...names: string[]): JsonValue | undefined {
    const key = this.keyOf(...names);
    const v = Object.hasOwn(this.obj, key) ? this.obj[key] : undefined;
    return v === null ? undefined : v;
  }

  /**
   * The key as written in the input for the first of `names` present, for error messages. An exact
   * spelling wins over a case or snake_case variant, as Go's decoder prefers an exact match.
   */
  keyOf(...names: string[]): string {
    for (const name of names) {
      const v = Object.hasOwn(this.obj, name) ? this.obj[name] : undefined;
      if (v !== undefined && v !== null) return name;
      const key = this.byKey.get(normalize(name));
      if (key !== undefined && this.obj[key] !== undefined && this.obj[key] !== null) return key;
    }
    return names[0]!;
  }

  private at(name: string): string {
    return this.path ? `${this.path}.${name}` : name;
  }

  str(...names: string[]): string {
    const v = this.raw(...names);
    if (v === undefined) return "";
    if (typeof v !== "string") mismatch(v, this.at(names[0]!), "string");
    return v;
  }

  bool(...names: string[]): boolean {
    const v = this.raw(...names);
    if (v === undefined) return false;
    if (typeof v !== "boolean") mismatch(v, this.at(names[0]!), "bool");
    return v;
  }

  /** A Go int read from the literal's text as strconv does ("1.0", "1e3" and out-of-range values are refused). */
  int(...names: string[]): number {
    const v = this.raw(...names);
    if (v === undefined) return 0;
    if (typeof v !== "number") mismatch(v, this.at(names[0]!), "int");
    const text = numberText(this.obj, this.keyOf(...names), v);
    const n = goIntOf(text);
    if (n === undefined) throw unmarshalTypeError(`number ${text}`, this.at(names[0]!), "int");
    return n;
  }

  /** A Go duration: a string ("10s") or a number of nanoseconds; returns milliseconds, 0 when absent. */
  durationMs(...names: string[]): number {
    const v = this.raw(...names);
    if (v === undefined) return 0;
    const key = this.keyOf(...names);
    if (typeof v === "number") return v / 1e6;
    if (typeof v !== "string") throw new GoError(`invalid ${JSON.stringify(key)}: invalid format`);
    try {
      return parseDuration(v);
    } catch {
      throw new GoError(`invalid ${JSON.stringify(key)}: time: invalid duration ${JSON.stringify(v)}`);
    }
  }

  /** An array of strings, or null when absent. */
  strList(...names: string[]): string[] | null {
    const v = this.raw(...names);
    if (v === undefined) return null;
    if (!Array.isArray(v)) mismatch(v, this.at(names[0]!), "[]string");
    return v.map((x) => (typeof x === "string" ? x : mismatch(x, this.at(names[0]!), "string")));
  }

  /** A map of strings (keys kept as written), or null when absent. */
  strMap(...names: string[]): Record<string, string> | null {
    const v = this.raw(...names);
    if (v === undefined) return null;
    if (!isJsonObject(v)) mismatch(v, this.at(names[0]!), "map[string]string");
    const out: Record<string, string> = {};
    for (const [k, x] of Object.entries(v)) out[k] = typeof x === "string" ? x : mismatch(x, this.at(names[0]!), "string");
    return out;
  }

  /** An opaque JSON object (keys kept as written), or undefined when absent. */
  opaque(...names: string[]): Record<string, unknown> | undefined {
    const v = this.raw(...names);
    if (v === undefined) return undefined;
    if (!isJsonObject(v)) mismatch(v, this.at(names[0]!), "map[string]interface {}");
    return { ...v };
  }

  /** A nested object as a reader, or undefined when absent. */
  child(...names: string[]): JsonReader | undefined {
    const v = this.raw(...names);
    return v === undefined ? undefined : JsonReader.of(v, this.at(names[0]!));
  }

  /** A nested array of objects as readers ([] when absent). */
  children(...names: string[]): JsonReader[] {
    const v = this.raw(...names);
    if (v === undefined) return [];
    if (!Array.isArray(v)) mismatch(v, this.at(names[0]!), "[]struct");
    return v.filter((x) => x !== null).map((x, i) => JsonReader.of(x, `${this.at(names[0]!)}[${i}]`));
  }
}
