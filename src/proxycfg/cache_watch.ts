/**
 * Watch requests of the sidecar state machine, served by the agent cache: each request kind maps to one
 * cache type (roots, leaf, intention match, config entry, compiled chain, health, mesh gateways,
 * prepared query) and its values to the machine's value types.
 */
import type { CompiledDiscoveryChain, IssuedCert } from "../connect/index.ts";
import type {
  AgentCache, CacheType, CaRoots, CaRootsRequest, CompiledChainRequest, ConfigEntryRequest, HealthServicesRequest, IntentionMatchRequest,
  LeafRequest, LeafState, MeshGatewaysRequest, PreparedQueryRequest,
} from "../agent/index.ts";
import type { CheckServiceNode, ConfigEntry, IndexedCARoots, Intention } from "../model/index.ts";
import type { Cancel } from "../platform/index.ts";
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
): Cancel {
  /** A datacenter for a read: undefined for this agent's own (no forwarding). */
  const dcOf = (dc: string) => (dc === "" || dc === ctx.datacenter ? undefined : dc);
  const on = <V>(f: (v: V) => WatchUpdate) => ({ onUpdate: (r: { value: V }) => onUpdate(f(r.value)), onError });
  switch (request.kind) {
    case "roots":
      return cache.watch(types.roots, {}, on((v: CaRoots) => ({ kind: "roots", watchId, value: indexedRoots(v) })));
    case "leaf":
      return cache.watch(types.leaf, { service: request.service }, on((value: IssuedCert) => ({ kind: "leaf", watchId, value })));
    case "intentions":
      return cache.watch(types.intentions, { service: request.service }, on((value: readonly Intention[]) => ({ kind: "intentions", watchId, value })));
    case "config-entry":
      return cache.watch(types.configEntry, { kind: request.entryKind, name: request.name }, on((value: ConfigEntry | null) => ({ kind: "config-entry", watchId, value })));
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
      return cache.watch(types.chain, req, on((value: CompiledDiscoveryChain) => ({ kind: "chain", watchId, value })));
    }
    case "health": {
      const dc = dcOf(request.datacenter);
      const req: HealthServicesRequest = { service: request.service, connect: true, ...(dc ? { datacenter: dc } : {}), ...(request.filter ? { filter: request.filter } : {}) };
      return cache.watch(types.health, req, on((value: readonly CheckServiceNode[]) => ({ kind: "health", watchId, value })));
    }
    case "mesh-gateways":
      return cache.watch(types.meshGateways, { datacenter: request.datacenter }, on((value: readonly CheckServiceNode[]) => ({ kind: "mesh-gateways", watchId, value })));
    case "prepared-query": {
      const dc = dcOf(request.datacenter);
      const source = { Datacenter: ctx.datacenter, Segment: "", Node: ctx.nodeName, Ip: "" };
      const req: PreparedQueryRequest = { idOrName: request.name, source, ...(dc ? { datacenter: dc } : {}) };
      return cache.watch(types.preparedQuery, req, on((value: readonly CheckServiceNode[]) => ({ kind: "prepared-query", watchId, value })));
    }
  }
}
