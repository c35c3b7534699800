/**
 * A compiled discovery chain (GET /v1/discovery-chain/:name's `Chain`) as a plain graph for the
 * routing page: nodes in four columns (routers, splitters, resolvers, targets) and labelled edges.
 * Pure and deterministic: the same chain gives the same graph, nodes in the order a request meets
 * them (breadth first from StartNode), then any others in key order.
 */
import type { CompiledDiscoveryChain, DiscoveryGraphNode, DiscoveryRoute, DiscoveryTarget } from "../connect/index.ts";

export type ChainKind = "router" | "splitter" | "resolver" | "target";

/** The columns, left to right. */
export const CHAIN_COLUMNS: readonly ChainKind[] = ["router", "splitter", "resolver", "target"];

export interface ChainGraphNode {
  /** The chain node's key in `Nodes` ("router:web", "resolver:v1.web.default.dc1"), or "target:<target ID>". */
  readonly id: string;
  readonly kind: ChainKind;
  /** The chain node's Name (service name or target ID), or the target's ID. */
  readonly name: string;
  /** One short line under the name ("2 routes", "failover: dc2, dc3", "subset v1 in dc2"). */
  readonly detail: string;
  /** What the node is, in words, for its accessible name: "resolver v1.web.default.dc1, failover to dc2 then dc3". */
  readonly description: string;
}

/** route: a router's route; split: a splitter's share; primary / failover: a resolver's targets. */
export type ChainEdgeKind = "route" | "split" | "primary" | "failover";

export interface ChainGraphEdge {
  readonly from: string;
  readonly to: string;
  /** "path prefix /admin", "90%", "primary", "failover 1". */
  readonly label: string;
  readonly kind: ChainEdgeKind;
}

export interface ChainGraph {
  readonly nodes: readonly ChainGraphNode[];
  readonly edges: readonly ChainGraphEdge[];
}

export const targetNodeId = (targetId: string) => `target:${targetId}`;

/** A route's match in words: "path prefix /admin, header x-beta present, methods GET"; "any request" without one. */
export function routeMatchText(route: DiscoveryRoute["Definition"]): string {
  const http = route.Match?.HTTP;
  if (!http) return "any request";
  const parts: string[] = [];
  if (http.PathExact !== undefined && http.PathExact !== "") parts.push(`path ${http.PathExact}`);
  if (http.PathPrefix !== undefined && http.PathPrefix !== "") parts.push(`path prefix ${http.PathPrefix}`);
  if (http.PathRegex !== undefined && http.PathRegex !== "") parts.push(`path regex ${http.PathRegex}`);
  for (const h of http.Header ?? []) {
    const not = h.Invert ? "not " : "";
    if (h.Exact !== undefined) parts.push(`header ${h.Name} ${not}= ${h.Exact}`);
    else if (h.Prefix !== undefined) parts.push(`header ${h.Name} ${not}prefix ${h.Prefix}`);
    else if (h.Suffix !== undefined) parts.push(`header ${h.Name} ${not}suffix ${h.Suffix}`);
    else if (h.Regex !== undefined) parts.push(`header ${h.Name} ${not}regex ${h.Regex}`);
    else parts.push(`header ${h.Name} ${h.Invert ? "absent" : "present"}`);
  }
  for (const q of http.QueryParam ?? []) {
    if (q.Exact !== undefined) parts.push(`query ${q.Name} = ${q.Exact}`);
    else if (q.Regex !== undefined) parts.push(`query ${q.Name} regex ${q.Regex}`);
    else parts.push(`query ${q.Name} present`);
  }
  if (http.Methods && http.Methods.length > 0) parts.push(`methods ${http.Methods.join(" ")}`);
  return parts.length === 0 ? "any request" : parts.join(", ");
}

/** "90%", "33.33%". */
export function weightText(weight: number): string {
  return `${Number(weight.toFixed(2))}%`;
}

/**
 * How a failover target differs from the primary: its datacenter when only that differs ("dc2"),
 * else its target ID.
 */
function failoverName(primary: DiscoveryTarget | undefined, t: DiscoveryTarget | undefined, id: string): string {
  if (primary && t && t.Service === primary.Service && (t.ServiceSubset ?? "") === (primary.ServiceSubset ?? "") && t.Namespace === primary.Namespace) return t.Datacenter;
  return id;
}

function targetDetail(t: DiscoveryTarget | undefined): string {
  if (!t) return "";
  return t.ServiceSubset ? `subset ${t.ServiceSubset} in ${t.Datacenter}` : `in ${t.Datacenter}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The routing page's graph of `chain`: its nodes (chain nodes, then targets) and edges, labelled. */
export function chainGraph(chain: CompiledDiscoveryChain): ChainGraph {
  const nodes = chain.Nodes ?? {};
  const targets = chain.Targets ?? {};
  // Chain nodes breadth first from the start, then any others (none in a compiled chain) in key order.
  const order: string[] = [];
  const queue = nodes[chain.StartNode] ? [chain.StartNode] : [];
  const seen = new Set(queue);
  const next = (n: DiscoveryGraphNode): string[] => [...(n.Routes ?? []).map((r) => r.NextNode), ...(n.Splits ?? []).map((s) => s.NextNode)];
  while (queue.length > 0) {
    const key = queue.shift()!;
    order.push(key);
    for (const k of next(nodes[key]!)) {
      if (nodes[k] && !seen.has(k)) {
        seen.add(k);
        queue.push(k);
      }
    }
  }
  for (const k of Object.keys(nodes).sort()) if (!seen.has(k)) order.push(k);

  const out: ChainGraphNode[] = [];
  const edges: ChainGraphEdge[] = [];
  const targetOrder: string[] = [];
  const addTarget = (id: string) => {
    if (!targetOrder.includes(id)) targetOrder.push(id);
  };
  for (const key of order) {
    const n = nodes[key]!;
    if (n.Type === "router") {
      const routes = n.Routes ?? [];
      out.push({ id: key, kind: "router", name: n.Name, detail: plural(routes.length, "route"), description: `router ${n.Name}, ${plural(routes.length, "route")}` });
      for (const r of routes) if (nodes[r.NextNode]) edges.push({ from: key, to: r.NextNode, label: routeMatchText(r.Definition), kind: "route" });
    } else if (n.Type === "splitter") {
      const splits = n.Splits ?? [];
      out.push({ id: key, kind: "splitter", name: n.Name, detail: splits.map((s) => weightText(s.Weight)).join(" / "), description: `splitter ${n.Name}, ${plural(splits.length, "split")}: ${splits.map((s) => weightText(s.Weight)).join(", ")}` });
      for (const s of splits) if (nodes[s.NextNode]) edges.push({ from: key, to: s.NextNode, label: weightText(s.Weight), kind: "split" });
    } else {
      const r = n.Resolver;
      const primary = r ? targets[r.Target] : undefined;
      const failovers = r?.Failover?.Targets ?? [];
      const names = failovers.map((id) => failoverName(primary, targets[id], id));
      const detail = names.length > 0 ? `failover: ${names.join(", ")}` : r?.Default ? "default resolver" : `timeout ${r?.ConnectTimeout ?? ""}`;
      out.push({ id: key, kind: "resolver", name: n.Name, detail, description: `resolver ${n.Name}${names.length > 0 ? `, failover to ${names.join(" then ")}` : ", no failover"}` });
      if (r && targets[r.Target]) {
        addTarget(r.Target);
        edges.push({ from: key, to: targetNodeId(r.Target), label: "primary", kind: "primary" });
      }
      failovers.forEach((id, i) => {
        if (!targets[id]) return;
        addTarget(id);
        edges.push({ from: key, to: targetNodeId(id), label: `failover ${i + 1}`, kind: "failover" });
      });
    }
  }
  for (const id of Object.keys(targets).sort()) addTarget(id);
  for (const id of targetOrder) {
    const t = targets[id];
    out.push({ id: targetNodeId(id), kind: "target", name: id, detail: targetDetail(t), description: `target ${id}: service ${t?.Service ?? id}${t?.ServiceSubset ? `, subset ${t.ServiceSubset}` : ""}, in ${t?.Datacenter ?? "?"}` });
  }
  return { nodes: out, edges };
}

/** Whether `chain` is the one Consul compiles with no config entries: a single default resolver. */
export function isDefaultChain(chain: CompiledDiscoveryChain): boolean {
  const all = Object.values(chain.Nodes ?? {});
  return all.length === 1 && all[0]!.Type === "resolver" && all[0]!.Resolver?.Default === true;
}
