/**
 * The readonly snapshot a mesh gateway's xDS resources are built from: Consul 1.8's proxycfg.ConfigSnapshot
 * for Kind "mesh-gateway" (agent/proxycfg/snapshot.go configSnapshotMeshGateway), without watch handles.
 * Field names follow Consul's Go names. Maps are keyed by service name or datacenter; a missing key means
 * "nothing there (yet)", and the resource builders skip it, as Consul does.
 */
import type { CheckServiceNode, ServiceResolverConfigEntry } from "../model/index.ts";
import type { SidecarSnapshot } from "./snapshot.ts";

/** Per-gateway state (configSnapshotMeshGateway). */
export interface MeshGatewaySnapshotState {
  /** The local datacenter's catalog services, sorted: the services whose Connect instances the gateway watches. */
  readonly WatchedServices: readonly string[];
  /**
   * Local instances per watched service (`/v1/health/connect/:service`), every one of them, passing or
   * not (health goes to Envoy as endpoint status). Only services with at least one instance are present:
   * a service without instances gets no cluster (Consul PR #7294).
   */
  readonly ServiceGroups: Readonly<Record<string, readonly CheckServiceNode[]>>;
  /** The service-resolver config entries of the local datacenter, by service name (subsets, timeouts). */
  readonly ServiceResolvers: Readonly<Record<string, ServiceResolverConfigEntry>>;
  /**
   * The mesh gateways of every other datacenter, from that datacenter's catalog: datacenter -> gateway
   * instances (only datacenters with at least one gateway).
   */
  readonly GatewayGroups: Readonly<Record<string, readonly CheckServiceNode[]>>;
  /**
   * Gateways per datacenter from the replicated federation states (the local datacenter's own included),
   * watched only by a WAN federation gateway (Meta `consul-wan-federation` = "1"); empty otherwise. A
   * datacenter's gateways come from GatewayGroups when it has them there and from here otherwise (Consul
   * 1.8; the fresher-of-the-two rule of Consul #11522 is later).
   */
  readonly FedStateGateways: Readonly<Record<string, readonly CheckServiceNode[]>>;
  /**
   * The local datacenter's servers (every instance of service "consul", whatever its health, in the
   * catalog's order), watched only by a WAN federation gateway; such a snapshot is valid only with at
   * least one. Empty for any other gateway.
   */
  readonly ConsulServers: readonly CheckServiceNode[];
}

/**
 * A mesh gateway's configuration snapshot (proxycfg.ConfigSnapshot, Kind "mesh-gateway"). The fields it
 * shares with a sidecar's mean the same for the gateway service: ProxyID and Service its ID (Envoy's
 * node.id) and name; Address ("" = bind 0.0.0.0) and Port the `default` listener's; TaggedAddresses its
 * `lan`/`wan` addresses (listeners when `envoy_gateway_bind_tagged_addresses`); Proxy.Config its options
 * (bind addresses, timeouts, DNS discovery type); Datacenter the agent's; Roots the CA roots with the
 * trust domain that cluster names carry; ServiceMeta the gateway's meta, where `consul-wan-federation` =
 * "1" (`-expose-servers`) makes it route to servers for WAN federation.
 */
export interface MeshGatewaySnapshot
  extends Pick<SidecarSnapshot, "ProxyID" | "Service" | "Address" | "Port" | "ServiceMeta" | "TaggedAddresses" | "Proxy" | "Datacenter" | "Roots"> {
  readonly Kind: "mesh-gateway";
  /**
   * The agent's DNS domain (`domain`, default "consul") without a trailing dot, which server names carry:
   * `server.<dc>.<domain>` and `<node>.server.<dc>.<domain>` (Consul's ServerSNIFn, tlsutil ServerSNI).
   */
  readonly Domain: string;
  readonly MeshGateway: MeshGatewaySnapshotState;
}
