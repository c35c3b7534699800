/**
 * Public face of src/agent/cache: the agent's cache of server data with blocking refresh (Consul's
 * agent/cache) and its cache types (agent/cache-types). A new kind of data is one small file: a
 * `blockingQueryType({ name, key, query })`, or a `CacheType` of its own when it keeps fetch state.
 */
export { createAgentCache } from "./cache.ts";
export type { AgentCacheDeps } from "./cache.ts";
export { REFRESH_BACKOFF_MIN_FAILURES, REFRESH_MAX_WAIT_MS, refreshBackoffMs } from "./backoff.ts";
export { blockingQueryType } from "./blocking_query.ts";
export type { BlockingQuerySpec } from "./blocking_query.ts";
export { activeSigningKeyId, caRootsType } from "./ca_roots.ts";
export type { CaRoots, CaRootsRequest, SigningRoots } from "./ca_roots.ts";
export { getLeaf, LEAF_UNUSED_TTL_MS, leafCertType } from "./ca_leaf.ts";
export type { CachedLeaf, LeafCertTypeDeps, LeafRequest, LeafState } from "./ca_leaf.ts";
export { createLeafCache } from "./leaf_cache.ts";
export type { LeafCache, LeafCacheDeps } from "./leaf_cache.ts";
export { DEFAULT_GET_WAIT_MS, DEFAULT_LAST_GET_TTL_MS, DEFAULT_REFRESH_TIMEOUT_MS } from "./types.ts";
export type { AgentCache, CacheResult, CacheType, FetchOptions, FetchResult, GetOptions, WatchHandlers, WatchOptions } from "./types.ts";
export { blockingRead } from "./state_reader.ts";
export type { StateReader, StateReadOptions } from "./state_reader.ts";
export { healthServicesType } from "./health_services.ts";
export type { HealthServicesRequest } from "./health_services.ts";
export { compiledChainType, NO_CA_CONFIG } from "./discovery_chain.ts";
export type { CompiledChainRequest } from "./discovery_chain.ts";
export { intentionMatchType } from "./intention_match.ts";
export type { IntentionMatchRequest } from "./intention_match.ts";
export { configEntryType } from "./config_entry.ts";
export type { ConfigEntryRequest } from "./config_entry.ts";
export { PREPARED_QUERY_POLL_MS, preparedQueryType } from "./prepared_query.ts";
export type { PreparedQueryRequest, PreparedQueryTypeDeps } from "./prepared_query.ts";
export { meshGatewaysOverCatalog, meshGatewaysType } from "./mesh_gateways.ts";
export type { MeshGatewaysRequest } from "./mesh_gateways.ts";
export { federationGatewaysType } from "./federation_gateways.ts";
export type { DatacenterGateways, FederationGatewaysRequest } from "./federation_gateways.ts";
export { catalogServicesType, configEntriesType, DATACENTERS_POLL_MS, datacentersType } from "./catalog_lists.ts";
export type { CatalogServicesRequest, ConfigEntriesRequest, DatacentersRequest } from "./catalog_lists.ts";
