/**
 * What a sidecar's state machine asks its environment to watch, and what it hears back: typed watch
 * requests keyed by a correlation ID (Consul's correlation IDs in agent/proxycfg/state.go), the updates
 * carrying a watch's new value, and the commands (watch / cancel) the machine emits. Pure data.
 */
import type { CompiledDiscoveryChain, IssuedCert } from "../connect/index.ts";
import type { CheckServiceNode, ConfigEntry, IndexedCARoots, Intention, MeshGatewayMode } from "../model/index.ts";

/** A discovery-chain request (structs.DiscoveryChainRequest without the token). */
export interface ChainWatch {
  readonly name: string;
  readonly evaluateInDatacenter: string;
  readonly evaluateInNamespace: string;
  readonly overrideMeshGatewayMode: MeshGatewayMode;
  readonly overrideProtocol: string;
  readonly overrideConnectTimeoutMs: number;
}

/** One thing to watch. Two requests are the same watch exactly when their JSON is equal. */
export type WatchRequest =
  | { readonly kind: "roots" }
  /** The leaf certificate of the proxy's destination service. */
  | { readonly kind: "leaf"; readonly service: string }
  /** Intentions whose destination matches the service (exact or wildcard). */
  | { readonly kind: "intentions"; readonly service: string }
  | { readonly kind: "config-entry"; readonly entryKind: "proxy-defaults" | "service-defaults"; readonly name: string }
  | { readonly kind: "chain"; readonly upstream: string; readonly chain: ChainWatch }
  /** Connect-capable instances of a chain target, in its datacenter, through its subset filter. */
  | { readonly kind: "health"; readonly upstream: string; readonly targetId: string; readonly service: string; readonly datacenter: string; readonly filter: string }
  | { readonly kind: "mesh-gateways"; readonly upstream: string; readonly datacenter: string }
  | { readonly kind: "prepared-query"; readonly upstream: string; readonly name: string; readonly datacenter: string };

/** The value each kind of watch delivers. */
export interface WatchValues {
  readonly roots: IndexedCARoots;
  readonly leaf: IssuedCert;
  readonly intentions: readonly Intention[];
  readonly "config-entry": ConfigEntry | null;
  readonly chain: CompiledDiscoveryChain;
  readonly health: readonly CheckServiceNode[];
  readonly "mesh-gateways": readonly CheckServiceNode[];
  readonly "prepared-query": readonly CheckServiceNode[];
}

export type WatchKind = keyof WatchValues;

/** A new value for the watch `watchId` (of kind `kind`). Updates of watches no longer held are ignored. */
export type WatchUpdate = { readonly [K in WatchKind]: { readonly kind: K; readonly watchId: string; readonly value: WatchValues[K] } }[WatchKind];

/** What the machine asks for. A `cancel` always precedes a `watch` of the same ID in one batch. */
export type WatchCommand =
  | { readonly op: "watch"; readonly watchId: string; readonly request: WatchRequest }
  | { readonly op: "cancel"; readonly watchId: string };

/** Correlation IDs (Consul's rootsWatchID, leafWatchID, "discovery-chain:", "upstream-target:", ...). */
export const watchIds = {
  roots: "roots",
  leaf: "leaf",
  intentions: "intentions",
  configEntry: (kind: string, name: string) => `config-entry:${kind}:${name}`,
  chain: (upstream: string) => `discovery-chain:${upstream}`,
  target: (upstream: string, targetId: string) => `upstream-target:${targetId}:${upstream}`,
  meshGateway: (upstream: string, dc: string) => `mesh-gateway:${dc}:${upstream}`,
  preparedQuery: (upstream: string) => `upstream:${upstream}`,
} as const;
