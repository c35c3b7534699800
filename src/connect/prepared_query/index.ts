/**
 * Prepared queries (Consul 1.8): validation of a query before it is written, templates (HIL interpolation,
 * Go regexps with submatches), the execution filters and ordering, and the failover to other datacenters.
 * Pure: randomness, distances and reads of other datacenters are parameters.
 */
export { nodeMetadataError, parseDnsError, parseQueryError, parseServiceError, PREPARED_QUERY_INVALID_PREFIX, REDACTED_TOKEN } from "./validate.ts";
export { compileTemplate, isTemplate, renderTemplate, TemplateError, type CompiledTemplate } from "./template.ts";
export { compileSubmatchRegexp, type SubmatchRegexp } from "./submatch.ts";
export { evalHil, HilError, parseHil, type HilScope, type HilTemplate, type HilValue } from "./hil.ts";
export { executeQuery, filterServiceNodes, nearSource, orderLocalResult, orderRemoteResult, shuffleNodes } from "./execute.ts";
export { executePreparedQuery, failoverDatacenters, type PreparedQueryExecution } from "./failover.ts";
