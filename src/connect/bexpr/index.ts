/**
 * HashiCorp's bexpr filter language (Consul's `?filter=` and service-resolver `Subsets[].Filter`), with
 * go-bexpr v0.1.2's grammar and semantics (Consul 1.8). See compile.ts for the semantics and parser.ts for
 * the grammar.
 */
export { compileFilter, filterList, filterRecord, type Filter } from "./compile.ts";
export { FilterError, type FilterPosition } from "./errors.ts";
export {
  list,
  map,
  struct,
  type FieldType,
  type ListType,
  type MapType,
  type PrimitiveType,
  type Schema,
  type SchemaOf,
  type StructType,
} from "./schema.ts";
export {
  CHECK_SERVICE_NODE_SCHEMA,
  HEALTH_CHECK_SCHEMA,
  NODE_SCHEMA,
  NODE_SERVICE_SCHEMA,
  SERVICE_NODE_SCHEMA,
} from "./consul_schemas.ts";
export { compileGoRegexp, type GoRegexp } from "./regexp.ts";
export { RegexpSyntaxError } from "./regexp_syntax.ts";
