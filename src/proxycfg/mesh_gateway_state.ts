/**
 * The state machine of one mesh gateway (Consul 1.8 agent/proxycfg/state.go for Kind "mesh-gateway"),
 * pure: typed events in, watch/cancel commands out, a readonly snapshot when valid.
 *
 * Watches: CA roots; proxy-defaults "global" and the gateway's service-defaults (central config reaches
 * gateways too: Consul's service manager resolves it for every proxy kind); the local catalog's service
 * list, and per listed service its Connect-capable instances; the local service-resolvers; the known
 * datacenters, and per other datacenter its mesh gateways from that datacenter's catalog. A service that
 * leaves the list, or a datacenter that leaves the datacenter list, has its watch cancelled and its
 * value dropped. A gateway registered with Meta `consul-wan-federation` = "1" (`-expose-servers`) also
 * watches the gateways of every datacenter in the replicated federation states (FedStateGateways) and
 * the local servers, service "consul" in any health (ConsulServers); a registration that drops the meta
 * cancels both.
 *
 * Valid (ConfigSnapshot.Valid for mesh gateways): roots present and the service list seen, and the
 * central config resolved; for a WAN federation gateway also at least one local server known (Consul:
 * `if ServiceMeta[MetaWANFederationKey] == "1" && len(ConsulServers) == 0 { return false }`).
 */
import { CONSUL_SERVICE, type CheckServiceNode, type ServiceResolverConfigEntry } from "../model/index.ts";
import type { MeshGatewaySnapshot } from "./mesh_gateway_snapshot.ts";
import {
  exposesServers, meshGatewayWatchIds as ids, type MeshGatewayCommand, type MeshGatewayEvent, type MeshGatewayRegistration, type MeshGatewayWatchRequest,
  type MeshGatewayWatchValues,
} from "./mesh_gateway_watches.ts";
import { WatchMachine } from "./reconcile.ts";
import { mergeServiceConfig, resolveServiceConfig } from "./service_config.ts";

/** Consul's default `domain`, which server names carry when the agent sets no other. */
export const DEFAULT_DOMAIN = "consul";

/** Facts of the agent every gateway shares. */
export interface MeshGatewayContext {
  readonly datacenter: string;
  /** The agent's DNS domain (`domain`, one trailing dot allowed); {@link DEFAULT_DOMAIN} when not given. */
  readonly domain?: string;
}

type Values = MeshGatewayWatchValues;

export class MeshGatewayState extends WatchMachine<MeshGatewayWatchRequest, Values[keyof Values], MeshGatewaySnapshot, MeshGatewayRegistration> {
  constructor(
    private readonly context: MeshGatewayContext,
    registration: MeshGatewayRegistration,
  ) {
    super(registration);
  }

  /** Applies one event; returns the watches to cancel (first) and to start. Updates of watches not held change nothing. */
  handle(ev: MeshGatewayEvent): MeshGatewayCommand[] {
    if (this.closed) return [];
    if (ev.kind === "registration") return this.replaceInput(ev.registration);
    if (ev.kind === "consul-servers" && !this.localServers(ev.value)) return [];
    if (!this.accept(ev.watchId, ev.kind, ev.value)) return [];
    return ev.kind === "service-list" || ev.kind === "datacenters" ? this.reconcile() : [];
  }

  /**
   * Consul's sanity check of a server list (handleUpdateMeshGateway, consulServerListWatchID): every
   * entry is service "consul" of this datacenter. A list that is not is refused whole (Consul returns
   * an error and keeps the snapshot as it was).
   */
  private localServers(nodes: readonly CheckServiceNode[]): boolean {
    return nodes.every((n) => n.Service.Service === CONSUL_SERVICE && n.Node.Datacenter === this.context.datacenter);
  }

  private get<K extends keyof Values>(id: string, kind: K): Values[K] | undefined {
    return this.valueOfKind<Values[K]>(id, kind);
  }

  protected desired(): Map<string, MeshGatewayWatchRequest> {
    const d = new Map<string, MeshGatewayWatchRequest>();
    d.set(ids.roots, { kind: "roots" });
    d.set(ids.configEntry("proxy-defaults", "global"), { kind: "config-entry", entryKind: "proxy-defaults", name: "global" });
    d.set(ids.configEntry("service-defaults", this.input.Service), { kind: "config-entry", entryKind: "service-defaults", name: this.input.Service });
    d.set(ids.serviceList, { kind: "service-list" });
    d.set(ids.datacenters, { kind: "datacenters" });
    d.set(ids.serviceResolvers, { kind: "service-resolvers" });
    for (const service of this.get(ids.serviceList, "service-list") ?? []) d.set(ids.connectService(service), { kind: "connect-service", service });
    for (const dc of this.get(ids.datacenters, "datacenters") ?? []) {
      if (dc !== this.context.datacenter) d.set(ids.meshGateway(dc), { kind: "mesh-gateways", datacenter: dc });
    }
    if (exposesServers(this.input.Meta)) {
      d.set(ids.federationGateways, { kind: "federation-gateways" });
      d.set(ids.consulServers, { kind: "consul-servers" });
    }
    return d;
  }

  protected build(): MeshGatewaySnapshot | undefined {
    const reg = this.input;
    const roots = this.get(ids.roots, "roots");
    const services = this.get(ids.serviceList, "service-list");
    const global = this.get(ids.configEntry("proxy-defaults", "global"), "config-entry");
    const own = this.get(ids.configEntry("service-defaults", reg.Service), "config-entry");
    if (!roots || !services || global === undefined || own === undefined) return undefined;
    // Only a WAN federation gateway holds these two watches (desired); without them they stay empty.
    const servers = this.get(ids.consulServers, "consul-servers") ?? [];
    if (exposesServers(reg.Meta) && servers.length === 0) return undefined;
    const groups: Record<string, Values["connect-service"]> = {};
    for (const service of services) {
      const instances = this.get(ids.connectService(service), "connect-service");
      if (instances && instances.length > 0) groups[service] = instances;
    }
    const resolvers: Record<string, ServiceResolverConfigEntry> = {};
    for (const e of this.get(ids.serviceResolvers, "service-resolvers") ?? []) if (e.Kind === "service-resolver") resolvers[e.Name] = e;
    const gateways: Record<string, Values["mesh-gateways"]> = {};
    for (const dc of this.get(ids.datacenters, "datacenters") ?? []) {
      const g = dc === this.context.datacenter ? undefined : this.get(ids.meshGateway(dc), "mesh-gateways");
      if (g && g.length > 0) gateways[dc] = g;
    }
    return {
      Kind: "mesh-gateway",
      ProxyID: reg.ProxyID,
      Service: reg.Service,
      Address: reg.Address,
      Port: reg.Port,
      ServiceMeta: reg.Meta,
      TaggedAddresses: reg.TaggedAddresses,
      Proxy: mergeServiceConfig(reg.Proxy, resolveServiceConfig(global, own, new Map())),
      Datacenter: this.context.datacenter,
      Domain: (this.context.domain ?? DEFAULT_DOMAIN).replace(/\.$/, ""),
      Roots: roots,
      MeshGateway: {
        WatchedServices: [...services].sort(),
        ServiceGroups: groups,
        ServiceResolvers: resolvers,
        GatewayGroups: gateways,
        FedStateGateways: this.get(ids.federationGateways, "federation-gateways") ?? {},
        ConsulServers: servers,
      },
    };
  }
}
