/**
 * Running a resolved prepared query over a datacenter's health results (Consul 1.8
 * agent/consul/prepared_query_endpoint.go: execute, tagFilter, nodeMetaFilter, serviceMetaFilter,
 * CheckServiceNodes.FilterIgnore and Shuffle, and the ordering steps of Execute and ExecuteRemote).
 * Pure: randomness and network distances are parameters.
 */
import type { CheckServiceNode, PreparedQuery, PreparedQueryExecuteResult, QuerySource, ServiceQuery } from "../../model/index.ts";

/**
 * FilterIgnore, then the NodeMeta, ServiceMeta and tag filters. An instance goes when any check not in
 * IgnoreCheckIDs is critical (or, with OnlyPassing, not passing); tags match case-insensitively, "!tag"
 * excludes; metadata must match exactly. The order of the survivors is kept (Consul's swap-removal order
 * is not observable: the result is shuffled next).
 */
export function filterServiceNodes(s: ServiceQuery, nodes: readonly CheckServiceNode[]): CheckServiceNode[] {
  const ignore = new Set(s.IgnoreCheckIDs ?? []);
  const must: string[] = [], not: string[] = [];
  for (const raw of s.Tags ?? []) {
    const t = raw.toLowerCase();
    if (t.startsWith("!")) not.push(t.slice(1));
    else must.push(t);
  }
  const metaOk = (have: Readonly<Record<string, string>> | null | undefined, want: Readonly<Record<string, string>> | null) =>
    Object.entries(want ?? {}).every(([k, v]) => have != null && Object.hasOwn(have, k) && have[k] === v);
  return nodes.filter((n) => {
    const unhealthy = n.Checks.some((c) => !ignore.has(c.CheckID) && (c.Status === "critical" || (s.OnlyPassing && c.Status !== "passing")));
    if (unhealthy) return false;
    if (!metaOk(n.Node.Meta, s.NodeMeta) || !metaOk(n.Service.Meta, s.ServiceMeta)) return false;
    const tags = new Set((n.Service.Tags ?? []).map((t) => t.toLowerCase()));
    return must.every((t) => tags.has(t)) && !not.some((t) => tags.has(t));
  });
}

/** Consul's execute(): the query's filtered instances as a result of `datacenter` (no failover, no ordering). */
export function executeQuery(query: PreparedQuery, instances: readonly CheckServiceNode[], datacenter: string): PreparedQueryExecuteResult {
  return { Service: query.Service.Service, Nodes: filterServiceNodes(query.Service, instances), DNS: query.DNS, Datacenter: datacenter, Failovers: 0 };
}

/** CheckServiceNodes.Shuffle: Fisher-Yates from the end with `random` in [0, 1). Returns a new array. */
export function shuffleNodes<T>(xs: readonly T[], random: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * The node an Execute sorts near (its QuerySource): the client's `?near=` (already "_agent"-resolved by
 * the agent) over the query's Near; "_agent" is the asking agent's node; "_ip" is the node whose address
 * is the request's source IP (`nodeByAddress`), or none. The datacenter defaults to the agent's.
 */
export function nearSource(query: PreparedQuery, source: QuerySource, agent: QuerySource, nodeByAddress: (ip: string) => string | undefined): QuerySource {
  let node = source.Node;
  if (query.Service.Near !== "" && node === "") node = query.Service.Near;
  if (node === "_agent") node = agent.Node;
  else if (node === "_ip") node = (source.Ip !== "" ? nodeByAddress(source.Ip) : undefined) ?? "";
  return { ...source, Datacenter: source.Datacenter || agent.Datacenter, Node: node };
}

/**
 * Execute's ordering of a local result: shuffle (when `random` is given); sort by round-trip time from the source node when
 * `rttFrom` knows the source's coordinate and the source is in this datacenter (stable; nodes without a
 * coordinate last); move the source node itself to the front when it is among the first ten; then cut
 * to `limit` (0: no limit).
 */
export function orderLocalResult(
  r: PreparedQueryExecuteResult,
  o: {
    readonly source: QuerySource;
    readonly limit: number;
    /** A number in [0, 1) for the shuffle; undefined: no shuffle (the order given is kept). */
    readonly random: (() => number) | undefined;
    /** Distances from `node` to others in ms, or undefined when `node` has no coordinate. */
    readonly rttFrom?: (node: string) => ((other: string) => number | undefined) | undefined;
  },
): PreparedQueryExecuteResult {
  let nodes = o.random ? shuffleNodes(r.Nodes, o.random) : [...r.Nodes];
  const qs = o.source;
  const rtt = qs.Datacenter === r.Datacenter && qs.Node !== "" ? o.rttFrom?.(qs.Node) : undefined;
  if (rtt) {
    const d = (n: CheckServiceNode) => rtt(n.Node.Node) ?? Number.MAX_VALUE;
    nodes = nodes.map((n, i) => ({ n, i, d: d(n) })).sort((a, b) => a.d - b.d || a.i - b.i).map((x) => x.n);
  }
  if (qs.Node !== "" && r.Datacenter === qs.Datacenter) {
    const i = nodes.slice(0, 10).findIndex((n) => n.Node.Node === qs.Node);
    if (i > 0) [nodes[0], nodes[i]] = [nodes[i]!, nodes[0]!];
  }
  return { ...r, Nodes: limited(nodes, o.limit) };
}

/** ExecuteRemote's ordering: shuffle, then cut to `limit`. */
export function orderRemoteResult(r: PreparedQueryExecuteResult, o: { readonly limit: number; readonly random: (() => number) | undefined }): PreparedQueryExecuteResult {
  return { ...r, Nodes: limited(o.random ? shuffleNodes(r.Nodes, o.random) : [...r.Nodes], o.limit) };
}

const limited = <T>(xs: T[], limit: number): T[] => (limit > 0 && xs.length > limit ? xs.slice(0, limit) : xs);
