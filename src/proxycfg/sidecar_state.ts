/**
 * The state machine of one connect-proxy sidecar (Consul 1.8 agent/proxycfg/state.go for
 * Kind "connect-proxy"), pure: typed events in, watch/cancel commands out, a readonly snapshot when valid.
 *
 * Watches: CA roots, the leaf of the destination service, intentions matching the destination, the
 * config entries its centralized configuration comes from (proxy-defaults "global", service-defaults of
 * the destination and of each service upstream); once those are all in, per upstream the compiled
 * discovery chain (or the prepared query's result), then per chain the health of every target in its
 * datacenter through its subset filter, and the mesh gateways of each datacenter a target is reached
 * through. After every event the wanted watches are recomputed from the registration and the values
 * held: a watch no longer wanted (an upstream or target gone, a request changed) is cancelled and its
 * value dropped, a new one is started; unchanged ones are kept (Consul 1.8 restarts every target watch
 * of an upstream whenever its chain changes; keeping the unchanged ones keeps their endpoints).
 *
 * Valid (Consul's ConfigSnapshot.Valid, with 1.9's IntentionsSet): roots, leaf and intentions present,
 * and the centralized configuration resolved (Consul resolves it before proxycfg sees the proxy).
 */
import type { ConnectProxyConfig, ExposePath } from "../model/index.ts";
import { WatchMachine } from "./reconcile.ts";
import { isServiceUpstream, mergeServiceConfig, resolveServiceConfig } from "./service_config.ts";
import { upstreamDatacenter, upstreamIdentifier, type SidecarSnapshot } from "./snapshot.ts";
import { watchIds, type ChainWatch, type WatchCommand, type WatchRequest, type WatchUpdate, type WatchValues } from "./watches.ts";

/**
 * The proxy service as registered in the agent (the parts a snapshot is made of); its Proxy block is the
 * registered one, before central config, and must name a DestinationServiceName.
 */
export type SidecarRegistration = Pick<SidecarSnapshot, "ProxyID" | "Service" | "Address" | "Port" | "TaggedAddresses" | "Proxy"> & {
  readonly Meta: Readonly<Record<string, string>>;
  /** Paths of the destination's HTTP/gRPC checks to expose (when Proxy.Expose.Checks); default none. */
  readonly ExposedCheckPaths?: readonly ExposePath[];
};

/** Facts of the agent every sidecar shares. */
export interface SidecarContext {
  readonly datacenter: string;
  readonly advertiseAddrLan: string;
  /** The decision when no intention matches (true while ACLs are off). */
  readonly intentionDefaultAllow: boolean;
}

/** What the machine hears: a watch's new value, or a changed registration of the same proxy ID. */
export type SidecarEvent = WatchUpdate | { readonly kind: "registration"; readonly registration: SidecarRegistration };

/** Consul's reducedUpstreamConfig: `protocol` and `connect_timeout_ms`, weakly typed. */
function reducedUpstreamConfig(cfg: Readonly<Record<string, unknown>> | undefined): { protocol: string; connectTimeoutMs: number } {
  const p = cfg?.["protocol"];
  const t = cfg?.["connect_timeout_ms"];
  const ms = typeof t === "number" ? t : typeof t === "string" && /^-?\d+$/.test(t.trim()) ? Number(t.trim()) : 0;
  return { protocol: typeof p === "string" ? p : typeof p === "number" ? String(p) : "", connectTimeoutMs: Number.isFinite(ms) && ms > 0 ? Math.trunc(ms) : 0 };
}

export class SidecarState extends WatchMachine<WatchRequest, WatchValues[keyof WatchValues], SidecarSnapshot, SidecarRegistration> {
  constructor(
    private readonly context: SidecarContext,
    registration: SidecarRegistration,
  ) {
    super(registration);
  }

  /** Applies one event; returns the watches to cancel (first) and to start. Stale updates change nothing. */
  handle(ev: SidecarEvent): WatchCommand[] {
    if (this.closed) return [];
    if (ev.kind === "registration") return this.replaceInput(ev.registration);
    if (!this.accept(ev.watchId, ev.kind, ev.value, ev.kind === "chain")) return [];
    return ev.kind === "config-entry" || ev.kind === "chain" ? this.reconcile() : [];
  }

  /** The value of watch `id` if it is held with exactly `request`. */
  private heldValue<K extends keyof WatchValues>(id: string, request: WatchRequest & { kind: K }): WatchValues[K] | undefined {
    return this.valueOfRequest<WatchValues[K]>(id, request);
  }

  private configRequests(): Map<string, WatchRequest & { kind: "config-entry" }> {
    const out = new Map<string, WatchRequest & { kind: "config-entry" }>();
    const add = (entryKind: "proxy-defaults" | "service-defaults", name: string) =>
      out.set(watchIds.configEntry(entryKind, name), { kind: "config-entry", entryKind, name });
    add("proxy-defaults", "global");
    add("service-defaults", this.input.Proxy.DestinationServiceName ?? "");
    for (const u of this.input.Proxy.Upstreams ?? []) if (isServiceUpstream(u)) add("service-defaults", u.DestinationName);
    return out;
  }

  /**
   * The Proxy block with the centralized configuration folded in, undefined until proxy-defaults and the
   * destination's service-defaults are in; and the service upstreams whose own service-defaults are not
   * in yet (they get no defaults and no watches until then, without holding up the others).
   */
  private effectiveProxy(): { readonly proxy: ConnectProxyConfig; readonly pending: ReadonlySet<string> } | undefined {
    const reqs = this.configRequests();
    const value = (id: string) => {
      const req = reqs.get(id);
      return req ? this.heldValue(id, req) : undefined;
    };
    const dest = this.input.Proxy.DestinationServiceName ?? "";
    const global = value(watchIds.configEntry("proxy-defaults", "global"));
    const service = value(watchIds.configEntry("service-defaults", dest));
    if (global === undefined || service === undefined) return undefined;
    const upstreamDefaults = new Map<string, WatchValues["config-entry"]>();
    const pending = new Set<string>();
    for (const u of this.input.Proxy.Upstreams ?? []) {
      if (!isServiceUpstream(u)) continue;
      const v = value(watchIds.configEntry("service-defaults", u.DestinationName));
      if (v === undefined) pending.add(u.DestinationName);
      else upstreamDefaults.set(u.DestinationName, v);
    }
    return { proxy: mergeServiceConfig(this.input.Proxy, resolveServiceConfig(global, service, upstreamDefaults)), pending };
  }

  /** Every watch wanted now, by ID. */
  protected desired(): Map<string, WatchRequest> {
    const dest = this.input.Proxy.DestinationServiceName ?? "";
    const d = new Map<string, WatchRequest>();
    d.set(watchIds.roots, { kind: "roots" });
    d.set(watchIds.leaf, { kind: "leaf", service: dest });
    d.set(watchIds.intentions, { kind: "intentions", service: dest });
    for (const [id, req] of this.configRequests()) d.set(id, req);
    const effective = this.effectiveProxy();
    if (!effective) return d;
    const { proxy, pending } = effective;
    const local = this.context.datacenter;
    for (const u of proxy.Upstreams ?? []) {
      if (isServiceUpstream(u) && pending.has(u.DestinationName)) continue;
      const id = upstreamIdentifier(u);
      const dc = upstreamDatacenter(u, local);
      if (u.DestinationType === "prepared_query") {
        d.set(watchIds.preparedQuery(id), { kind: "prepared-query", upstream: id, name: u.DestinationName, datacenter: dc });
        continue;
      }
      const cfg = reducedUpstreamConfig(u.Config);
      const chain: ChainWatch = {
        name: u.DestinationName,
        evaluateInDatacenter: dc,
        evaluateInNamespace: u.DestinationNamespace || "default",
        overrideMeshGatewayMode: u.MeshGateway?.Mode || proxy.MeshGateway.Mode || "",
        overrideProtocol: cfg.protocol,
        overrideConnectTimeoutMs: cfg.connectTimeoutMs,
      };
      const chainId = watchIds.chain(id);
      const chainReq: WatchRequest & { kind: "chain" } = { kind: "chain", upstream: id, chain };
      d.set(chainId, chainReq);
      const compiled = this.heldValue(chainId, chainReq);
      if (!compiled) continue;
      const gatewayDcs = new Set<string>();
      for (const tid of Object.keys(compiled.Targets).sort()) {
        const t = compiled.Targets[tid]!;
        d.set(watchIds.target(id, tid), { kind: "health", upstream: id, targetId: tid, service: t.Service, datacenter: t.Datacenter, filter: t.Subset.Filter ?? "" });
        // Endpoints come from the gateways, health still from the target's own instances.
        if (t.MeshGateway.Mode === "remote") gatewayDcs.add(t.Datacenter);
        else if (t.MeshGateway.Mode === "local") gatewayDcs.add(local);
      }
      for (const gdc of [...gatewayDcs].sort()) d.set(watchIds.meshGateway(id, gdc), { kind: "mesh-gateways", upstream: id, datacenter: gdc });
    }
    return d;
  }

  protected build(): SidecarSnapshot | undefined {
    const reg = this.input;
    const get = <K extends keyof WatchValues>(id: string, kind: K): WatchValues[K] | undefined => this.valueOfKind<WatchValues[K]>(id, kind);
    const roots = get(watchIds.roots, "roots");
    const leaf = get(watchIds.leaf, "leaf");
    const intentions = get(watchIds.intentions, "intentions");
    const proxy = this.effectiveProxy()?.proxy;
    if (!roots || !leaf || !intentions || !proxy) return undefined;
    const chains: Record<string, WatchValues["chain"]> = {};
    const upstreamEndpoints: Record<string, Record<string, WatchValues["health"]>> = {};
    const gatewayEndpoints: Record<string, Record<string, WatchValues["mesh-gateways"]>> = {};
    const queries: Record<string, WatchValues["prepared-query"]> = {};
    for (const id of [...this.held.keys()].sort()) {
      const req = this.held.get(id)!.request;
      if (!this.values.has(id)) continue;
      const v = this.values.get(id);
      switch (req.kind) {
        case "chain":
          chains[req.upstream] = v as WatchValues["chain"];
          break;
        case "health":
          (upstreamEndpoints[req.upstream] ??= {})[req.targetId] = v as WatchValues["health"];
          break;
        case "mesh-gateways":
          (gatewayEndpoints[req.upstream] ??= {})[req.datacenter] = v as WatchValues["mesh-gateways"];
          break;
        case "prepared-query":
          queries[req.upstream] = v as WatchValues["prepared-query"];
          break;
        default:
          break;
      }
    }
    return {
      Kind: "connect-proxy",
      ProxyID: reg.ProxyID,
      Service: reg.Service,
      Address: reg.Address,
      Port: reg.Port,
      ServiceMeta: reg.Meta,
      TaggedAddresses: reg.TaggedAddresses,
      Proxy: proxy,
      Datacenter: this.context.datacenter,
      AdvertiseAddrLAN: this.context.advertiseAddrLan,
      Roots: roots,
      ConnectProxy: {
        Leaf: leaf,
        Intentions: intentions,
        IntentionDefaultAllow: this.context.intentionDefaultAllow,
        DiscoveryChain: chains,
        WatchedUpstreamEndpoints: upstreamEndpoints,
        WatchedGatewayEndpoints: gatewayEndpoints,
        PreparedQueryEndpoints: queries,
        ExposedCheckPaths: reg.ExposedCheckPaths ?? [],
      },
    };
  }
}
