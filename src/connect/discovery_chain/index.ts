/**
 * The discovery chain compiler (Consul 1.8's agent/consul/discoverychain) and write-time graph validation of
 * config entries. Pure: entries in, a compiled chain (or a ConfigEntryGraphError) out.
 */
export { compileDiscoveryChain, type CompileRequest } from "./compile.ts";
export { discoveryChainSet, relatedServices, type DiscoveryChainSet } from "./entry_set.ts";
export { nodeKey, serviceSni, targetId } from "./names.ts";
export type {
  CompiledDiscoveryChain,
  DiscoveryFailover,
  DiscoveryGraphNode,
  DiscoveryGraphNodeType,
  DiscoveryResolver,
  DiscoveryRoute,
  DiscoverySplit,
  DiscoveryTarget,
} from "./types.ts";
export { validateDeleteInGraph, validateEntryInGraph } from "./validate_graph.ts";
