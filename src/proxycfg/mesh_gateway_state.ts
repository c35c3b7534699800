/**
 * The state machine of one mesh gateway (Consul 1.8 agent/proxycfg/state.go for Kind "mesh-gateway"),
 * pure: typed events in, watch/cancel commands out, a readonly snapshot when valid.
 *
 * Watches: CA roots; proxy-defaults "global" and the gateway's service-defaults (central config reaches
 * gateways too: Consul's service manager resolves it for every proxy kind); the local catalog's service
 * list, and per listed service its Connect-capable instances; the local service-resolvers; the known
 * datacenters, and per other datacenter its mesh gateways from that datacenter's catalog. A service that
 * leaves the list, or a datacenter that leaves the datacenter list, has its watch cancelled and its
 * value dropped. (The federation issue adds the gateways from replicated federation states.)
 *
 * Valid (ConfigSnapshot.Valid for mesh gateways): roots present and the service list seen, and the
 * central config resolved.
 */
import type { ServiceResolverConfigEntry } from "../model/index.ts";
import type { MeshGatewaySnapshot } from "./mesh_gateway_snapshot.ts";
import {
  meshGatewayWatchIds as ids, type MeshGatewayCommand, type MeshGatewayEvent, type MeshGatewayRegistration, type MeshGatewayWatchRequest,
  type MeshGatewayWatchValues,
} from "./mesh_gateway_watches.ts";
import { WatchMachine } from "./reconcile.ts";
import { mergeServiceConfig, resolveServiceConfig } from "./service_config.ts";

/** Facts of the agent every gateway shares. */
export interface MeshGatewayContext {
  readonly datacenter: string;
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
    if (!this.accept(ev.watchId, ev.kind, ev.value)) return [];
    return ev.kind === "service-list" || ev.kind === "datacenters" ? this.reconcile() : [];
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
    return d;
  }

  protected build(): MeshGatewaySnapshot | undefined {
    const reg = this.input;
    const roots = this.get(ids.roots, "roots");
    const services = this.get(ids.serviceList, "service-list");
    const global = this.get(ids.configEntry("proxy-defaults", "global"), "config-entry");
    const own = this.get(ids.configEntry("service-defaults", reg.Service), "config-entry");
    if (!roots || !services || global === undefined || own === undefined) return undefined;
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
      Roots: roots,
      MeshGateway: {
        WatchedServices: [...services].sort(),
        ServiceGroups: groups,
        ServiceResolvers: resolvers,
        GatewayGroups: gateways,
        FedStateGateways: {},
      },
    };
  }
}
