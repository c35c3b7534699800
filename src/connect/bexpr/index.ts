/**
 * HashiCorp's bexpr filter language (Consul's `?filter=` and service-resolver `Subsets[].Filter`), with
 * go-bexpr v0.1.2's grammar and semantics (Consul 1.8). See compile.ts for the semantics, parser.ts for
 * the grammar, limits.ts for the compile-time caps and budget.ts / evaluate.ts for bounded evaluation.
 */
export { compileFilter, type Filter } from "./compile.ts";
export { filterList, filterListAsync, filterRecord, filterRecordAsync, type AsyncFilterOptions } from "./evaluate.ts";
export {
  DEFAULT_MAX_FILTER_UNITS,
  DEFAULT_MAX_ITEM_UNITS,
  DEFAULT_SLICE_UNITS,
  WorkMeter,
  type FilterBudget,
  type WorkSink,
} from "./budget.ts";
export { MAX_FILTER_BYTES, MAX_FILTER_NODES, MAX_FILTER_REGEXP_STATES } from "./limits.ts";
export { MAX_NESTING } from "./parser.ts";
export { MAX_REGEXP_STATES } from "./regexp.ts";
export { FilterError, FilterTooExpensiveError, type FilterPosition } from "./errors.ts";
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
