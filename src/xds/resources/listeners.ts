/**
 * Listeners of a connect-proxy sidecar (Consul 1.8 agent/xds/listeners.go, v3 shapes, RBAC authorization
 * as in 1.9): the public listener, one listener per upstream, and one per exposed path. Returned sorted
 * by name. Pure: the same snapshot always gives the same messages.
 */
import { create } from "@bufbuild/protobuf";
import { TrafficDirection } from "../../gen/envoy/config/core/v3/base_pb.ts";
import { ListenerSchema, type Listener } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { FilterChainMatchSchema, FilterChainSchema } from "../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import type { CompiledDiscoveryChain } from "../../connect/index.ts";
import type { ExposePath, Upstream } from "../../model/index.ts";
import { upstreamDatacenter, upstreamIdentifier, type SidecarSnapshot } from "../../proxycfg/index.ts";
import { parseProxyConfig, parseUpstreamConfig, withUpstreamDefaults, isHttpProtocol } from "./config.ts";
import { byName, customizeClusterName, isDefaultChain, LOCAL_APP_CLUSTER, PUBLIC_LISTENER, ResourceGenerationError, socketAddress } from "./common.ts";
import { listenerFromUserConfig } from "./escape_hatch.ts";
import { makeListenerFilter } from "./http_filter.ts";
import { createMemo } from "./memo.ts";
import { rbacHttpFilter, rbacNetworkFilter } from "./rbac.ts";
import { downstreamTlsSocket } from "./tls.ts";
import { exposeClusterName, exposedPaths, upstreamSni } from "./names.ts";

/** Listener names carry bind address and port so a change makes Envoy open a new listener (`makeListener`). */
function listener(name: string, address: string, port: number, direction: TrafficDirection): Listener {
  return create(ListenerSchema, { name: `${name}:${address}:${port}`, address: socketAddress(address, port), trafficDirection: direction });
}

/** All listeners of the sidecar, sorted by name. Throws ResourceGenerationError on a bad escape hatch. */
export function sidecarListeners(snap: SidecarSnapshot): Listener[] {
  const out = [publicListener(snap)];
  for (const u of snap.Proxy.Upstreams ?? []) out.push(upstreamListener(snap, u));
  for (const path of exposedPaths(snap)) out.push(exposedPathListener(snap, path));
  return byName(out, (l) => l.name);
}

/**
 * `public_listener:<addr>:<port>`: mTLS with client certificates required, authorization from intentions
 * (network RBAC first for tcp, HTTP RBAC before the router for http/http2/grpc), then local_app. An
 * `envoy_public_listener_json` escape hatch replaces it, but every filter chain still gets the network
 * RBAC filter first and the Connect TLS context (Consul's injectConnectFilters).
 * Memoized by input identity (./memo.ts): the listener is shared, never mutate it.
 */
export function publicListener(snap: SidecarSnapshot): Listener {
  const cp = snap.ConnectProxy;
  const key = JSON.stringify([snap.Proxy.Config ?? null, snap.Address, snap.Port, cp.IntentionDefaultAllow, snap.Roots.TrustDomain]);
  return publicListeners.get([cp.Leaf, snap.Roots.Roots, cp.Intentions], key, () => buildPublicListener(snap));
}

const publicListeners = createMemo<Listener>();

function buildPublicListener(snap: SidecarSnapshot): Listener {
  const { config: cfg } = parseProxyConfig(snap.Proxy.Config);
  const cp = snap.ConnectProxy;
  if (cfg.publicListenerJson !== "") {
    const l = listenerFromUserConfig("envoy_public_listener_json", cfg.publicListenerJson);
    for (const chain of l.filterChains) {
      chain.filters = [rbacNetworkFilter(cp.Intentions, cp.IntentionDefaultAllow), ...chain.filters];
      chain.transportSocket = downstreamTlsSocket(snap);
    }
    return l;
  }
  const address = cfg.bindAddress || snap.Address || "0.0.0.0";
  const port = cfg.bindPort || snap.Port;
  const l = listener(PUBLIC_LISTENER, address, port, TrafficDirection.INBOUND);
  const http = isHttpProtocol(cfg.protocol);
  const app = makeListenerFilter({
    useRds: false,
    protocol: cfg.protocol,
    filterName: PUBLIC_LISTENER,
    cluster: LOCAL_APP_CLUSTER,
    statPrefix: "",
    ...(http ? { httpAuthz: rbacHttpFilter(cp.Intentions, cp.IntentionDefaultAllow) } : {}),
  });
  const filters = http ? [app] : [rbacNetworkFilter(cp.Intentions, cp.IntentionDefaultAllow), app];
  l.filterChains = [create(FilterChainSchema, { filters, transportSocket: downstreamTlsSocket(snap) })];
  return l;
}

/**
 * `<upstreamID>:<bind addr>:<bind port>` (bind address default 127.0.0.1). A default chain (or a prepared
 * query) goes straight to its cluster; a tcp chain to its start resolver's cluster; an L7 chain through
 * RDS named after the upstream. `envoy_listener_json` replaces the listener for default chains only.
 * Memoized by input identity when the upstream has a chain (./memo.ts): never mutate the result.
 */
export function upstreamListener(snap: SidecarSnapshot, u: Upstream): Listener {
  const id = upstreamIdentifier(u);
  const chain = u.DestinationType === "prepared_query" ? undefined : snap.ConnectProxy.DiscoveryChain[id];
  if (!chain) return buildUpstreamListener(snap, u, id, chain);
  // Depends on the chain, the whole upstream, the trust domain (SNI) and the datacenter.
  const key = JSON.stringify([u, snap.Roots.TrustDomain, snap.Datacenter]);
  return upstreamListeners.get([chain], key, () => buildUpstreamListener(snap, u, id, chain));
}

const upstreamListeners = createMemo<Listener>();

function buildUpstreamListener(snap: SidecarSnapshot, u: Upstream, id: string, chain: CompiledDiscoveryChain | undefined): Listener {
  const parsed = parseUpstreamConfig(u.Config, id).config;
  const isDefault = chain === undefined || isDefaultChain(chain);
  if (isDefault && parsed.listenerJson !== "") return listenerFromUserConfig(`upstream ${id} envoy_listener_json`, parsed.listenerJson);
  // Consul merges the upstream service's protocol into the upstream's Config (service-defaults via the
  // agent's service manager); the chain's protocol stands in when that did not happen.
  const protocol = isDefault ? withUpstreamDefaults({ ...parsed, protocol: parsed.protocol || (chain?.Protocol ?? "") }).protocol : parsed.protocol || chain!.Protocol || "tcp";
  let useRds = true;
  let cluster = "";
  if (isDefault) {
    useRds = false;
    cluster = customizeClusterName(upstreamSni(snap, u, upstreamDatacenter(u, snap.Datacenter)), chain);
  } else if (!isHttpProtocol(protocol)) {
    const start = chain!.Nodes[chain!.StartNode];
    if (!start) throw new ResourceGenerationError(`missing first node in compiled discovery chain for: ${chain!.ServiceName}`);
    if (start.Type !== "resolver" || !start.Resolver) {
      throw new ResourceGenerationError(`unexpected first node in discovery chain using protocol="${protocol}": ${start.Type}`);
    }
    const target = chain!.Targets[start.Resolver.Target];
    if (!target) throw new ResourceGenerationError(`discovery chain for ${chain!.ServiceName} has no target ${start.Resolver.Target}`);
    useRds = false;
    cluster = customizeClusterName(target.Name, chain);
  }
  const l = listener(id, u.LocalBindAddress || "127.0.0.1", u.LocalBindPort, TrafficDirection.OUTBOUND);
  const filter = makeListenerFilter({ useRds, protocol, filterName: id, cluster, statPrefix: "upstream_" });
  l.filterChains = [create(FilterChainSchema, { filters: [filter] })];
  return l;
}

/**
 * `exposed_path_<path without punctuation>:<addr>:<listener port>`: plain HTTP (no mTLS) to one exact
 * path of the local app, for checks and metrics. Paths derived from checks accept only loopback and the
 * agent's LAN address (`makeExposedCheckListener`).
 */
export function exposedPathListener(snap: SidecarSnapshot, path: ExposePath): Listener {
  const { config: cfg } = parseProxyConfig(snap.Proxy.Config);
  const address = cfg.bindAddress || snap.Address || "0.0.0.0";
  const stripped = (path.Path ?? "").replace(/[^a-zA-Z0-9]+/g, "");
  const port = path.ListenerPort ?? 0;
  const l = listener(`exposed_path_${stripped}`, address, port, TrafficDirection.INBOUND);
  const localPort = path.LocalPathPort ?? 0;
  const cluster = localPort === (snap.Proxy.LocalServicePort ?? 0) ? LOCAL_APP_CLUSTER : exposeClusterName(localPort);
  const filter = makeListenerFilter({
    useRds: false,
    protocol: path.Protocol || "http",
    filterName: `exposed_path_filter_${stripped}_${port}`,
    cluster,
    statPrefix: "",
    routePath: path.Path ?? "",
  });
  const chain = create(FilterChainSchema, { filters: [filter] });
  if (path.ParsedFromCheck) {
    const advertise = snap.AdvertiseAddrLAN;
    chain.filterChainMatch = create(FilterChainMatchSchema, {
      sourcePrefixRanges: [
        { addressPrefix: "127.0.0.1", prefixLen: 8 },
        { addressPrefix: "::1", prefixLen: 128 },
        { addressPrefix: advertise, prefixLen: advertise.includes(":") ? 128 : 32 },
      ],
    });
  }
  l.filterChains = [chain];
  return l;
}
