/**
 * What a service's failover page says, computed purely from the compiled discovery chain, each
 * target's instances (read in the target's datacenter) and the datacenters' mesh gateways: for each
 * resolver of the chain, its primary target then its failover targets in order, how many of each
 * target's instances are healthy, the mesh-gateway mode, and which target serves right now.
 *
 * A target serves when it is the first, in that order, with a healthy instance: Envoy's priority
 * failover as Consul configures it (an instance is healthy when no check is critical, or, for a subset
 * with OnlyPassing, when every check passes). Traffic to a target in another datacenter goes through
 * a mesh gateway: with mode "local" through one of the local datacenter's, with "remote" through one
 * of the target datacenter's; with "none" (or no mode) it goes to the instances directly.
 */
import type { CompiledDiscoveryChain, DiscoveryTarget } from "../connect/index.ts";
import type { CheckServiceNode } from "../model/index.ts";

export interface TargetHealth {
  readonly healthy: number;
  readonly total: number;
}

export type TargetRead = { readonly ok: true; readonly instances: readonly CheckServiceNode[] } | { readonly ok: false; readonly error: string };

export interface GatewayView {
  readonly id: string;
  readonly node: string;
  readonly datacenter: string;
  readonly healthy: boolean;
}

export interface TargetView {
  readonly id: string;
  readonly service: string;
  readonly subset: string;
  readonly datacenter: string;
  /** 0 for the primary target, n for the n-th failover target. */
  readonly order: number;
  /** undefined when its instances could not be read (then `error`). */
  readonly health: TargetHealth | undefined;
  readonly error: string | undefined;
  readonly mode: string;
  /** How traffic reaches it from the chain's datacenter. */
  readonly path: RoutePath;
}

export type RoutePath =
  | { readonly kind: "local-dc" }
  | { readonly kind: "direct" }
  | { readonly kind: "gateway"; readonly via: string; readonly gateways: readonly GatewayView[] };

export interface ResolverView {
  /** The resolver's chain node name, e.g. "web.default.dc1". */
  readonly name: string;
  readonly targets: readonly TargetView[];
  /** The index in `targets` of the one serving, or -1 when none has a healthy instance. */
  readonly serving: number;
}

export interface FailoverView {
  readonly service: string;
  readonly datacenter: string;
  readonly resolvers: readonly ResolverView[];
}

export function instanceHealthy(x: CheckServiceNode, onlyPassing: boolean): boolean {
  return x.Checks.every((c) => c.Status === "passing" || (!onlyPassing && c.Status === "warning"));
}

/** The target IDs of every resolver of `chain`, each resolver's primary first, in node-key order. */
export function resolverTargets(chain: CompiledDiscoveryChain): { readonly name: string; readonly targets: readonly string[] }[] {
  return Object.keys(chain.Nodes).sort().flatMap((key) => {
    const node = chain.Nodes[key]!;
    if (node.Type !== "resolver" || !node.Resolver) return [];
    return [{ name: node.Name, targets: [node.Resolver.Target, ...(node.Resolver.Failover?.Targets ?? [])] }];
  });
}

/** Every target ID the chain's resolvers name, once each. */
export function chainTargetIds(chain: CompiledDiscoveryChain): string[] {
  return [...new Set(resolverTargets(chain).flatMap((r) => r.targets))];
}

function routePath(target: DiscoveryTarget, localDc: string, gateways: Readonly<Record<string, readonly GatewayView[]>>): RoutePath {
  if (target.Datacenter === localDc) return { kind: "local-dc" };
  const mode = target.MeshGateway?.Mode ?? "";
  if (mode === "local") return { kind: "gateway", via: localDc, gateways: gateways[localDc] ?? [] };
  if (mode === "remote") return { kind: "gateway", via: target.Datacenter, gateways: gateways[target.Datacenter] ?? [] };
  return { kind: "direct" };
}

export function failoverView(o: {
  readonly chain: CompiledDiscoveryChain;
  /** By target ID. */
  readonly reads: Readonly<Record<string, TargetRead>>;
  /** Each datacenter's mesh gateways. */
  readonly gateways: Readonly<Record<string, readonly GatewayView[]>>;
}): FailoverView {
  const { chain } = o;
  const resolvers = resolverTargets(chain).map(({ name, targets: ids }) => {
    const targets = ids.map((id, order): TargetView => {
      const t = chain.Targets[id];
      const read = o.reads[id];
      const onlyPassing = t?.Subset?.OnlyPassing === true;
      return {
        id, order,
        service: t?.Service ?? id, subset: t?.ServiceSubset ?? "", datacenter: t?.Datacenter ?? "",
        health: read?.ok ? { healthy: read.instances.filter((x) => instanceHealthy(x, onlyPassing)).length, total: read.instances.length } : undefined,
        error: read && !read.ok ? read.error : read ? undefined : "not read",
        mode: t?.MeshGateway?.Mode || "default",
        path: t ? routePath(t, chain.Datacenter, o.gateways) : { kind: "direct" },
      };
    });
    return { name, targets, serving: targets.findIndex((t) => (t.health?.healthy ?? 0) > 0) };
  });
  return { service: chain.ServiceName, datacenter: chain.Datacenter, resolvers };
}

/** "primary", "failover 1", ... */
export function orderName(order: number): string {
  return order === 0 ? "primary" : `failover ${order}`;
}

/** The gateway a person should look at on a path: the first healthy one, else the first. */
export function chosenGateway(path: RoutePath): GatewayView | undefined {
  return path.kind === "gateway" ? path.gateways.find((g) => g.healthy) ?? path.gateways[0] : undefined;
}

/** One sentence: where requests to the resolver go right now. */
export function servingSentence(r: ResolverView, localDc: string): string {
  if (r.targets.length === 0) return `${r.name} has no targets.`;
  if (r.serving < 0) return `No target of ${r.name} has a healthy instance: requests to it fail.`;
  const t = r.targets[r.serving]!;
  const what = `${t.subset ? `${t.subset} of ` : ""}${t.service}`;
  const where = t.datacenter === localDc && r.serving === 0 ? `Serving ${what} from ${t.datacenter} (primary)` : `Serving ${what} from ${t.datacenter} (${orderName(t.order)})`;
  if (t.path.kind === "gateway") {
    const gw = chosenGateway(t.path);
    if (!gw) return `${where}, but ${t.path.via} has no mesh gateway for mode ${t.mode}.`;
    return `${where} via mesh gateway ${gw.id} in ${gw.datacenter}${gw.healthy ? "" : " (unhealthy)"}.`;
  }
  if (t.path.kind === "direct" && t.datacenter !== localDc) return `${where}, directly (no mesh gateway).`;
  return `${where}.`;
}

/** Gateway views of each datacenter's mesh-gateway instances (healthy: no critical check). */
export function gatewaysByDatacenter(byDc: Readonly<Record<string, readonly CheckServiceNode[]>>): Record<string, GatewayView[]> {
  const out: Record<string, GatewayView[]> = {};
  for (const [dc, list] of Object.entries(byDc)) {
    out[dc] = list.map((x) => ({ id: x.Service.ID, node: x.Node.Node, datacenter: dc, healthy: x.Checks.every((c) => c.Status !== "critical") }));
  }
  return out;
}
