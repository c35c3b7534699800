/**
 * The readonly snapshot of everything a connect-proxy sidecar's xDS resources are built from: Consul 1.8's
 * proxycfg.ConfigSnapshot for Kind "connect-proxy" (agent/proxycfg/snapshot.go), plus the intentions and
 * default decision that Consul 1.9 added to it for RBAC. Field names follow Consul's Go names.
 *
 * The proxycfg state machine produces a snapshot only when it is valid (CA roots and the leaf are present),
 * so those fields are not optional here. Maps are keyed by upstream identifier (`upstreamIdentifier`),
 * then by discovery target ID or datacenter; a missing key means "not fetched yet", which the resource
 * builders treat as Consul does (the cluster's endpoints are skipped until populated). Snapshots are
 * values: no watch handles or cancellers live inside.
 */
import type { CompiledDiscoveryChain, IssuedCert } from "../connect/index.ts";
import type {
  CheckServiceNode,
  ConnectProxyConfig,
  ExposePath,
  IndexedCARoots,
  Intention,
  ServiceAddress,
  Upstream,
} from "../model/index.ts";

/** Per-upstream state of a connect proxy (Consul's configSnapshotConnectProxy, without the watch handles). */
export interface ConnectProxySnapshot {
  /** The proxy's leaf certificate for its destination service. */
  readonly Leaf: IssuedCert;
  /**
   * Intentions whose destination matches the proxy's destination service (exact or wildcard), sorted by
   * precedence, highest first (the order `/v1/connect/intentions/match` returns).
   */
  readonly Intentions: readonly Intention[];
  /** The decision when no intention matches: true when the ACL default policy allows (or ACLs are off). */
  readonly IntentionDefaultAllow: boolean;
  /** The compiled discovery chain of every non-prepared-query upstream, keyed by upstream identifier. */
  readonly DiscoveryChain: Readonly<Record<string, CompiledDiscoveryChain>>;
  /**
   * Health of every target the upstream's chain names: upstream identifier -> target ID -> the connect
   * instances (`/v1/health/connect/:service` with the target's subset filter applied), all of them, passing
   * or not: health is carried to Envoy as endpoint status, never filtered.
   */
  readonly WatchedUpstreamEndpoints: Readonly<Record<string, Readonly<Record<string, readonly CheckServiceNode[]>>>>;
  /**
   * Mesh gateways an upstream's targets are reached through: upstream identifier -> datacenter -> gateway
   * instances (the local datacenter's for mode "local", the target datacenter's for mode "remote").
   */
  readonly WatchedGatewayEndpoints: Readonly<Record<string, Readonly<Record<string, readonly CheckServiceNode[]>>>>;
  /** Results of prepared-query upstreams, keyed by upstream identifier (`prepared_query:<name>`). */
  readonly PreparedQueryEndpoints: Readonly<Record<string, readonly CheckServiceNode[]>>;
  /**
   * Paths derived from the destination service's HTTP and gRPC checks when `Proxy.Expose.Checks` is set
   * (each with ParsedFromCheck true), as the local agent allocated their listener ports and runs the checks
   * through them (LocalAgent.exposedCheckPaths; Consul reads them from the agent at generation time).
   */
  readonly ExposedCheckPaths: readonly ExposePath[];
}

/** A connect-proxy's configuration snapshot (proxycfg.ConfigSnapshot). */
export interface SidecarSnapshot {
  readonly Kind: "connect-proxy";
  /** The proxy service's ID (Envoy's node.id). */
  readonly ProxyID: string;
  /** The proxy service's name. */
  readonly Service: string;
  /** The proxy service's address ("" = bind 0.0.0.0) and port (the public listener's). */
  readonly Address: string;
  readonly Port: number;
  readonly ServiceMeta: Readonly<Record<string, string>>;
  readonly TaggedAddresses: Readonly<Record<string, ServiceAddress>>;
  /** The registration's Proxy block: destination, local app address/port, upstreams, opaque Config, expose. */
  readonly Proxy: ConnectProxyConfig;
  /** The agent's datacenter. */
  readonly Datacenter: string;
  /** The agent's LAN advertise address: exposed check paths accept it besides loopback. */
  readonly AdvertiseAddrLAN: string;
  /** CA roots with the trust domain; every root's certificate is trusted. */
  readonly Roots: IndexedCARoots;
  readonly ConnectProxy: ConnectProxySnapshot;
}

/**
 * Consul's Upstream.Identifier(): the upstream's name, `<ns>/<name>` for a non-default namespace,
 * `?dc=<dc>` when a datacenter is given, and `prepared_query:` before a prepared query's.
 */
export function upstreamIdentifier(u: Upstream): string {
  const type = u.DestinationType ?? "";
  let name = u.DestinationName;
  if (type !== "prepared_query" && u.DestinationNamespace && u.DestinationNamespace !== "default") {
    name = `${u.DestinationNamespace}/${name}`;
  }
  if (u.Datacenter) name += `?dc=${u.Datacenter}`;
  return type === "" || type === "service" ? name : `${type}:${name}`;
}

/** The datacenter an upstream resolves in: its own, or the proxy's. */
export function upstreamDatacenter(u: Upstream, localDatacenter: string): string {
  return u.Datacenter || localDatacenter;
}
