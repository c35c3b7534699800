/**
 * The xDS layer's public face: the per-node resource cache, the ADS service (SotW and delta) over
 * it, and a function that serves it on a port. Resource generation and proxycfg feed the cache.
 */
export {
  createXdsCache,
  typeSnapshot,
  type CachedResource,
  type CacheEvent,
  type CacheWatcher,
  type NodeSnapshot,
  type ResourceSet,
  type ResourceValue,
  type TypeSnapshot,
  type XdsCache,
  type XdsCacheOptions,
} from "./cache/cache.ts";
export { resourceVersion, typeVersion } from "./cache/hash.ts";
export { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, TYPE_URL_PREFIX, sendOrder } from "./types.ts";
export { CAUSEWAY_GATEWAY_USER_AGENT, describeNode, isEnvoy, resolveByProxyId, type NodeIdentity, type NodeResolution, type NodeTarget, type ResolveNode } from "./node.ts";
export { AUTH_CHECK_MS, createAdsService, TOO_MANY_STREAMS, type AdsService, type AdsServiceOptions, type StreamAuth } from "./service.ts";
export { serveAds, type AdsServer, type ServeAdsOptions } from "./serve.ts";
export { createUpdateLimiter, DEFAULT_UPDATES_PER_SECOND, type UpdateLimiter } from "./rate_limit.ts";
export type { RequestOutcome } from "./protocol/common.ts";
export { meshGatewayResources, type MeshGatewayResources } from "./resources/index.ts";
export {
  envoyRegistry,
  proxylessResources,
  ResourceGenerationError,
  sidecarClusters,
  sidecarEndpoints,
  sidecarListeners,
  sidecarResources,
  sidecarRoutes,
  toResourceMap,
  type ProxylessResources,
  type SidecarResources,
} from "./resources/index.ts";
