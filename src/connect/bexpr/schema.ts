/**
 * Schemas describe the shape a filter runs over, the way go-bexpr derives its FieldConfigurations from Go
 * types by reflection (go-bexpr v0.1.2 field_config.go). A selector is valid only if every segment names a
 * field of a struct (exact, case-sensitive match, like Go's field names) or a key of a map (any key).
 * A list is transparent to selectors: `Checks.Status` selects the Status of each check.
 */

/** A primitive leaf: "int" coerces values like Go's int fields (strconv.ParseInt base 0), "number" like float64. */
export type PrimitiveType = "string" | "int" | "number" | "bool";

/** A list (Go slice). Selectors pass through it; a match then holds if it holds for any element. */
export interface ListType {
  readonly kind: "list";
  readonly of: FieldType;
}

/** A map with string keys (Go map[string]X); the next selector segment is a key. */
export interface MapType {
  readonly kind: "map";
  readonly of: FieldType;
}

/** A nested struct: no operator applies to it directly, only to its fields. */
export interface StructType {
  readonly kind: "struct";
  readonly fields: Schema;
}

/** The type of one field: a primitive leaf, a list, a string-keyed map or a nested struct. */
export type FieldType = PrimitiveType | ListType | MapType | StructType;

/** The fields of a top-level type, by exact (PascalCase wire) name. */
export type Schema = { readonly [field: string]: FieldType };

/** A schema whose keys must be fields of T (extra keys are a compile error); fields left out are not selectable. */
export type SchemaOf<T> = { readonly [K in keyof T]?: FieldType };

/** `list(x)` describes a Go slice of x. */
export function list(of: FieldType): ListType {
  return { kind: "list", of };
}

/** `map(x)` describes a Go map[string]x. */
export function map(of: FieldType): MapType {
  return { kind: "map", of };
}

/** `struct(fields)` describes a nested struct. */
export function struct(fields: Schema): StructType {
  return { kind: "struct", fields };
}

/** True for the primitive leaf types. */
export function isPrimitive(t: FieldType): t is PrimitiveType {
  return typeof t === "string";
}

/** The field named `name` of a schema, own properties only (so "constructor" or "__proto__" never match). */
export function fieldOf(schema: Schema, name: string): FieldType | undefined {
  return Object.hasOwn(schema, name) ? schema[name] : undefined;
}
