/**
 * compileDiscoveryChain: Consul 1.8's discoverychain.Compile (agent/consul/discoverychain/compile.go) as a
 * pure function. Phase one (assemble.ts) builds nodes and targets; here the graph is checked for circular
 * references, adjacent splitters are flattened, unreachable nodes and unused targets dropped, the protocol
 * checked against the routing features in use, overrides applied, and the result laid out in sorted order.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import {
  ConfigEntryGraphError,
  isL7Protocol,
  normalizeSplitWeight,
  type ConfigEntry,
  type MeshGatewayMode,
} from "../config_entries/index.ts";
import { formatDuration } from "../../lib/index.ts";
import { ChainAssembler, type MutNode, type MutTarget } from "./assemble.ts";
import { discoveryChainSet, type DiscoveryChainSet } from "./entry_set.ts";
import type { CompiledDiscoveryChain, DiscoveryGraphNode, DiscoveryTarget } from "./types.ts";

export interface CompileRequest {
  /** The chain's service (an upstream's DestinationName). */
  readonly serviceName: string;
  /** Default "default". */
  readonly evaluateInNamespace?: string;
  /** The datacenter the chain is evaluated in (the upstream's datacenter, or the agent's). */
  readonly evaluateInDatacenter: string;
  /** `<cluster-id>.consul`. */
  readonly evaluateInTrustDomain: string;
  /** The datacenter of the proxy using the chain; targets there never go through a mesh gateway. */
  readonly useInDatacenter: string;
  /** Replaces the mesh gateway mode of every remote target (an upstream's or proxy's MeshGateway). */
  readonly overrideMeshGateway?: { readonly Mode?: MeshGatewayMode };
  /** An upstream's Config.protocol: a non-L7 value drops routers and splitters. */
  readonly overrideProtocol?: string;
  /** An upstream's Config.connect_timeout_ms, in milliseconds; 0 or absent = none. */
  readonly overrideConnectTimeoutMs?: number;
  /** Config entries of any kinds (others are ignored), or an already indexed set. */
  readonly entries: DiscoveryChainSet | Iterable<ConfigEntry>;
}

function isChainSet(e: CompileRequest["entries"]): e is DiscoveryChainSet {
  return typeof e === "object" && e !== null && "routers" in e && e.routers instanceof Map;
}

/**
 * Compiles the discovery chain of `req.serviceName`. Throws ConfigEntryGraphError when the entries form an
 * invalid graph (Consul's messages: "detected circular resolver redirect", "detected circular reference",
 * "uses inconsistent protocols", "does not permit advanced routing or splitting behavior", "does not have a
 * subset named", external SNI conflicts) and a plain Error when a required request field is empty.
 * The result is a fresh value: Nodes and Targets in sorted key order, splits and routes in entry order.
 */
export function compileDiscoveryChain(req: CompileRequest): CompiledDiscoveryChain {
  for (const field of ["serviceName", "evaluateInDatacenter", "evaluateInTrustDomain", "useInDatacenter"] as const) {
    if (!req[field]) throw new Error(`${field} is required`);
  }
  const entries = isChainSet(req.entries) ? req.entries : discoveryChainSet(req.entries);
  const namespace = req.evaluateInNamespace || "default";
  const overrideProtocol = (req.overrideProtocol ?? "").toLowerCase();
  const c = new ChainAssembler(
    {
      serviceName: req.serviceName,
      evaluateInNamespace: namespace,
      evaluateInDatacenter: req.evaluateInDatacenter,
      evaluateInTrustDomain: req.evaluateInTrustDomain,
      useInDatacenter: req.useInDatacenter,
      overrideMeshGateway: req.overrideMeshGateway?.Mode ?? "",
      overrideProtocol,
      overrideConnectTimeoutMs: req.overrideConnectTimeoutMs ?? 0,
    },
    entries,
  );
  c.assembleChain();
  detectCircularReferences(c.nodes, c.startNode);
  flattenAdjacentSplitterNodes(c.nodes);
  removeUnusedNodes(c.nodes, c.startNode);
  let protocol = c.protocol;
  if (!isL7Protocol(protocol) && c.usesAdvancedRoutingFeatures) {
    throw new ConfigEntryGraphError(
      `discovery chain ${JSON.stringify(req.serviceName)} uses a protocol ${JSON.stringify(protocol)} that does not permit advanced routing or splitting behavior`,
    );
  }
  if (overrideProtocol !== "" && overrideProtocol !== protocol) {
    protocol = overrideProtocol;
    c.customizedBy.protocol = true;
  }
  const hash = customizationHash(c.customizedBy, req.overrideMeshGateway?.Mode ?? "", overrideProtocol, req.overrideConnectTimeoutMs ?? 0);
  const nodes: Record<string, DiscoveryGraphNode> = {};
  for (const key of [...c.nodes.keys()].sort()) nodes[key] = nodeOut(c.nodes.get(key)!);
  const targets: Record<string, DiscoveryTarget> = {};
  for (const id of [...c.retainedTargets].sort()) targets[id] = targetOut(c.loadedTargets.get(id)!);
  return {
    ServiceName: req.serviceName,
    Namespace: namespace,
    Datacenter: req.evaluateInDatacenter,
    ...(hash ? { CustomizationHash: hash } : {}),
    Protocol: protocol,
    StartNode: c.startNode,
    Nodes: nodes,
    Targets: targets,
  };
}

/** Depth-first over routes and splits; a node met again on the current path is a cycle. */
function detectCircularReferences(nodes: ReadonlyMap<string, MutNode>, start: string): void {
  const POP = "\u0000popvisit";
  const todo = [start];
  const visited = new Set<string>();
  const chain: string[] = [];
  for (let current = todo.pop(); current !== undefined; current = todo.pop()) {
    if (current === POP) {
      const v = chain.pop();
      if (v !== undefined) visited.delete(v);
      continue;
    }
    chain.push(current);
    if (visited.has(current)) throw new ConfigEntryGraphError(`detected circular reference: [${chain.join(" -> ")}]`);
    visited.add(current);
    todo.push(POP);
    const node = nodes.get(current)!;
    for (const r of node.Routes ?? []) todo.push(r.NextNode);
    for (const s of node.Splits ?? []) todo.push(s.NextNode);
  }
}

/**
 * Replaces each split that leads to another splitter by that splitter's splits, weighted
 * outer*inner/100 and rounded to two decimals, until nothing changes. Nodes are visited in key order so
 * the rounding is deterministic (Consul walks a Go map).
 */
function flattenAdjacentSplitterNodes(nodes: ReadonlyMap<string, MutNode>): void {
  for (let changed = true; changed; ) {
    changed = false;
    for (const key of [...nodes.keys()].sort()) {
      const node = nodes.get(key)!;
      if (node.Type !== "splitter") continue;
      const fixed: { Weight: number; NextNode: string }[] = [];
      let nodeChanged = false;
      for (const split of node.Splits!) {
        const next = nodes.get(split.NextNode)!;
        if (next.Type !== "splitter") {
          fixed.push(split);
          continue;
        }
        nodeChanged = true;
        for (const inner of next.Splits!) {
          fixed.push({ Weight: normalizeSplitWeight((split.Weight * inner.Weight) / 100), NextNode: inner.NextNode });
        }
      }
      if (nodeChanged) {
        node.Splits = fixed;
        changed = true;
      }
    }
  }
}

/** Drops nodes not reachable from the start node (e.g. splitters merged away by flattening). */
function removeUnusedNodes(nodes: Map<string, MutNode>, start: string): void {
  const visited = new Set<string>();
  const todo = [start];
  for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
    if (visited.has(next)) continue;
    visited.add(next);
    const node = nodes.get(next);
    if (node === undefined) throw new Error(`compilation references non-retained node ${JSON.stringify(next)}`);
    for (const r of node.Routes ?? []) todo.push(r.NextNode);
    for (const s of node.Splits ?? []) todo.push(s.NextNode);
  }
  for (const key of [...nodes.keys()]) if (!visited.has(key)) nodes.delete(key);
}

/**
 * First 8 hex chars of SHA-256 over the overrides that changed the result (the others zeroed); "" when none
 * did. Consul hashes the same struct with hashstructure, so the values differ from Consul's but are as stable.
 */
function customizationHash(
  by: { readonly meshGateway: boolean; readonly protocol: boolean; readonly connectTimeout: boolean },
  mode: string,
  protocol: string,
  timeoutMs: number,
): string {
  if (!by.meshGateway && !by.protocol && !by.connectTimeout) return "";
  const customization = {
    OverrideMeshGateway: { Mode: by.meshGateway ? mode : "" },
    OverrideProtocol: by.protocol ? protocol : "",
    OverrideConnectTimeout: by.connectTimeout ? timeoutMs : 0,
  };
  return bytesToHex(sha256(utf8ToBytes(JSON.stringify(customization)))).slice(0, 8);
}

function nodeOut(n: MutNode): DiscoveryGraphNode {
  const out: { -readonly [K in keyof DiscoveryGraphNode]: DiscoveryGraphNode[K] } = { Type: n.Type, Name: n.Name };
  if (n.Routes) out.Routes = n.Routes.map((r) => ({ Definition: r.Definition, NextNode: r.NextNode }));
  if (n.Splits) out.Splits = n.Splits.map((s) => ({ Weight: s.Weight, NextNode: s.NextNode }));
  if (n.Resolver) {
    const r = n.Resolver;
    out.Resolver = {
      Default: r.Default,
      ConnectTimeout: formatDuration(r.ConnectTimeoutMs),
      Target: r.Target,
      ...(r.Failover ? { Failover: { Targets: [...r.Failover.Targets] } } : {}),
    };
  }
  return out;
}

function targetOut(t: MutTarget): DiscoveryTarget {
  return {
    ID: t.ID,
    Service: t.Service,
    ...(t.ServiceSubset ? { ServiceSubset: t.ServiceSubset } : {}),
    Namespace: t.Namespace,
    Datacenter: t.Datacenter,
    MeshGateway: t.meshGatewayMode ? { Mode: t.meshGatewayMode } : {},
    Subset: { ...t.subset },
    ...(t.external ? { External: true } : {}),
    SNI: t.sni,
    Name: t.Name,
  };
}
