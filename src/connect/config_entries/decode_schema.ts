/**
 * A small schema-driven decoder with the leniency of Consul's config entry decoding (structs.DecodeConfigEntry:
 * mapstructure with WeaklyTypedInput, ErrorUnused, decode.HookTranslateKeys and
 * StringToTimeDurationHookFunc):
 *
 * - Field names match case-insensitively and ignoring underscores, so Go names (`ServiceSubset`), their
 *   lower-case forms and the snake_case aliases (`service_subset`) all decode. Keys of user maps (Subsets,
 *   Failover, Meta, Config) are kept as given.
 * - Unknown keys are an error (`'Routes[0]' has invalid keys: foo`), as are values of the wrong type; all
 *   errors are collected and reported mapstructure-style ("2 error(s) decoding:\n\n* ...").
 * - Weak typing: a numeric string decodes as a number, "true"/"false"/"1"/"0" as a bool, a number as a string.
 * - Durations take a Go duration string ("1.5s") or a number of nanoseconds, and come out in canonical form.
 * - The output omits a field tagged omitempty in Go when it holds its zero value and fills every other field
 *   with its zero value, so it is exactly Consul's JSON shape.
 */
import { formatGoDuration, parseGoDuration } from "../../lib/index.ts";

export type ScalarSpec = "string" | "bool" | "float" | "uint" | "duration" | "object";
export type Spec = ScalarSpec | { readonly list: Spec } | { readonly map: Spec } | StructSpec;
export interface FieldDef {
  readonly spec: Spec;
  /** Go `json:",omitempty"`: absent when zero. */
  readonly omit?: boolean;
  /** A Go pointer to a struct: absent unless given. */
  readonly ptr?: boolean;
}
export interface StructSpec {
  readonly fields: Readonly<Record<string, FieldDef>>;
}

const GO_TYPE: Readonly<Record<ScalarSpec, string>> = {
  string: "string", bool: "bool", float: "float32", uint: "uint32", duration: "time.Duration", object: "map[string]interface {}",
};

/** Field-name key used for matching: lower case without underscores. */
export function foldKey(key: string): string {
  return key.toLowerCase().replace(/_/g, "");
}

function goTypeOf(v: unknown): string {
  if (Array.isArray(v)) return "[]interface {}";
  if (typeof v === "number") return "float64";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "object") return "map[string]interface {}";
  return typeof v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Decodes `raw` against `spec`; errors are pushed onto `errors` and the offending value is skipped. */
export function decodeValue(raw: unknown, spec: Spec, path: string, errors: string[]): unknown {
  const mismatch = (want: string) => {
    errors.push(`'${path}' expected type '${want}', got unconvertible type '${goTypeOf(raw)}'`);
    return undefined;
  };
  if (typeof spec === "string") {
    switch (spec) {
      case "string":
        if (typeof raw === "string") return raw;
        if (typeof raw === "number") return String(raw);
        if (typeof raw === "boolean") return raw ? "1" : "0";
        return mismatch(GO_TYPE.string);
      case "bool":
        if (typeof raw === "boolean") return raw;
        if (typeof raw === "number") return raw !== 0;
        if (typeof raw === "string" && /^(1|t|T|TRUE|true|True)$/.test(raw)) return true;
        if (typeof raw === "string" && /^(0|f|F|FALSE|false|False|)$/.test(raw)) return false;
        return mismatch(GO_TYPE.bool);
      case "float":
      case "uint": {
        const n = typeof raw === "number" ? raw : typeof raw === "string" && raw.trim() !== "" ? Number(raw) : NaN;
        if (!Number.isFinite(n) || (spec === "uint" && (n < 0 || !Number.isInteger(n) || n > 0xffff_ffff))) return mismatch(GO_TYPE[spec]);
        return n;
      }
      case "duration":
        // mapstructure turns a number into time.Duration nanoseconds (int64, fractions truncated); one
        // past int64 has no Go value, so it is refused rather than wrapped.
        if (typeof raw === "number" && Number.isFinite(raw)) {
          const ns = Math.trunc(raw);
          if (Math.abs(ns) >= 2 ** 63) {
            errors.push(`error decoding '${path}': time: invalid duration ${raw} (out of range)`);
            return undefined;
          }
          return ns === 0 ? "" : formatGoDuration(ns);
        }
        if (typeof raw === "string") {
          try {
            const ns = parseGoDuration(raw);
            return ns === 0 ? "" : formatGoDuration(ns);
          } catch {
            errors.push(`error decoding '${path}': time: invalid duration ${JSON.stringify(raw)}`);
            return undefined;
          }
        }
        return mismatch(GO_TYPE.duration);
      case "object":
        return isPlainObject(raw) ? raw : mismatch(GO_TYPE.object);
    }
  }
  if ("list" in spec) {
    if (!Array.isArray(raw)) return mismatch("slice");
    return raw.map((item, i) => decodeValue(item, spec.list, `${path}[${i}]`, errors));
  }
  if ("map" in spec) {
    if (!isPlainObject(raw)) return mismatch("map");
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(raw).sort()) out[key] = decodeValue(raw[key], spec.map, `${path}[${key}]`, errors);
    return out;
  }
  if (!isPlainObject(raw)) return mismatch("struct");
  return decodeStruct(raw, spec, path, errors);
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === "" || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isPlainObject(v)) return Object.keys(v).length === 0;
  return false;
}

function decodeStruct(raw: Record<string, unknown>, spec: StructSpec, path: string, errors: string[]): Record<string, unknown> {
  const byFold = new Map(Object.keys(spec.fields).map((name) => [foldKey(name), name]));
  const given = new Map<string, unknown>();
  const invalid: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const name = byFold.get(foldKey(key));
    if (name === undefined) invalid.push(key);
    else if (value !== null && value !== undefined) given.set(name, value);
  }
  if (invalid.length > 0) errors.push(`'${path}' has invalid keys: ${invalid.sort().join(", ")}`);
  const out: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(spec.fields)) {
    const fieldPath = path === "" ? name : `${path}.${name}`;
    let value = given.has(name) ? decodeValue(given.get(name), def.spec, fieldPath, errors) : zeroOf(def);
    if (value === undefined) continue;
    if (def.omit && !def.ptr && isZero(value)) continue;
    if (def.spec === "duration" && value === "") value = "0s";
    out[name] = value;
  }
  return out;
}

function zeroOf(def: FieldDef): unknown {
  if (def.ptr || def.omit) return undefined;
  const s = def.spec;
  if (typeof s === "string") return s === "string" ? "" : s === "bool" ? false : s === "float" || s === "uint" ? 0 : undefined;
  if ("list" in s) return [];
  if ("map" in s) return {};
  return decodeStruct({}, s, "", []);
}

/** Formats collected errors the way mapstructure does. */
export function formatDecodeErrors(errors: readonly string[]): string {
  return `${errors.length} error(s) decoding:\n\n${errors.map((e) => `* ${e}`).join("\n")}`;
}
