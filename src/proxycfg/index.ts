/**
 * proxycfg: per-proxy snapshot state machines (typed events -> readonly snapshot), and the manager that
 * runs one per local connect proxy or mesh gateway over the agent cache; the proxyless gRPC client machine and its
 * manager. Public face.
 */
export { upstreamDatacenter, upstreamIdentifier } from "./snapshot.ts";
export type { ConnectProxySnapshot, SidecarSnapshot } from "./snapshot.ts";
export type { MeshGatewaySnapshot, MeshGatewaySnapshotState } from "./mesh_gateway_snapshot.ts";
export { isServiceUpstream, mergeServiceConfig, resolveServiceConfig, type ResolvedServiceConfig } from "./service_config.ts";
export { watchIds, type ChainWatch, type WatchCommand, type WatchKind, type WatchRequest, type WatchUpdate, type WatchValues } from "./watches.ts";
export { SidecarState, type SidecarContext, type SidecarEvent, type SidecarRegistration } from "./sidecar_state.ts";
export { indexedRoots, watchInCache, watchMeshGatewayInCache, type CacheWatchContext, type MeshGatewayCacheTypes, type SidecarCacheTypes } from "./cache_watch.ts";
export {
  COALESCE_MS, createProxyManager, meshGatewayRegistration, sidecarRegistration, type LocalServices, type ProxyManager, type ProxyManagerDeps, type ProxySnapshot,
} from "./manager.ts";
export { DEFAULT_DOMAIN, MeshGatewayState, type MeshGatewayContext } from "./mesh_gateway_state.ts";
export {
  exposesServers, meshGatewayWatchIds, type MeshGatewayCommand, type MeshGatewayEvent, type MeshGatewayRegistration, type MeshGatewayUpdate, type MeshGatewayWatchRequest,
  type MeshGatewayWatchValues,
} from "./mesh_gateway_watches.ts";
export type { ProxylessSnapshot, ProxylessUpstream } from "./proxyless_snapshot.ts";
export {
  ProxylessState, type ProxylessCommand, type ProxylessEvent, type ProxylessSource, type ProxylessUpdate, type ProxylessWatchRequest, type ProxylessWatchValues,
} from "./proxyless_state.ts";
export {
  createProxylessManager, localServiceSource, PROXYLESS_IDLE_MS, PROXYLESS_INITIAL_WAIT_MS, PROXYLESS_VIEW_PREFIX, proxylessViewKey, sidecarViewSource,
  type LocalNode, type ProxylessCacheTypes, type ProxylessManager, type ProxylessManagerDeps,
} from "./proxyless_manager.ts";
