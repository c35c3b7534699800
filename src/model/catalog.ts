/**
 * Catalog types in Consul's wire shape (agent/structs/structs.go, v1.8): field names are the Go field
 * names, so a value serialises to exactly the JSON Consul clients expect. The state store keeps these
 * values as they are (readonly), stamped with the Raft index that wrote them.
 */

/** Raft indexes every stored object carries: the write that created it and the last one that changed it. */
export interface RaftIndex {
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/** A catalog node. `ID` is the node's UUID ("" for external nodes registered without one). */
export interface Node extends RaftIndex {
  readonly ID: string;
  readonly Node: string;
  readonly Address: string;
  readonly Datacenter: string;
  readonly TaggedAddresses: Readonly<Record<string, string>>;
  readonly Meta: Readonly<Record<string, string>>;
}

/** Service kinds; "" is a typical service. */
export type ServiceKind = "" | "connect-proxy" | "mesh-gateway" | "terminating-gateway" | "ingress-gateway";

export interface ServiceAddress {
  readonly Address: string;
  readonly Port: number;
}

/** DNS SRV weights; Consul's default when unset is `{Passing: 1, Warning: 1}`. */
export interface Weights {
  readonly Passing: number;
  readonly Warning: number;
}

/** "" is the default (no opinion); Consul also accepts "default" on input and stores "". */
export type MeshGatewayMode = "" | "none" | "local" | "remote";

/** structs.MeshGatewayConfig: shared by proxy registrations and config entries. */
export interface MeshGatewayConfig {
  /** "" (default), "none", "local" or "remote"; serialised as `{}` when default. */
  readonly Mode?: MeshGatewayMode;
}

export interface Upstream {
  readonly DestinationType?: "service" | "prepared_query";
  readonly DestinationNamespace?: string;
  readonly DestinationName: string;
  readonly Datacenter?: string;
  readonly LocalBindAddress?: string;
  readonly LocalBindPort: number;
  readonly Config?: Readonly<Record<string, unknown>>;
  readonly MeshGateway?: MeshGatewayConfig;
}

export interface ExposePath {
  readonly ListenerPort?: number;
  readonly Path?: string;
  readonly LocalPathPort?: number;
  readonly Protocol?: string;
  readonly ParsedFromCheck?: boolean;
}

export interface ExposeConfig {
  readonly Checks?: boolean;
  readonly Paths?: readonly ExposePath[];
}

/** A connect proxy's configuration (services of kind connect-proxy and gateways). */
export interface ConnectProxyConfig {
  readonly DestinationServiceName?: string;
  readonly DestinationServiceID?: string;
  readonly LocalServiceAddress?: string;
  readonly LocalServicePort?: number;
  readonly Config?: Readonly<Record<string, unknown>>;
  readonly Upstreams?: readonly Upstream[];
  readonly MeshGateway: MeshGatewayConfig;
  readonly Expose: ExposeConfig;
}

export interface ServiceConnect {
  readonly Native?: boolean;
}

/** A service instance on a node, as the catalog stores it. */
export interface NodeService extends RaftIndex {
  readonly Kind?: ServiceKind;
  readonly ID: string;
  readonly Service: string;
  readonly Tags: readonly string[] | null;
  readonly Address: string;
  readonly TaggedAddresses?: Readonly<Record<string, ServiceAddress>>;
  readonly Meta: Readonly<Record<string, string>> | null;
  readonly Port: number;
  readonly Weights: Weights;
  readonly EnableTagOverride: boolean;
  readonly Proxy: ConnectProxyConfig;
  readonly Connect: ServiceConnect;
}

export type HealthStatus = "passing" | "warning" | "critical";

/** How a check is run, as registered (durations as Go duration strings). */
export interface HealthCheckDefinition {
  readonly HTTP?: string;
  readonly TLSSkipVerify?: boolean;
  readonly Header?: Readonly<Record<string, readonly string[]>>;
  readonly Method?: string;
  readonly Body?: string;
  readonly TCP?: string;
  readonly Interval?: string;
  readonly Timeout?: string;
  readonly DeregisterCriticalServiceAfter?: string;
  readonly ScriptArgs?: readonly string[];
  readonly DockerContainerID?: string;
  readonly Shell?: string;
  readonly GRPC?: string;
  readonly GRPCUseTLS?: boolean;
  readonly AliasNode?: string;
  readonly AliasService?: string;
}

export interface HealthCheck extends RaftIndex {
  readonly Node: string;
  readonly CheckID: string;
  readonly Name: string;
  readonly Status: HealthStatus;
  readonly Notes: string;
  readonly Output: string;
  /** "" for a node-level check. */
  readonly ServiceID: string;
  readonly ServiceName: string;
  readonly ServiceTags: readonly string[] | null;
  /** "ttl", "http", "tcp", "serf", "" ... */
  readonly Type: string;
  readonly Definition: HealthCheckDefinition;
}

/** One instance with its node and checks: `/v1/health/service/:service` and the discovery chain's input. */
/** Consul's NodeInfo (/v1/internal/ui/nodes): a node (without its Raft indexes) with its services and every check on it. */
export type NodeInfo = Omit<Node, "CreateIndex" | "ModifyIndex"> & {
  readonly Services: readonly NodeService[];
  readonly Checks: readonly HealthCheck[];
};

/** Consul's ServiceSummary (/v1/internal/ui/services, 1.8): one service across its instances. Kind is absent for typical services. */
export interface ServiceSummary {
  readonly Kind?: ServiceKind;
  readonly Name: string;
  readonly Tags: readonly string[];
  readonly Nodes: readonly string[];
  readonly InstanceCount: number;
  readonly ChecksPassing: number;
  readonly ChecksWarning: number;
  readonly ChecksCritical: number;
  /** The distinct `external-source` meta values of its instances (k8s, nomad...). */
  readonly ExternalSources: readonly string[];
}

export interface CheckServiceNode {
  readonly Node: Node;
  readonly Service: NodeService;
  readonly Checks: readonly HealthCheck[];
}

/** The flattened shape of `/v1/catalog/service/:service`. */
export interface ServiceNode extends RaftIndex {
  readonly ID: string;
  readonly Node: string;
  readonly Address: string;
  readonly Datacenter: string;
  readonly TaggedAddresses: Readonly<Record<string, string>>;
  readonly NodeMeta: Readonly<Record<string, string>>;
  readonly ServiceKind: ServiceKind;
  readonly ServiceID: string;
  readonly ServiceName: string;
  readonly ServiceTags: readonly string[] | null;
  readonly ServiceAddress: string;
  readonly ServiceTaggedAddresses?: Readonly<Record<string, ServiceAddress>>;
  readonly ServiceWeights: Weights;
  readonly ServiceMeta: Readonly<Record<string, string>> | null;
  readonly ServicePort: number;
  readonly ServiceEnableTagOverride: boolean;
  readonly ServiceProxy: ConnectProxyConfig;
  readonly ServiceConnect: ServiceConnect;
}

/** The check every gossip member carries in the catalog (Consul's `structs.SerfCheckID`). */
export const SERF_CHECK_ID = "serfHealth";
export const SERF_CHECK_NAME = "Serf Health Status";
/** The service every server registers (Consul's `structs.ConsulServiceID`). */
export const CONSUL_SERVICE = "consul";

/** `/v1/catalog/node/:node`: the node and its services keyed by service ID. */
export interface NodeServices {
  readonly Node: Node;
  readonly Services: Readonly<Record<string, NodeService>>;
}

/** `/v1/catalog/services`: service name -> its distinct tags. */
export type ServiceTagsMap = Readonly<Record<string, readonly string[]>>;

/** A check-state filter: a status or "any" (Consul's api.HealthAny). */
export type HealthStateFilter = HealthStatus | "any";
