/**
 * Consul 1.8's CompiledDiscoveryChain in its JSON shape (agent/structs/discovery_chain.go), as
 * /v1/discovery-chain/:service returns it under "Chain". Nodes and Targets are built in sorted key order,
 * so JSON.stringify of a chain is byte-stable.
 */
import type { MeshGatewayConfig, ServiceResolverSubset, ServiceRoute } from "../config_entries/index.ts";

export type DiscoveryGraphNodeType = "router" | "splitter" | "resolver";

export interface DiscoveryRoute {
  /** The router entry's route, or the synthesized catch-all `{Match:{HTTP:{PathPrefix:"/"}},Destination:{Service}}`. */
  readonly Definition: ServiceRoute;
  readonly NextNode: string;
}

export interface DiscoverySplit {
  /** Percentage with at most two decimals. */
  readonly Weight: number;
  readonly NextNode: string;
}

export interface DiscoveryFailover {
  /** Target IDs, in the order of the failover rule (its Datacenters). */
  readonly Targets: readonly string[];
}

export interface DiscoveryResolver {
  /** True when the resolver entry is absent or changes nothing (ServiceResolverConfigEntry.IsDefault). */
  readonly Default: boolean;
  /** Go duration string (DiscoveryResolver.MarshalJSON), e.g. "5s". */
  readonly ConnectTimeout: string;
  readonly Target: string;
  readonly Failover?: DiscoveryFailover;
}

export interface DiscoveryGraphNode {
  readonly Type: DiscoveryGraphNodeType;
  /** Service name for routers and splitters, target ID for resolvers. */
  readonly Name: string;
  readonly Routes?: readonly DiscoveryRoute[];
  readonly Splits?: readonly DiscoverySplit[];
  readonly Resolver?: DiscoveryResolver;
}

export interface DiscoveryTarget {
  /** `[<subset>.]<service>.<namespace>.<datacenter>`. */
  readonly ID: string;
  readonly Service: string;
  readonly ServiceSubset?: string;
  readonly Namespace: string;
  readonly Datacenter: string;
  readonly MeshGateway: MeshGatewayConfig;
  readonly Subset: ServiceResolverSubset;
  /** True when service-defaults gives an ExternalSNI. */
  readonly External?: boolean;
  /** The SNI to dial: the default service SNI, or the ExternalSNI. */
  readonly SNI: string;
  /** The default service SNI; never replaced by ExternalSNI. */
  readonly Name: string;
}

export interface CompiledDiscoveryChain {
  readonly ServiceName: string;
  readonly Namespace: string;
  readonly Datacenter: string;
  /** 8 hex chars when an override changed the result; absent otherwise. */
  readonly CustomizationHash?: string;
  readonly Protocol: string;
  readonly StartNode: string;
  /** Keyed `<Type>:<Name>`. */
  readonly Nodes: Readonly<Record<string, DiscoveryGraphNode>>;
  /** Keyed by target ID. */
  readonly Targets: Readonly<Record<string, DiscoveryTarget>>;
}
