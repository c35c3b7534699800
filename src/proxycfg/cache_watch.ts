/**
 * Watch requests of the sidecar and mesh gateway state machines, served by the agent cache: each request
 * kind maps to one cache type (roots, leaf, intention match, config entry, compiled chain, health, mesh
 * gateways, prepared query; service list, config entries of a kind, datacenters) and its values to the
 * machine's value types.
 */
import type { CompiledDiscoveryChain, IssuedCert } from "../connect/index.ts";
import type {
  AgentCache, CacheType, CaRoots, CaRootsRequest, CatalogServicesRequest, CompiledChainRequest, ConfigEntriesRequest, ConfigEntryRequest,
  DatacenterGateways, DatacentersRequest, FederationGatewaysRequest, HealthServicesRequest, IntentionMatchRequest, LeafRequest, LeafState, MeshGatewaysRequest, PreparedQueryRequest,
} from "../agent/index.ts";
import { CONSUL_SERVICE, type CheckServiceNode, type ConfigEntry, type IndexedCARoots, type Intention } from "../model/index.ts";
import type { Cancel } from "../platform/index.ts";
import type { MeshGatewayUpdate, MeshGatewayWatchRequest } from "./mesh_gateway_watches.ts";
import type { WatchRequest, WatchUpdate } from "./watches.ts";

/** The cache types a sidecar's watches are served by (built once per agent, shared by every proxy). */
export interface SidecarCacheTypes {
  readonly roots: CacheType<CaRootsRequest, CaRoots>;
  readonly leaf: CacheType<LeafRequest, IssuedCert, LeafState>;
  readonly intentions: CacheType<IntentionMatchRequest, readonly Intention[]>;
  readonly configEntry: CacheType<ConfigEntryRequest, ConfigEntry | null>;
  readonly chain: CacheType<CompiledChainRequest, CompiledDiscoveryChain>;
  readonly health: CacheType<HealthServicesRequest, readonly CheckServiceNode[]>;
  readonly meshGateways: CacheType<MeshGatewaysRequest, readonly CheckServiceNode[]>;
  readonly preparedQuery: CacheType<PreparedQueryRequest, readonly CheckServiceNode[]>;
}

/** The agent facts the requests need. */
export interface CacheWatchContext {
  readonly datacenter: string;
  readonly nodeName: string;
}

/** CA roots as a snapshot holds them (structs.IndexedCARoots). */
export function indexedRoots(r: CaRoots): IndexedCARoots {
  return { ActiveRootID: r.activeRootId, TrustDomain: r.trustDomain, Roots: r.roots };
}

/**
 * Starts the cache watch for `request`; `onUpdate` gets each value as the machine's update for `watchId`,
 * `onError` each failed fetch (the cache retries). Returns the canceller.
 */
export function watchInCache(
  cache: AgentCache,
  types: SidecarCacheTypes,
  ctx: CacheWatchContext,
  watchId: string,
  request: WatchRequest,
  onUpdate: (u: WatchUpdate) => void,
  onError: (err: unknown) => void,
  token = "",
): Cancel {
  /** Reads of the proxy's data and its leaf use its registration token (as Consul's proxycfg does); CA roots need none. */
  const as = token ? { token } : {};
  /** A datacenter for a read: undefined for this agent's own (no forwarding). */
  const dcOf = (dc: string) => (dc === "" || dc === ctx.datacenter ? undefined : dc);
  const on = <V>(f: (v: V) => WatchUpdate) => ({ onUpdate: (r: { value: V }) => onUpdate(f(r.value)), onError });
  switch (request.kind) {
    case "roots":
      return cache.watch(types.roots, {}, on((v: CaRoots) => ({ kind: "roots", watchId, value: indexedRoots(v) })));
    case "leaf":
      return cache.watch(types.leaf, { service: request.service }, on((value: IssuedCert) => ({ kind: "leaf", watchId, value })), as);
    case "intentions":
      return cache.watch(types.intentions, { service: request.service }, on((value: readonly Intention[]) => ({ kind: "intentions", watchId, value })), as);
    case "config-entry":
      return cache.watch(types.configEntry, { kind: request.entryKind, name: request.name }, on((value: ConfigEntry | null) => ({ kind: "config-entry", watchId, value })), as);
    case "chain": {
      const c = request.chain;
      const req: CompiledChainRequest = {
        name: c.name,
        evaluateInDatacenter: c.evaluateInDatacenter,
        evaluateInNamespace: c.evaluateInNamespace,
        overrideMeshGatewayMode: c.overrideMeshGatewayMode,
        overrideProtocol: c.overrideProtocol,
        overrideConnectTimeoutMs: c.overrideConnectTimeoutMs,
      };
      return cache.watch(types.chain, req, on((value: CompiledDiscoveryChain) => ({ kind: "chain", watchId, value })), as);
    }
    case "health": {
      const dc = dcOf(request.datacenter);
      const req: HealthServicesRequest = { service: request.service, connect: true, ...(dc ? { datacenter: dc } : {}), ...(request.filter ? { filter: request.filter } : {}) };
      return cache.watch(types.health, req, on((value: readonly CheckServiceNode[]) => ({ kind: "health", watchId, value })), as);
    }
    case "mesh-gateways":
      return cache.watch(types.meshGateways, { datacenter: request.datacenter }, on((value: readonly CheckServiceNode[]) => ({ kind: "mesh-gateways", watchId, value })), as);
    case "prepared-query": {
      const dc = dcOf(request.datacenter);
      const source = { Datacenter: ctx.datacenter, Segment: "", Node: ctx.nodeName, Ip: "" };
      const req: PreparedQueryRequest = { idOrName: request.name, source, ...(dc ? { datacenter: dc } : {}) };
      return cache.watch(types.preparedQuery, req, on((value: readonly CheckServiceNode[]) => ({ kind: "prepared-query", watchId, value })), as);
    }
  }
}

/**
 * The cache types a mesh gateway's watches are served by (built once per agent); `federationGateways`
 * serves a WAN federation gateway's view of the federation states (its local servers come from `health`).
 */
export type MeshGatewayCacheTypes = Pick<SidecarCacheTypes, "roots" | "configEntry" | "health" | "meshGateways"> & {
  readonly catalogServices: CacheType<CatalogServicesRequest, readonly string[]>;
  readonly configEntries: CacheType<ConfigEntriesRequest, readonly ConfigEntry[]>;
  readonly datacenters: CacheType<DatacentersRequest, readonly string[]>;
  readonly federationGateways: CacheType<FederationGatewaysRequest, DatacenterGateways>;
};

/** Starts the cache watch for a mesh gateway's `request`, as {@link watchInCache} does for a sidecar's. */
export function watchMeshGatewayInCache(
  cache: AgentCache,
  types: MeshGatewayCacheTypes,
  watchId: string,
  request: MeshGatewayWatchRequest,
  onUpdate: (u: MeshGatewayUpdate) => void,
  onError: (err: unknown) => void,
  token = "",
): Cancel {
  const as = token ? { token } : {};
  const on = <V>(f: (v: V) => MeshGatewayUpdate) => ({ onUpdate: (r: { value: V }) => onUpdate(f(r.value)), onError });
  switch (request.kind) {
    case "roots":
      return cache.watch(types.roots, {}, on((v: CaRoots) => ({ kind: "roots", watchId, value: indexedRoots(v) })));
    case "config-entry":
      return cache.watch(types.configEntry, { kind: request.entryKind, name: request.name }, on((value: ConfigEntry | null) => ({ kind: "config-entry", watchId, value })), as);
    case "service-list":
      return cache.watch(types.catalogServices, {}, on((value: readonly string[]) => ({ kind: "service-list", watchId, value })), as);
    case "datacenters":
      return cache.watch(types.datacenters, {}, on((value: readonly string[]) => ({ kind: "datacenters", watchId, value })));
    case "service-resolvers":
      return cache.watch(types.configEntries, { kind: "service-resolver" }, on((value: readonly ConfigEntry[]) => ({ kind: "service-resolvers", watchId, value })), as);
    case "connect-service":
      return cache.watch(types.health, { service: request.service, connect: true }, on((value: readonly CheckServiceNode[]) => ({ kind: "connect-service", watchId, value })), as);
    case "mesh-gateways":
      return cache.watch(types.meshGateways, { datacenter: request.datacenter }, on((value: readonly CheckServiceNode[]) => ({ kind: "mesh-gateways", watchId, value })), as);
    case "federation-gateways":
      return cache.watch(types.federationGateways, {}, on((value: DatacenterGateways) => ({ kind: "federation-gateways", watchId, value })), as);
    case "consul-servers":
      // Consul's consulServerListWatchID: Health.ServiceNodes of "consul" here, not Connect, not passing-only.
      return cache.watch(types.health, { service: CONSUL_SERVICE, connect: false }, on((value: readonly CheckServiceNode[]) => ({ kind: "consul-servers", watchId, value })), as);
  }
}
