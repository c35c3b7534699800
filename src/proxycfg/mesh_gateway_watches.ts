/**
 * What a mesh gateway's state machine watches and hears (Consul 1.8 agent/proxycfg/state.go
 * initWatchesMeshGateway and handleUpdateMeshGateway): typed requests under Consul's correlation IDs,
 * their values, and the registration of the gateway service. Pure data.
 */
import { WAN_FEDERATION_META_KEY } from "../federation/index.ts";
import type { CheckServiceNode, ConfigEntry, IndexedCARoots } from "../model/index.ts";
import type { Command } from "./reconcile.ts";
import type { MeshGatewaySnapshot } from "./mesh_gateway_snapshot.ts";

/** The gateway service as registered in the agent (Kind "mesh-gateway"), before central config. */
export type MeshGatewayRegistration = Pick<MeshGatewaySnapshot, "ProxyID" | "Service" | "Address" | "Port" | "TaggedAddresses" | "Proxy"> & {
  readonly Meta: Readonly<Record<string, string>>;
};

/** One thing a gateway watches; every read is of the gateway's own datacenter unless it names one. */
export type MeshGatewayWatchRequest =
  | { readonly kind: "roots" }
  /** proxy-defaults "global" and the gateway's service-defaults (their Config reaches Proxy.Config). */
  | { readonly kind: "config-entry"; readonly entryKind: "proxy-defaults" | "service-defaults"; readonly name: string }
  /** The service names of the local catalog (Catalog.ListServices). */
  | { readonly kind: "service-list" }
  /** The known datacenters. */
  | { readonly kind: "datacenters" }
  /** Every service-resolver config entry of the local datacenter. */
  | { readonly kind: "service-resolvers" }
  /** The Connect-capable instances (sidecars, native) of a local service, every health state. */
  | { readonly kind: "connect-service"; readonly service: string }
  /** The mesh gateways of another datacenter, from its catalog (Internal.ServiceDump by kind). */
  | { readonly kind: "mesh-gateways"; readonly datacenter: string }
  /** WAN federation only: the gateways of every datacenter from the replicated federation states (FederationState.ListMeshGateways). */
  | { readonly kind: "federation-gateways" }
  /** WAN federation only: the local datacenter's servers, every instance of service "consul" whatever its health (Health.ServiceNodes). */
  | { readonly kind: "consul-servers" };

export interface MeshGatewayWatchValues {
  readonly roots: IndexedCARoots;
  readonly "config-entry": ConfigEntry | null;
  readonly "service-list": readonly string[];
  readonly datacenters: readonly string[];
  readonly "service-resolvers": readonly ConfigEntry[];
  readonly "connect-service": readonly CheckServiceNode[];
  readonly "mesh-gateways": readonly CheckServiceNode[];
  /** Datacenter -> its gateways, as the federation states list them (the local datacenter's own included). */
  readonly "federation-gateways": Readonly<Record<string, readonly CheckServiceNode[]>>;
  readonly "consul-servers": readonly CheckServiceNode[];
}

export type MeshGatewayWatchKind = keyof MeshGatewayWatchValues;

/** A new value for watch `watchId`. */
export type MeshGatewayUpdate = {
  readonly [K in MeshGatewayWatchKind]: { readonly kind: K; readonly watchId: string; readonly value: MeshGatewayWatchValues[K] };
}[MeshGatewayWatchKind];

/** What the machine hears: a watch's value, or a changed registration of the same gateway ID. */
export type MeshGatewayEvent = MeshGatewayUpdate | { readonly kind: "registration"; readonly registration: MeshGatewayRegistration };

export type MeshGatewayCommand = Command<MeshGatewayWatchRequest>;

/**
 * Consul's correlation IDs (rootsWatchID, serviceListWatchID, datacentersWatchID,
 * federationStateListGatewaysWatchID, consulServerListWatchID, ...).
 */
export const meshGatewayWatchIds = {
  roots: "roots",
  configEntry: (kind: string, name: string) => `config-entry:${kind}:${name}`,
  serviceList: "service-list",
  datacenters: "datacenters",
  serviceResolvers: "service-resolvers",
  connectService: (service: string) => `connect-service:${service}`,
  meshGateway: (dc: string) => `mesh-gateway:${dc}`,
  federationGateways: "federation-state-list-mesh-gateways",
  consulServers: "consul-server-list",
} as const;

/**
 * Whether a gateway registered with this service meta carries WAN federation traffic: Meta
 * `consul-wan-federation` = "1" (Consul's `structs.MetaWANFederationKey`, set by `-expose-servers`).
 * Only such a gateway watches the federation states and the local servers, and routes to servers.
 */
export function exposesServers(meta: Readonly<Record<string, string>> | null | undefined): boolean {
  return meta?.[WAN_FEDERATION_META_KEY] === "1";
}
