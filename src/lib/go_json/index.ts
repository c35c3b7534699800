/**
 * Go-compatible decoding, as Consul's HTTP handlers and config loader decode their input. JSON:
 * parseGoJson reads the first value with json.Decoder's syntax errors; decodeGoStruct/decodeGoSlice map
 * it onto a Go-like schema with encoding/json's rules (exact field name first, then any letter case);
 * JsonReader reads it field by field with mapstructure's looser matching (snake_case aliases too). Plus
 * the pieces of Go's standard library whose texts the API exposes (go_compat.ts). Every failure is a
 * GoError whose message is Go's text, byte for byte; callers add their endpoint's prefix.
 */
export { decodeGoBase64, formatGoDuration, GoError, multiErrorText, parseGoBool, parseGoDuration, uuidError } from "./go_compat.ts";
export { parseGoJson } from "./parse.ts";
export { JsonReader } from "./reader.ts";
export { decodeGoSlice, decodeGoStruct, map, slice, struct, type GoCustom, type GoStruct, type GoType } from "./schema.ts";
export { goIntOf, goUint64Of, isJsonObject, jsonKind, numberText, setOwn, unmarshalTypeError, type JsonObject, type JsonValue } from "./value.ts";
