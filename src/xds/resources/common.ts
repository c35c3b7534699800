/**
 * Small shared pieces of the sidecar resource builders: Envoy names and type URLs, Any packing, addresses,
 * durations, and the discovery-chain predicates Consul's agent/xds uses (CustomizeClusterName,
 * CompiledDiscoveryChain.IsDefault, WillFailoverThroughMeshGateway).
 */
import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { anyPack, type Any, type Duration } from "@bufbuild/protobuf/wkt";
import { AddressSchema, type Address } from "../../gen/envoy/config/core/v3/address_pb.ts";
import type { CompiledDiscoveryChain, DiscoveryGraphNode } from "../../connect/index.ts";
import { parseDuration, parseIp } from "../../lib/index.ts";

/** Thrown when a snapshot cannot be turned into resources (bad escape-hatch JSON, a chain missing its start). */
export class ResourceGenerationError extends Error {
  override readonly name = "ResourceGenerationError";
}

/** Consul's fixed names (agent/xds/server.go). */
export const LOCAL_APP_CLUSTER = "local_app";
export const PUBLIC_LISTENER = "public_listener";

/** Packs `msg` (built from `init`) into an Any. */
export function pack<D extends DescMessage>(schema: D, init: Parameters<typeof create<D>>[1]): Any {
  return anyPack(schema, create(schema, init) as MessageShape<D>);
}

/** A socket address. */
export function socketAddress(address: string, port: number): Address {
  return create(AddressSchema, { address: { case: "socketAddress", value: { address, portSpecifier: { case: "portValue", value: port } } } });
}

/** Milliseconds as a protobuf Duration (init form). */
export function durationMs(ms: number): Duration {
  const whole = Math.floor(ms / 1000);
  return { $typeName: "google.protobuf.Duration", seconds: BigInt(whole), nanos: Math.round((ms - whole * 1000) * 1e6) };
}

/** A Go duration string ("5s", "1m30s") as a protobuf Duration. */
export function goDuration(text: string): Duration {
  return durationMs(parseDuration(text));
}

/** `CustomizeClusterName`: `<hash>~<name>` when overrides customized the chain, else `name`. */
export function customizeClusterName(name: string, chain: CompiledDiscoveryChain | undefined): string {
  return chain?.CustomizationHash ? `${chain.CustomizationHash}~${name}` : name;
}

/** `CompiledDiscoveryChain.IsDefault`: the chain starts at an untouched resolver for its own service. */
export function isDefaultChain(chain: CompiledDiscoveryChain): boolean {
  if (chain.StartNode === "" || Object.keys(chain.Nodes).length === 0) return true;
  const node = chain.Nodes[chain.StartNode];
  if (node?.Type !== "resolver" || !node.Resolver) return false;
  return node.Resolver.Default && chain.Targets[node.Resolver.Target]?.Service === chain.ServiceName;
}

/** `WillFailoverThroughMeshGateway`: a resolver whose failover has any target reached through a gateway. */
export function willFailoverThroughMeshGateway(chain: CompiledDiscoveryChain, node: DiscoveryGraphNode): boolean {
  const targets = node.Resolver?.Failover?.Targets ?? [];
  return targets.some((id) => {
    const mode = chain.Targets[id]?.MeshGateway.Mode;
    return mode === "local" || mode === "remote";
  });
}

/** Resolver nodes of a chain in sorted key order (Nodes is built sorted; sorted again to be sure). */
export function resolverNodes(chain: CompiledDiscoveryChain): DiscoveryGraphNode[] {
  return Object.keys(chain.Nodes)
    .sort()
    .map((k) => chain.Nodes[k]!)
    .filter((n) => n.Type === "resolver" && n.Resolver !== undefined);
}

/** `makeStatPrefix`: `<prefix><filterName with ':' as '_'>_<protocol>`. */
export function statPrefix(protocol: string, prefix: string, filterName: string): string {
  return `${prefix}${filterName.replaceAll(":", "_")}_${protocol}`;
}

/** Sorts by name, the order resources are returned in (stable versions and diffable goldens). */
export function byName<T>(items: T[], name: (t: T) => string): T[] {
  return items.sort((a, b) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
}

/** Whether `address` is an IPv4 or IPv6 literal (not a host name). */
export function isIpLiteral(address: string): boolean {
  try {
    parseIp(address);
    return true;
  } catch {
    return false;
  }
}
